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
 * (shared with the caller's String when it is not frozen). */
static VALUE header_string(VALUE flat, long i) {
    VALUE v = RARRAY_AREF(flat, i);
    if (OBJ_FROZEN(flat) && RB_TYPE_P(v, T_STRING) && OBJ_FROZEN(v)) return v;
    return rb_str_new_frozen(StringValue(v));
}

/* Fills `headers` (room for header_count(flat)) from the Strings of `flat`,
 * and `pins` (room for twice as many) with those Strings. The engine reads
 * their bytes while the GVL is released, when another thread may run the GC
 * and compaction: a short String keeps its bytes inside its object, which
 * compaction moves unless it is pinned. An element of an Array is not;
 * `pins` lives on the caller's stack or in its ALLOCV buffer, which the GC
 * marks conservatively, and so pins (and keeps alive) what it holds. */
static void fill_headers(VALUE flat, nodelay_header *headers, size_t n, VALUE *pins) {
    for (size_t i = 0; i < n; i++) {
        VALUE name = header_string(flat, 2 * (long)i);
        VALUE value = header_string(flat, 2 * (long)i + 1);
        pins[2 * i] = name;
        pins[2 * i + 1] = value;
        headers[i] = (nodelay_header){RSTRING_PTR(name), (size_t)RSTRING_LEN(name),
                                      RSTRING_PTR(value), (size_t)RSTRING_LEN(value)};
    }
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
    VALUE buf = 0, pins_buf = 0;
    /* On this frame's stack (or heap when large) for the call's duration. */
    call.n_headers = header_count(headers);
    nodelay_header *fields = ALLOCV_N(nodelay_header, buf, call.n_headers);
    VALUE *pins = ALLOCV_N(VALUE, pins_buf, 2 * call.n_headers);
    fill_headers(headers, fields, call.n_headers, pins);
    call.headers = fields;
    call.pinned = pins;
    if (!NIL_P(body)) {
        body = rb_str_new_frozen(StringValue(body));
        call.body_ptr = (const uint8_t *)RSTRING_PTR(body);
        call.body_len = (size_t)RSTRING_LEN(body);
    }
    nodelay_rb_call(&call);
    if (buf) ALLOCV_END(buf);
    if (pins_buf) ALLOCV_END(pins_buf);
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

/* A batch whose outcomes become Ruby objects. */
struct outcomes {
    VALUE client;
    nodelay_batch *batch;
};

/* The Array of a batch's outcomes: each response owned by a Response as
 * soon as it is taken, a failure as [code, message]. */
static VALUE take_outcomes(VALUE arg) {
    struct outcomes *o = (struct outcomes *)arg;
    size_t count = nodelay_batch_count(o->batch);
    VALUE list = rb_ary_new_capa((long)count);
    for (size_t i = 0; i < count; i++) {
        nodelay_response *r = NULL;
        const char *message = NULL;
        nodelay_code code = nodelay_batch_take(o->batch, i, &r, &message);
        if (code == NODELAY_OK) {
            VALUE response = nodelay_rb_response_new(r, o->client);
            struct call whole = {0};
            whole.body = BODY_WHOLE;
            nodelay_rb_response_take_body(response, &whole);
            rb_ary_push(list, response);
        } else {
            rb_ary_push(list, rb_assoc_new(UINT2NUM(code), rb_str_new_cstr(message)));
        }
    }
    return list;
}

/* Frees the batch (and any response not taken: an allocation above failed). */
static VALUE free_batch(VALUE arg) {
    nodelay_batch_free(((struct outcomes *)arg)->batch);
    return Qnil;
}

/* request_many(requests, concurrency, deadline): every request of
 * `requests` ([method, url, flat headers or nil, body or nil] each) sent
 * through one engine call with the GVL released the whole time, at most
 * `concurrency` in flight (0: the engine's default), the batch within
 * `deadline` seconds (negative: none). Returns one item per request, in
 * order: a Nodelay::Response (body read) or [code, message] of a request
 * that failed. Requests given the same headers Array share one converted
 * array (the engine converts it once). */
static VALUE client_request_many(VALUE self, VALUE requests, VALUE concurrency, VALUE deadline) {
    Check_Type(requests, T_ARRAY);
    struct call call = {0};
    call.op = CALL_REQUEST_MANY;
    call.client = client_of(self);
    call.concurrency = NUM2SIZET(concurrency);
    call.deadline = NUM2DBL(deadline);
    long n = RARRAY_LEN(requests);
    size_t n_fields = 0;
    for (long i = 0; i < n; i++) {
        VALUE request = rb_ary_entry(requests, i);
        Check_Type(request, T_ARRAY);
        if (RARRAY_LEN(request) != 4)
            rb_raise(rb_eArgError, "request_many: each request is [method, url, headers, body]");
        n_fields += header_count(RARRAY_AREF(request, 2));
    }
    /* Everything handed to the engine is frozen and held in `pins` (method,
     * url and body of each request, then the header Strings; see
     * fill_headers) until the call returned. */
    VALUE requests_buf = 0, fields_buf = 0, pins_buf = 0;
    nodelay_batch_request *batch = ALLOCV_N(nodelay_batch_request, requests_buf, (size_t)n);
    nodelay_header *fields = ALLOCV_N(nodelay_header, fields_buf, n_fields);
    VALUE *pins = ALLOCV_N(VALUE, pins_buf, 3 * (size_t)n + 2 * n_fields);
    VALUE *header_pins = pins + 3 * n;
    VALUE previous = Qundef;
    for (long i = 0; i < n; i++) {
        VALUE request = RARRAY_AREF(requests, i);
        VALUE method = RARRAY_AREF(request, 0), url = RARRAY_AREF(request, 1);
        VALUE headers = RARRAY_AREF(request, 2), body = RARRAY_AREF(request, 3);
        method = rb_str_new_frozen(StringValue(method));
        url = rb_str_new_frozen(StringValue(url));
        pins[3 * i] = method;
        pins[3 * i + 1] = url;
        pins[3 * i + 2] = Qnil;
        batch[i] = (nodelay_batch_request){StringValueCStr(method), StringValueCStr(url), NULL, 0,
                                           NULL, 0};
        if (i > 0 && headers == previous) {
            batch[i].headers = batch[i - 1].headers;
            batch[i].n_headers = batch[i - 1].n_headers;
        } else {
            size_t count = header_count(headers);
            fill_headers(headers, fields, count, header_pins);
            batch[i].headers = fields;
            batch[i].n_headers = count;
            fields += count;
            header_pins += 2 * count;
        }
        previous = headers;
        if (!NIL_P(body)) {
            body = rb_str_new_frozen(StringValue(body));
            pins[3 * i + 2] = body;
            batch[i].body = (const uint8_t *)RSTRING_PTR(body);
            batch[i].body_len = (size_t)RSTRING_LEN(body);
        }
    }
    call.requests = batch;
    call.n_requests = (size_t)n;
    call.pinned = pins;
    nodelay_rb_call(&call);
    if (requests_buf) ALLOCV_END(requests_buf);
    if (fields_buf) ALLOCV_END(fields_buf);
    if (pins_buf) ALLOCV_END(pins_buf);
    RB_GC_GUARD(requests);
    if (!call.batch) nodelay_rb_raise(&call);
    struct outcomes outcomes = {self, call.batch};
    return rb_ensure(take_outcomes, (VALUE)&outcomes, free_batch, (VALUE)&outcomes);
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
    rb_define_method(native_class, "request_many", client_request_many, 3);
    /* The most requests request_many keeps in flight. */
    rb_define_const(native_class, "MAX_BATCH_CONCURRENCY", SIZET2NUM(NODELAY_MAX_BATCH_CONCURRENCY));
    rb_define_method(native_class, "save_cookies", client_save_cookies, 0);
    rb_define_method(native_class, "close", client_close, 0);
}
