/* Blocking ABI calls with the GVL released. While one waits, other Ruby
 * threads run; an interrupt of the waiting thread (Thread#raise,
 * Timeout.timeout, a signal handled by the main thread) calls `unblock`,
 * which sets a flag the engine's abort callback answers: the engine asks it
 * after EINTR and at its signal-check interval (50 ms), so the call returns
 * NODELAY_E_INTERRUPTED and the exception is raised by the caller once it
 * freed what the call made, never from inside the library.
 *
 * The callback also reads the thread's own pending interrupts
 * (rb_thread_interrupted, a read of the thread's interrupt flags, which Ruby
 * documents for use by the thread itself), because Ruby does not always call
 * `unblock`: with more than one thread, a signal reaches the main thread's
 * unblocking function only through a thread that holds, waits for or sleeps
 * without the GVL, and when every other thread waits in a call like this one
 * none does. The flag is set by the signal handler itself, so the main
 * thread still stops within one check interval. */
#include <ruby/thread.h>

#include "call.h"

static int32_t should_abort(void *ctx) {
    struct call *c = ctx;
    if (!__atomic_load_n(&c->interrupted, __ATOMIC_ACQUIRE) && !rb_thread_interrupted(c->thread))
        return 0;
    __atomic_store_n(&c->interrupted, 1, __ATOMIC_RELEASE);
    return 1;
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
                                  c->body_ptr, c->body_len, should_abort, c, &c->response);
        break;
    case CALL_REQUEST_BODY:
        /* The head and, when it is small or of unknown length, the body in
         * the same release of the GVL: one round trip through the
         * scheduler per request instead of two. */
        c->body = BODY_UNREAD;
        c->code = nodelay_request(c->client, c->method, c->url, c->headers, c->n_headers,
                                  c->body_ptr, c->body_len, should_abort, c, &c->response);
        if (c->code != NODELAY_OK) break;
        int64_t len = nodelay_response_body_length(c->response);
        if (len >= 0 && (uint64_t)len <= c->len) {
            c->code = nodelay_response_read_into(c->response, c->dst, (size_t)len, should_abort, c);
            c->got = (size_t)len;
            c->body = BODY_INTO;
        } else if (len < 0) {
            c->code = nodelay_response_read(c->response, should_abort, c);
            c->body = BODY_WHOLE;
        }
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
    case CALL_REQUEST_MANY:
        c->code = nodelay_request_many(c->client, c->requests, c->n_requests, c->concurrency,
                                       c->deadline, should_abort, c, &c->batch);
        break;
    }
    return NULL;
}

/* RB_NOGVL_INTR_FAIL (what rb_thread_call_without_gvl2 passes): rb_nogvl
 * never raises by itself. Without it interrupts are checked after the call
 * returned, which would raise with a response just received not yet owned
 * by any Ruby object (leaking it and its connection); here the caller first
 * takes ownership or frees, then raises. An interrupt already pending means
 * `run` did not run: it is handled (raising, usually) and the call tried
 * again.
 * RB_NOGVL_UBF_ASYNC_SAFE: `unblock` is one atomic store, safe in a signal
 * handler. Without the flag, a call from the main thread while it is the
 * only thread makes Ruby start a helper Thread (to run the unblocking
 * function when a signal arrives) and kill and join it afterwards: that
 * Thread's start and end cost more CPU than the request itself. */
#define NOGVL_FLAGS (RB_NOGVL_INTR_FAIL | RB_NOGVL_UBF_ASYNC_SAFE)

void nodelay_rb_call(struct call *call) {
    call->code = NODELAY_OK;
    call->thread = rb_thread_current();
    do {
        call->ran = 0;
        call->interrupted = 0;
        rb_nogvl(run, call, unblock, call, NOGVL_FLAGS);
        if (!call->ran) rb_thread_check_ints();
    } while (!call->ran);
}

/* Nodelay::Interrupted's message when the interrupt raised nothing: a
 * signal Ruby handled by itself, or an exception Thread.handle_interrupt
 * holds back until its block ends. */
#define NONRAISING_INTERRUPT_MESSAGE                                                           \
    "interrupted by a signal that Ruby handled without raising (a child process that ended, " \
    "a trap block that returned) or by an exception that Thread.handle_interrupt defers: "    \
    "the request was abandoned"

void nodelay_rb_raise(const struct call *call) {
    /* The message first: anything below may fail another ABI call. */
    VALUE message = rb_str_new_cstr(nodelay_last_error());
    if (call->code == NODELAY_E_INTERRUPTED && call->interrupted) {
        /* Raises the exception that interrupted us (Thread#raise's, Timeout's,
         * Interrupt for Ctrl-C); returns when there is none left to run. */
        rb_thread_check_ints();
        /* Nothing raised: the request was abandoned for an interrupt that
         * raises nothing here (docs/ruby.md, "The GVL and interrupts"). */
        message = rb_str_new_cstr(NONRAISING_INTERRUPT_MESSAGE);
    }
    rb_funcall(nodelay_rb_module, rb_intern("raise_code"), 2, UINT2NUM(call->code), message);
    UNREACHABLE;
}
