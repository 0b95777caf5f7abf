/* Nodelay::Native: an ABI client (pool, TLS, timeouts, cookie jar) and the
 * request calls Nodelay::Client (lib/nodelay/client.rb) makes on it. Ruby
 * values are turned into the ABI's borrowed pointers here; nothing else. */
#include "call.h"

static VALUE native_class;

static void client_free(void *ptr) { nodelay_client_free(ptr); }

static size_t client_size(const void *ptr) {
    (void)ptr;
    return sizeof(void *);
}

static const rb_data_type_t client_type = {
    "nodelay_client",
    {NULL, client_free, client_size, NULL, {NULL}},
    NULL, NULL, RUBY_TYPED_FREE_IMMEDIATELY,
};

static nodelay_client *client_of(VALUE self) {
    nodelay_client *client = rb_check_typeddata(self, &client_type);
    if (!client) rb_raise(rb_eRuntimeError, "Nodelay::Native is not initialized");
    return client;
}

static VALUE client_alloc(VALUE klass) {
    return TypedData_Wrap_Struct(klass, &client_type, NULL);
}

static VALUE option(VALUE opts, const char *name) {
    return rb_hash_aref(opts, ID2SYM(rb_intern(name)));
}

static void seconds(VALUE opts, const char *name, double *field) {
    VALUE v = option(opts, name);
    if (!NIL_P(v)) *field = NUM2DBL(v);
}

static const char *text(VALUE opts, const char *name) {
    VALUE v = option(opts, name);
    return NIL_P(v) ? NULL : StringValueCStr(v);
}

/* Native.new(opts): opts is the Hash lib/nodelay/client.rb builds (every
 * key optional): *_timeout (seconds, negative: none), verify, ca_file,
 * proxy, no_proxy, http2 (0/1/2), user_agent, accept_encoding, cookies,
 * cookie_file, cookie_autosave, max_connections, max_connections_per_host,
 * rate_per_second, rate_burst, rate_per_host. */
static VALUE client_initialize(VALUE self, VALUE opts) {
    Check_Type(opts, T_HASH);
    if (DATA_PTR(self)) rb_raise(rb_eRuntimeError, "Nodelay::Native is already initialized");
    nodelay_options o;
    nodelay_options_init(&o);
    seconds(opts, "connect_timeout", &o.connect_timeout);
    seconds(opts, "read_timeout", &o.read_timeout);
    seconds(opts, "write_timeout", &o.write_timeout);
    seconds(opts, "pool_timeout", &o.pool_timeout);
    seconds(opts, "total_timeout", &o.total_timeout);
    VALUE v;
    if (!NIL_P(v = option(opts, "verify"))) o.verify = RTEST(v);
    if (!NIL_P(v = option(opts, "http2"))) o.http2 = NUM2UINT(v);
    if (!NIL_P(v = option(opts, "cookies"))) o.cookies = RTEST(v);
    if (!NIL_P(v = option(opts, "cookie_autosave"))) o.cookie_autosave = RTEST(v);
    if (!NIL_P(v = option(opts, "max_connections"))) o.max_connections = NUM2UINT(v);
    if (!NIL_P(v = option(opts, "max_connections_per_host"))) o.max_connections_per_host = NUM2UINT(v);
    if (!NIL_P(v = option(opts, "rate_per_second"))) o.rate_per_second = NUM2DBL(v);
    if (!NIL_P(v = option(opts, "rate_burst"))) o.rate_burst = NUM2UINT(v);
    if (!NIL_P(v = option(opts, "rate_per_host"))) o.rate_per_host = RTEST(v);
    o.ca_file = text(opts, "ca_file");
    o.proxy = text(opts, "proxy");
    o.no_proxy = text(opts, "no_proxy");
    o.user_agent = text(opts, "user_agent");
    o.accept_encoding = text(opts, "accept_encoding");
    o.cookie_file = text(opts, "cookie_file");
    nodelay_client *client = NULL;
    struct call call = {0};
    call.code = nodelay_client_new(&o, &client);
    if (call.code != NODELAY_OK) nodelay_rb_raise(&call);
    DATA_PTR(self) = client;
    RB_GC_GUARD(opts);
    return self;
}

/* The number of header pairs in a flat Array [name, value, ...] (or nil). */
static size_t header_count(VALUE flat) {
    if (NIL_P(flat)) return 0;
    Check_Type(flat, T_ARRAY);
    if (RARRAY_LEN(flat) % 2) rb_raise(rb_eArgError, "headers: a flat array of name, value pairs");
    return (size_t)RARRAY_LEN(flat) / 2;
}

/* A String of `flat` whose bytes no other thread can change while the GVL
 * is released: the element itself when `flat` is frozen and it is a frozen
 * String (what Nodelay::Client builds once per client), else a frozen copy
 * (shared with the caller's String when it is not frozen), which is pushed
 * to `*keep` (made when first needed) to live until the call returns. */
static VALUE header_string(VALUE flat, long i, VALUE *keep) {
    VALUE v = RARRAY_AREF(flat, i);
    if (OBJ_FROZEN(flat) && RB_TYPE_P(v, T_STRING) && OBJ_FROZEN(v)) return v;
    v = rb_str_new_frozen(StringValue(v));
    if (NIL_P(*keep)) *keep = rb_ary_new_capa(RARRAY_LEN(flat));
    rb_ary_push(*keep, v);
    return v;
}

/* Fills `headers` (room for header_count(flat)) from the Strings of `flat`;
 * returns what holds the copies made (nil when none was needed). */
