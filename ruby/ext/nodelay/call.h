/* One blocking ABI call run with the GVL released (call.c), and what the
 * extension's files share. */
#ifndef NODELAY_RB_CALL_H
#define NODELAY_RB_CALL_H

#include <ruby.h>

#include "nodelay.h"

/* The blocking ABI calls the extension makes. */
enum call_op {
    CALL_REQUEST,
    CALL_REQUEST_BODY,
    CALL_READ_INTO,
    CALL_READ,
    CALL_READ_CHUNK,
    CALL_REQUEST_MANY,
};

/* What CALL_REQUEST_BODY did with the body after the head arrived. */
enum body_state {
    BODY_UNREAD, /* nothing: too large for `dst`, or the request failed */
    BODY_INTO,   /* read into `dst` (`got` bytes, the announced length) */
    BODY_WHOLE,  /* read whole by the library (unknown length or coded) */
};

/* Arguments and results of one blocking call. Everything it points to is
 * kept alive (and unmoved) by VALUEs on the calling thread's stack. */
struct call {
    enum call_op op;
    const nodelay_client *client;
    const char *method;
    const char *url;
    const nodelay_header *headers;
    size_t n_headers;
    const uint8_t *body_ptr;
    size_t body_len;
    nodelay_response *response;
    uint8_t *dst;
    size_t len;
    size_t got;
    enum body_state body;
    /* CALL_REQUEST_MANY: the requests, the concurrency (0: the default),
     * the deadline (seconds, negative: none) and the outcomes. */
    const nodelay_batch_request *requests;
    size_t n_requests;
    size_t concurrency;
    double deadline;
    nodelay_batch *batch;
    nodelay_code code;
    /* The Strings whose bytes the engine reads during the call, pinned by
     * being held where the GC marks conservatively (client.c, fill_headers);
     * kept here so that no store into them is optimised away. */
    const VALUE *pinned;
    /* Set by the unblocking function (another thread) or by the abort
     * callback when it saw the thread's own pending interrupts; read by the
     * abort callback (this call's thread). */
    int interrupted;
    /* The calling Ruby thread, whose pending interrupts the abort callback
     * reads (it is running this call, so it stays alive). */
    VALUE thread;
    /* Whether the call ran (it does not when an interrupt was pending). */
    int ran;
};

/* Runs `call` without the GVL; Thread#raise, Timeout and Ctrl-C stop it
 * (NODELAY_E_INTERRUPTED). The code is in call->code. */
void nodelay_rb_call(struct call *call);

/* Raises the pending Ruby interrupt when `call` was interrupted by one, else
 * the Nodelay::Error subclass of its code (with the ABI's message). */
NORETURN(void nodelay_rb_raise(const struct call *call));

extern VALUE nodelay_rb_module;

void nodelay_rb_init_client(void);
void nodelay_rb_init_response(void);
void nodelay_rb_init_form(void);
void nodelay_rb_init_json(void);

/* A response object for an ABI response (owned by it from now on). */
VALUE nodelay_rb_response_new(nodelay_response *response, VALUE client);
/* Reads the whole body into a new String kept by the response object. */
void nodelay_rb_response_read_body(VALUE self);
/* Sets the body of a response whose body `call` (CALL_REQUEST_BODY) read:
 * from `call->dst` (BODY_INTO) or from the library (BODY_WHOLE). */
void nodelay_rb_response_take_body(VALUE self, const struct call *call);
/* Streams the body to the block, in new Strings or, when `buffer` is a
 * String, read into it in place each time; frees the ABI response early on
 * a raise or break out of the block. */
void nodelay_rb_response_stream(VALUE self, VALUE buffer);
/* Makes `buffer` an empty, writable, binary String with room for a piece:
 * raises FrozenError when it is frozen. */
void nodelay_rb_stream_buffer_prepare(VALUE buffer);

#endif
