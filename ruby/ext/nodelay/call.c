/* Blocking ABI calls with the GVL released. While one waits, other Ruby
 * threads run; an interrupt of the waiting thread (Thread#raise,
 * Timeout.timeout, a signal handled by the main thread) calls `unblock` on
 * another thread, which sets a flag the engine's abort callback answers: the
 * engine polls it after EINTR and at its signal-check interval (50 ms), so
 * the call returns NODELAY_E_INTERRUPTED and the exception is raised by the
 * caller once it freed what the call made, never from inside the library. */
#include <ruby/thread.h>

#include "call.h"

static int32_t should_abort(void *ctx) {
    return __atomic_load_n(&((struct call *)ctx)->interrupted, __ATOMIC_ACQUIRE);
}

static void unblock(void *ctx) {
    __atomic_store_n(&((struct call *)ctx)->interrupted, 1, __ATOMIC_RELEASE);
}

static void *run(void *arg) {
    struct call *c = arg;
    c->ran = 1;
    switch (c->op) {
    case CALL_REQUEST:
        c->code = nodelay_request(c->client, c->method, c->url, c->headers, c->n_headers,
                                  c->body, c->body_len, should_abort, c, &c->response);
        break;
    case CALL_READ_INTO:
        c->code = nodelay_response_read_into(c->response, c->dst, c->len, should_abort, c);
        break;
    case CALL_READ:
        c->code = nodelay_response_read(c->response, should_abort, c);
        break;
    case CALL_READ_CHUNK:
        c->code = nodelay_response_read_chunk(c->response, c->dst, c->len, &c->got,
                                              should_abort, c);
        break;
    }
    return NULL;
}

/* rb_thread_call_without_gvl2, not ..._gvl: it never raises by itself. The
 * plain one checks interrupts after the call returned, which would raise
 * with a response just received not yet owned by any Ruby object (leaking
 * it and its connection); here the caller first takes ownership or frees,
 * then raises. An interrupt already pending means `run` did not run: it is
 * handled (raising, usually) and the call tried again. */
void nodelay_rb_call(struct call *call) {
    call->code = NODELAY_OK;
    do {
        call->ran = 0;
        call->interrupted = 0;
        rb_thread_call_without_gvl2(run, call, unblock, call);
        if (!call->ran) rb_thread_check_ints();
    } while (!call->ran);
}

void nodelay_rb_raise(const struct call *call) {
    /* The message first: anything below may fail another ABI call. */
    VALUE message = rb_str_new_cstr(nodelay_last_error());
    if (call->code == NODELAY_E_INTERRUPTED && call->interrupted) {
        /* Raises the exception that interrupted us (Thread#raise's, Timeout's,
         * Interrupt for Ctrl-C); returns when there is none left to run. */
        rb_thread_check_ints();
    }
    rb_funcall(nodelay_rb_module, rb_intern("raise_code"), 2, UINT2NUM(call->code), message);
    UNREACHABLE;
}
