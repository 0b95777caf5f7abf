/* Nodelay::Response: the ABI response (head looked up lazily, in the
 * received bytes) and its body as a Ruby String. */
#include <ruby/encoding.h>

#include "call.h"

/* Bytes asked of the library per piece when streaming: big reads keep the
 * CPU per byte low (the 64 KiB+ reads rule). */
#define STREAM_PIECE_BYTES (64 * 1024)
/* A piece smaller than this is copied into a String of its own size, and
 * the 64 KiB buffer is reused, so a trickling body (server-sent events)
 * does not leave 64 KiB per piece with the caller. */
#define STREAM_COPY_BELOW_BYTES (STREAM_PIECE_BYTES / 4)

static VALUE response_class;

struct response {
    nodelay_response *response; /* NULL once freed early (a failed stream) */
    VALUE body;                 /* the body String, or nil */
    VALUE client;               /* keeps the client alive while this lives */
};

static void response_mark(void *ptr) {
    struct response *r = ptr;
    rb_gc_mark_movable(r->body);
    rb_gc_mark_movable(r->client);
}

static void response_compact(void *ptr) {
    struct response *r = ptr;
    r->body = rb_gc_location(r->body);
    r->client = rb_gc_location(r->client);
}

static void response_free(void *ptr) {
    struct response *r = ptr;
    nodelay_response_free(r->response);
    xfree(r);
}

static size_t response_size(const void *ptr) {
    (void)ptr;
    return sizeof(struct response);
}

static const rb_data_type_t response_type = {
    "nodelay_response",
    {response_mark, response_free, response_size, response_compact, {NULL}},
    NULL, NULL, RUBY_TYPED_FREE_IMMEDIATELY,
};

static struct response *get(VALUE self) {
    struct response *r = rb_check_typeddata(self, &response_type);
    if (!r->response) rb_raise(rb_eRuntimeError, "this response's body stream failed");
    return r;
}

VALUE nodelay_rb_response_new(nodelay_response *response, VALUE client) {
    struct response *r;
    VALUE self = TypedData_Make_Struct(response_class, struct response, &response_type, r);
    r->response = response;
    r->body = Qnil;
    r->client = client;
    return self;
}

/* Frees the ABI response now (its connection is closed) after a failure. */
static void drop(struct response *r) {
    nodelay_response *response = r->response;
    r->response = NULL;
    nodelay_response_free(response);
}

void nodelay_rb_response_read_body(VALUE self) {
    struct response *r = get(self);
    struct call call = {0};
    call.response = r->response;
    int64_t len = nodelay_response_body_length(r->response);
    VALUE body;
    if (len >= 0) {
        /* Read in place into the String's own buffer. The String is only on
         * this stack while the GVL is released, which pins it (GC.compact
         * does not move what a machine stack refers to). */
        body = rb_str_buf_new((long)len);
        call.op = CALL_READ_INTO;
        call.dst = (uint8_t *)RSTRING_PTR(body);
        call.len = (size_t)len;
        nodelay_rb_call(&call);
        if (call.code == NODELAY_OK) rb_str_set_len(body, (long)len);
    } else {
        call.op = CALL_READ;
        nodelay_rb_call(&call);
        size_t n = 0;
        const uint8_t *bytes = nodelay_response_body(r->response, &n);
        body = call.code == NODELAY_OK ? rb_str_new((const char *)bytes, (long)n) : Qnil;
    }
    RB_GC_GUARD(body);
    if (call.code != NODELAY_OK) {
        drop(r);
        nodelay_rb_raise(&call);
    }
    r->body = body;
}

void nodelay_rb_response_take_body(VALUE self, const struct call *call) {
    struct response *r = get(self);
    if (call->code != NODELAY_OK) {
        drop(r);
        nodelay_rb_raise(call);
    }
    if (call->body == BODY_INTO) {
        r->body = rb_str_new((const char *)call->dst, (long)call->got);
    } else {
        size_t n = 0;
        const uint8_t *bytes = nodelay_response_body(r->response, &n);
        r->body = rb_str_new((const char *)bytes, (long)n);
    }
}

struct stream {
    VALUE self;
    struct response *r;
    VALUE buffer; /* the caller's String every piece is read into, or nil */
    int finished;
};

void nodelay_rb_stream_buffer_prepare(VALUE buffer) {
    /* Raises FrozenError when frozen (or RuntimeError when another read
     * holds its temporary lock); makes it independent of any String it
     * shared its bytes with. */
    rb_str_modify(buffer);
    rb_str_set_len(buffer, 0);
    /* A capacity already there is kept (the block may have shrunk it). */
    if (rb_str_capacity(buffer) < STREAM_PIECE_BYTES)
        rb_str_modify_expand(buffer, STREAM_PIECE_BYTES);
    if (ENCODING_GET(buffer) != rb_ascii8bit_encindex())
        rb_enc_associate_index(buffer, rb_ascii8bit_encindex());
}

static VALUE read_piece(VALUE arg) {
    nodelay_rb_call((struct call *)arg);
    return Qnil;
}

static VALUE unlock_buffer(VALUE buffer) { return rb_str_unlocktmp(buffer); }

/* Reads the next piece into `buf` (room for STREAM_PIECE_BYTES) without the
 * GVL: its size, 0 at the end of the body. A caller's String (`locked`) is
 * locked meanwhile (rb_str_locktmp, as IO#readpartial does with its
 * buffer): another thread changing it gets a RuntimeError instead of moving
 * the bytes the engine writes into. */