static VALUE fill_headers(VALUE flat, nodelay_header *headers, size_t n) {
    VALUE keep = Qnil;
    for (size_t i = 0; i < n; i++) {
        VALUE name = header_string(flat, 2 * (long)i, &keep);
        VALUE value = header_string(flat, 2 * (long)i + 1, &keep);
        headers[i] = (nodelay_header){RSTRING_PTR(name), (size_t)RSTRING_LEN(name),
                                      RSTRING_PTR(value), (size_t)RSTRING_LEN(value)};
    }
    return keep;
}

/* A body of at most this many bytes (announced, not coded) is read into a
 * buffer on the stack in the same GVL release as the head, then copied into
 * its String: the copy costs less than a second release. Larger ones are
 * read in place into their String, in a second release. 32 KiB (workload b's
 * 16 KiB JSON with room) keeps the
 * frame small enough for a Fiber's machine stack (512 KiB by default). */
#define INLINE_BODY_BYTES (32 * 1024)

/* Sends the request and wraps its response: head read, and the body too
 * when `inline_body` (INLINE_BODY_BYTES) is given and the body fits it or
 * has no announced length (call->body says which). */
static VALUE send_request(VALUE self, VALUE method, VALUE url, VALUE headers, VALUE body,
                          struct call *out, uint8_t *inline_body) {
    struct call call = {0};
    call.op = inline_body ? CALL_REQUEST_BODY : CALL_REQUEST;
    call.dst = inline_body;
    call.len = inline_body ? INLINE_BODY_BYTES : 0;
    call.client = client_of(self);
    call.method = StringValueCStr(method);
    url = rb_str_new_frozen(StringValue(url));
    call.url = StringValueCStr(url);
    VALUE buf = 0;
    /* On this frame's stack (or heap when large) for the call's duration. */
    call.n_headers = header_count(headers);
    nodelay_header *fields = ALLOCV_N(nodelay_header, buf, call.n_headers);
    VALUE keep = fill_headers(headers, fields, call.n_headers);
    call.headers = fields;
    if (!NIL_P(body)) {
        body = rb_str_new_frozen(StringValue(body));
        call.body_ptr = (const uint8_t *)RSTRING_PTR(body);
        call.body_len = (size_t)RSTRING_LEN(body);
    }
    nodelay_rb_call(&call);
    if (buf) ALLOCV_END(buf);
    RB_GC_GUARD(keep);
    RB_GC_GUARD(headers);
    RB_GC_GUARD(body);
    RB_GC_GUARD(url);
    RB_GC_GUARD(method);
    *out = call;
    if (!call.response) nodelay_rb_raise(&call);
    /* Owned by a Ruby object before anything can raise. */
    return nodelay_rb_response_new(call.response, self);
}

/* request(method, url, headers, body): a Nodelay::Response, body read. */
static VALUE client_request(VALUE self, VALUE method, VALUE url, VALUE headers, VALUE body) {
    uint8_t inline_body[INLINE_BODY_BYTES];
    struct call call;
    VALUE response = send_request(self, method, url, headers, body, &call, inline_body);
    if (call.body == BODY_UNREAD)
        nodelay_rb_response_read_body(response);
    else
        nodelay_rb_response_take_body(response, &call);
    return response;
}

/* stream(method, url, headers, body, buffer) { |chunk| }: the response,
 * its body given to the block piece by piece (and not kept): new Strings
 * when `buffer` is nil, else that String each time, each piece read into
 * it in place. A buffer that cannot be written raises before the request
 * is sent. */
static VALUE client_stream(VALUE self, VALUE method, VALUE url, VALUE headers, VALUE body,
                           VALUE buffer) {
    rb_need_block();
    if (!NIL_P(buffer)) {
        Check_Type(buffer, T_STRING);
        nodelay_rb_stream_buffer_prepare(buffer);
    }
    struct call call;
    VALUE response = send_request(self, method, url, headers, body, &call, NULL);
    nodelay_rb_response_stream(response, buffer);
    RB_GC_GUARD(buffer);
    return response;
}

/* Writes the cookie jar to its file now. */
static VALUE client_save_cookies(VALUE self) {
    struct call call = {0};
    call.code = nodelay_client_save_cookies(client_of(self));
    if (call.code != NODELAY_OK) nodelay_rb_raise(&call);
    return Qnil;
}

/* Closes the connections and frees the client now (saving an autosaved
 * jar); the object is unusable afterwards. */
static VALUE client_close(VALUE self) {
    nodelay_client *client = rb_check_typeddata(self, &client_type);
    DATA_PTR(self) = NULL;
    nodelay_client_free(client);
    return Qnil;
}

void nodelay_rb_init_client(void) {
    native_class = rb_define_class_under(nodelay_rb_module, "Native", rb_cObject);
    rb_define_alloc_func(native_class, client_alloc);
    /* What a client sends as Accept-Encoding unless told otherwise. */
    rb_define_const(native_class, "DEFAULT_ACCEPT_ENCODING",
                    rb_obj_freeze(rb_str_new_cstr(nodelay_default_accept_encoding())));
    rb_define_method(native_class, "initialize", client_initialize, 1);
    rb_define_method(native_class, "request", client_request, 4);
    rb_define_method(native_class, "stream", client_stream, 5);
    rb_define_method(native_class, "save_cookies", client_save_cookies, 0);
    rb_define_method(native_class, "close", client_close, 0);
}