static size_t read_piece_into(struct call *call, VALUE buf, int locked) {
    call->dst = (uint8_t *)RSTRING_PTR(buf);
    call->len = STREAM_PIECE_BYTES;
    call->got = 0;
    if (locked) {
        rb_str_locktmp(buf);
        rb_ensure(read_piece, (VALUE)call, unlock_buffer, buf);
    } else {
        nodelay_rb_call(call);
    }
    if (call->code != NODELAY_OK) nodelay_rb_raise(call); /* the stream's ensure frees */
    return call->got;
}

/* The pieces given to the block: with a caller's String (`s->buffer`), that
 * String each time, read into in place; it is pinned by this frame's stack,
 * and between pieces the block may do anything to it: it is made writable,
 * binary and 64 KiB large again before each read, or FrozenError is raised.
 * Without one, new Strings: a small piece is copied out of a reused buffer,
 * a large one is that buffer itself, and a new buffer takes its place. */
static VALUE stream_pieces(VALUE arg) {
    struct stream *s = (struct stream *)arg;
    int into = !NIL_P(s->buffer);
    struct call call = {0};
    call.op = CALL_READ_CHUNK;
    call.response = s->r->response;
    VALUE buf = into ? s->buffer : rb_str_buf_new(STREAM_PIECE_BYTES);
    for (;;) {
        if (into) nodelay_rb_stream_buffer_prepare(buf);
        size_t got = read_piece_into(&call, buf, into);
        if (got == 0) break;
        VALUE piece;
        if (!into && got < STREAM_COPY_BELOW_BYTES) {
            piece = rb_str_new(RSTRING_PTR(buf), (long)got);
        } else {
            rb_str_set_len(buf, (long)got);
            piece = buf;
            if (!into) buf = rb_str_buf_new(STREAM_PIECE_BYTES);
        }
        rb_yield(piece);
    }
    RB_GC_GUARD(buf);
    s->finished = 1;
    return Qnil;
}

/* A raise (ours, the block's, an interrupt's) or a break out of the block:
 * the connection is closed now rather than at the next GC. */
static VALUE stream_ensure(VALUE arg) {
    struct stream *s = (struct stream *)arg;
    if (!s->finished) drop(s->r);
    return Qnil;
}

void nodelay_rb_response_stream(VALUE self, VALUE buffer) {
    struct stream s = {self, get(self), buffer, 0};
    rb_ensure(stream_pieces, (VALUE)&s, stream_ensure, (VALUE)&s);
    RB_GC_GUARD(self);
    RB_GC_GUARD(buffer);
}

static VALUE response_status(VALUE self) {
    return UINT2NUM(nodelay_response_status(get(self)->response));
}

static VALUE response_version(VALUE self) {
    return rb_str_new_cstr(nodelay_response_version(get(self)->response));
}

static VALUE response_reason(VALUE self) {
    size_t len = 0;
    const uint8_t *reason = nodelay_response_reason(get(self)->response, &len);
    return rb_str_new((const char *)reason, (long)len);
}

static VALUE response_body(VALUE self) {
    return rb_check_typeddata(self, &response_type) ? ((struct response *)DATA_PTR(self))->body
                                                    : Qnil;
}

/* header_values(name): every value of a header, in received order. */
static VALUE response_header_values(VALUE self, VALUE name) {
    nodelay_response *response = get(self)->response;
    name = rb_String(name);
    VALUE values = rb_ary_new();
    const uint8_t *value = NULL;
    size_t len = 0;
    for (size_t nth = 0; nodelay_response_header(response, RSTRING_PTR(name),
                                                 (size_t)RSTRING_LEN(name), nth, &value, &len);
         nth++)
        rb_ary_push(values, rb_str_new((const char *)value, (long)len));
    RB_GC_GUARD(name);
    return values;
}

/* [name]: the first value of a header (ASCII case-insensitive), or nil. */
static VALUE response_aref(VALUE self, VALUE name) {
    nodelay_response *response = get(self)->response;
    name = rb_String(name);
    const uint8_t *value = NULL;
    size_t len = 0;
    int found = nodelay_response_header(response, RSTRING_PTR(name), (size_t)RSTRING_LEN(name), 0,
                                        &value, &len);
    RB_GC_GUARD(name);
    return found ? rb_str_new((const char *)value, (long)len) : Qnil;
}

/* decoded?: whether the engine undid the body's content codings (its
 * Content-Encoding and Content-Length then describe bytes the caller never
 * sees). */
static VALUE response_decoded_p(VALUE self) {
    return nodelay_response_decoded(get(self)->response) ? Qtrue : Qfalse;
}

/* header_fields: [[name, value], ...] as received (names spelt as sent). */
static VALUE response_header_fields(VALUE self) {
    nodelay_response *response = get(self)->response;
    size_t count = nodelay_response_header_count(response);
    VALUE fields = rb_ary_new_capa((long)count);
    for (size_t i = 0; i < count; i++) {
        const uint8_t *name = NULL, *value = NULL;
        size_t name_len = 0, value_len = 0;
        if (!nodelay_response_header_at(response, i, &name, &name_len, &value, &value_len)) break;
        rb_ary_push(fields, rb_assoc_new(rb_str_new((const char *)name, (long)name_len),
                                         rb_str_new((const char *)value, (long)value_len)));
    }
    return fields;
}

void nodelay_rb_init_response(void) {
    response_class = rb_define_class_under(nodelay_rb_module, "Response", rb_cObject);
    rb_undef_alloc_func(response_class);
    rb_define_method(response_class, "status", response_status, 0);
    rb_define_method(response_class, "version", response_version, 0);
    rb_define_method(response_class, "reason", response_reason, 0);
    rb_define_method(response_class, "body", response_body, 0);
    rb_define_method(response_class, "[]", response_aref, 1);
    rb_define_method(response_class, "header_values", response_header_values, 1);
    rb_define_method(response_class, "header_fields", response_header_fields, 0);
    rb_define_method(response_class, "decoded?", response_decoded_p, 0);
}
