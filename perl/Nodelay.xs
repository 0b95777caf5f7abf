/* Nodelay.xs: the Perl shim over the C ABI (include/nodelay.h). Perl-level
 * classes (lib/Nodelay.pm) hold the pointers; this file only converts
 * arguments and results. It never croaks while Rust code is on the stack:
 * every failure comes back as a code, and the Perl side raises it (or, for
 * a signal handler that died during the call, the XS function croaks with
 * its error after the call returned). */

#define PERL_NO_GET_CONTEXT
#include "EXTERN.h"
#include "perl.h"
#include "XSUB.h"

#include "nodelay.h"

/* What a wait's signal handlers left for the XS function to do once the
 * engine returned: croak with the error one died with, or go on with the
 * exit() one called. */
struct nd_wait {
    SV *raised; /* the error a handler died with (owned) */
    int jump;   /* nonzero: the JMPENV_JUMP value of an exit() to go on with */
};

/* Polled by the engine while a request waits (after EINTR, which a %SIG
 * handler installed without SA_RESTART makes the blocked syscall return, and
 * every 50 ms). A pending Perl signal runs its handlers here, as Perl runs
 * them between two ops: a handler that returns lets the request go on, as
 * Perl's own I/O carries on after EINTR (a $SIG{CHLD} that reaps a child
 * must not fail the request); one that dies or calls exit() stops it, and
 * the XS function croaks or exits once the call returned. Nothing unwinds
 * through the library's frames: a die is caught by the G_EVAL call, an exit
 * (which G_EVAL passes on) by this function's own JMPENV. $@ is left as it
 * was. Callers must have done PUTBACK: the call pushes on the Perl stack
 * above PL_stack_sp. */
static int32_t nd_perl_abort(void *ctx) {
    dTHX;
    struct nd_wait *handlers = (struct nd_wait *)ctx;
    if (!PL_sig_pending) return 0;
    SV *errsv_before = newSVsv(ERRSV);
    int jumped;
    dJMPENV;
    JMPENV_PUSH(jumped);
    if (jumped == 0) {
        dSP;
        PUSHMARK(SP);
        PUTBACK;
        call_pv("Nodelay::XS::_despatch_signals", G_DISCARD | G_EVAL);
    }
    JMPENV_POP;
    if (jumped) {
        handlers->jump = jumped;
        SvREFCNT_dec(errsv_before);
        return 1;
    }
    int died = SvTRUE(ERRSV) ? 1 : 0;
    if (died) handlers->raised = newSVsv(ERRSV);
    sv_setsv(ERRSV, errsv_before);
    SvREFCNT_dec(errsv_before);
    return died;
}

/* After a call that failed: goes on with an exit() or croaks with the error
 * a signal handler left during it; returns when none did. */
static void nd_finish_wait(pTHX_ struct nd_wait *handlers) {
    if (handlers->jump) JMPENV_JUMP(handlers->jump);
    if (handlers->raised) croak_sv(sv_2mortal(handlers->raised));
}

/* A request's [name, value, ...] as the ABI's header array (Newx; NULL when
 * empty), borrowing the strings of `headers`; `*n` is the pair count. */
static nodelay_header *nd_header_pairs(pTHX_ AV *headers, SSize_t *n) {
    nodelay_header *pairs = NULL;
    SSize_t i;
    *n = (av_len(headers) + 1) / 2;
    if (*n > 0) Newx(pairs, *n, nodelay_header);
    for (i = 0; i < *n; i++) {
        SV **name = av_fetch(headers, 2 * i, 0);
        SV **value = av_fetch(headers, 2 * i + 1, 0);
        STRLEN len;
        pairs[i].name = name ? SvPVutf8(*name, len) : "";
        pairs[i].name_len = name ? len : 0;
        pairs[i].value = value ? SvPVutf8(*value, len) : "";
        pairs[i].value_len = value ? len : 0;
    }
    return pairs;
}

/* Calls `cb` with no arguments in scalar context the way nd_perl_abort runs
 * signal handlers: inside G_EVAL and a JMPENV of its own, so neither a die
 * nor an exit() unwinds through the engine's frames (the XS function croaks
 * or exits once the call returned, nd_finish_wait). $@ is left as it was.
 * Returns a new SV with the result, or NULL when the callback died or
 * exited (recorded in `wait`). Callers must have done PUTBACK. */
static SV *nd_call_back(pTHX_ SV *cb, struct nd_wait *wait) {
    SV *errsv_before = newSVsv(ERRSV);
    SV *result = NULL;
    int jumped;
    dJMPENV;
    JMPENV_PUSH(jumped);
    if (jumped == 0) {
        dSP;
        int count;
        ENTER;
        SAVETMPS;
        PUSHMARK(SP);
        PUTBACK;
        count = call_sv(cb, G_SCALAR | G_EVAL);
        SPAGAIN;
        if (count > 0) {
            SV *got = POPs;
            if (!SvTRUE(ERRSV)) result = newSVsv(got);
        }
        PUTBACK;
        FREETMPS;
        LEAVE;
    }
    JMPENV_POP;
    if (jumped) {
        wait->jump = jumped;
        SvREFCNT_dec(errsv_before);
        return NULL;
    }
    if (!result && !wait->raised) wait->raised = newSVsv(ERRSV);
    sv_setsv(ERRSV, errsv_before);
    SvREFCNT_dec(errsv_before);
    return result;
}

/* A request body produced by Perl callbacks while the engine sends it
 * (nodelay_request_streamed): the content callback's pieces, then the
 * trailer callback's fields. Everything handed to the engine stays owned
 * here until the request call returned. */
struct nd_upload {
    SV *content_cb;         /* CODE: the next piece, undef or '' at the end */
    SV *trailer_cb;         /* CODE or NULL: an arrayref of name, value, ... */
    SV *piece;              /* the last piece given (owned) */
    SV *trailers;           /* the trailer callback's arrayref (owned) */
    nodelay_header *fields; /* the trailer fields (Newx) */
    struct nd_wait *wait;   /* where a callback's die or exit is kept */
};

static int32_t nd_fail_upload(pTHX_ struct nd_upload *u, const char *message) {
    if (!u->wait->raised) u->wait->raised = newSVpv(message, 0);
    return 1;
}

static int32_t nd_next_piece(void *ctx, const uint8_t **data, size_t *len) {
    dTHX;
    struct nd_upload *u = (struct nd_upload *)ctx;
    SV *piece = nd_call_back(aTHX_ u->content_cb, u->wait);
    STRLEN n;
    if (!piece) return 1;
    SvREFCNT_dec(u->piece);
    u->piece = piece;
    *len = 0;
    if (!SvOK(piece)) return 0;
    /* Only plain scalars: stringifying a reference could run Perl code
     * (overloading) that dies where nothing catches it. */
    if (SvROK(piece) || SvMAGICAL(piece))
        return nd_fail_upload(aTHX_ u, "the content callback must return a string of bytes or undef\n");
    if (!sv_utf8_downgrade(piece, TRUE))
        return nd_fail_upload(aTHX_ u, "Wide character in request body\n");
    *data = (const uint8_t *)SvPV(piece, n);
    *len = n;
    return 0;
}

static int32_t nd_trailer_fields(void *ctx, const nodelay_header **fields, size_t *n) {
    dTHX;
    struct nd_upload *u = (struct nd_upload *)ctx;
    SV *got = nd_call_back(aTHX_ u->trailer_cb, u->wait);
    AV *av;
    SSize_t count, i;
    if (!got) return 1;
    u->trailers = got;
    if (!SvROK(got) || SvTYPE(SvRV(got)) != SVt_PVAV)
        return nd_fail_upload(aTHX_ u, "the trailer callback must return an array reference of name, value pairs\n");
    av = (AV *)SvRV(got);
    count = (av_len(av) + 1) / 2;
    *n = (size_t)count;
    if (count == 0) return 0;
    Newxz(u->fields, count, nodelay_header);
    for (i = 0; i < 2 * count; i++) {
        SV **item = av_fetch(av, i, 0);
        STRLEN len;
        const char *text;
        if (!item || SvROK(*item) || SvMAGICAL(*item))
            return nd_fail_upload(aTHX_ u, "trailer field names and values must be strings\n");
        text = SvPVutf8(*item, len);
        if (i % 2 == 0) { u->fields[i / 2].name = text; u->fields[i / 2].name_len = len; }
        else { u->fields[i / 2].value = text; u->fields[i / 2].value_len = len; }
    }
    *fields = u->fields;
    return 0;
}

/* The body as a new scalar: read straight into its buffer when the length
 * is known, else copied once from the library's buffer. */
static nodelay_code read_body(pTHX_ nodelay_response *r, SV **out, struct nd_wait *handlers) {
    int64_t known = nodelay_response_body_length(r);
    if (known >= 0) {
        SV *sv = newSV((STRLEN)known + 1);
        nodelay_code code = nodelay_response_read_into(r, (uint8_t *)SvPVX(sv), (size_t)known,
                                                       nd_perl_abort, handlers);
        if (code != NODELAY_OK) {
            SvREFCNT_dec(sv);
            return code;
        }
        SvPOK_only(sv);
        SvCUR_set(sv, (STRLEN)known);
        *SvEND(sv) = '\0';
        *out = sv;
        return NODELAY_OK;
    }
    nodelay_code code = nodelay_response_read(r, nd_perl_abort, handlers);
    if (code != NODELAY_OK) return code;
    size_t len = 0;
    const uint8_t *body = nodelay_response_body(r, &len);
    *out = newSVpvn((const char *)body, len);
    return NODELAY_OK;
}

/* The Perl value of the JSON item at items[*at] (and of the items after it
 * that a container holds), as JSON::PP->new->utf8 decodes it: hashes and
 * arrays by reference, character strings (UTF-8 flagged only when not
 * ASCII), IVs, NVs, undef, and copies of JSON::PP's own true and false. The
 * tape nests at most 256 deep, which bounds the recursion. Runs no Perl code. */
static SV *nd_json_value(pTHX_ const nodelay_json_item *items, size_t *at, SV *yes, SV *no) {
    const nodelay_json_item *item = &items[(*at)++];
    uint32_t n;
    switch (item->kind) {
    case NODELAY_JSON_FALSE:
        return newSVsv(no);
    case NODELAY_JSON_TRUE:
        return newSVsv(yes);
    case NODELAY_JSON_INT:
        return newSViv((IV)item->value.integer);
    case NODELAY_JSON_FLOAT:
        return newSVnv((NV)item->value.real);
    case NODELAY_JSON_STRING: {
        SV *sv = newSVpvn((const char *)item->value.str, item->len);
        if (!item->ascii) SvUTF8_on(sv);
        return sv;
    }
    case NODELAY_JSON_ARRAY: {
        AV *av = newAV();
        for (n = 0; n < item->len; n++) av_push(av, nd_json_value(aTHX_ items, at, yes, no));
        return newRV_noinc((SV *)av);
    }
    case NODELAY_JSON_OBJECT: {
        HV *hv = newHV();
        for (n = 0; n < item->len; n++) {
            const nodelay_json_item *key = &items[(*at)++];
            SV *value = nd_json_value(aTHX_ items, at, yes, no);
            /* A negative length marks the key as UTF-8. */
            I32 key_len = key->ascii ? (I32)key->len : -(I32)key->len;
            hv_store(hv, (const char *)key->value.str, key_len, value, 0);
        }
        return newRV_noinc((SV *)hv);
    }
    default:
        return newSV(0);
    }
}

/* Appends `sv` to `out` as one application/x-www-form-urlencoded component:
 * a character string as its UTF-8 bytes and a byte string as it is (as
 * HTTP::Request::Common's POST), then HTTP::Tiny's escapes: A-Z a-z 0-9
 * - . _ ~ kept, a space as '+', every other byte as %XX (upper-case hex);
 * undef is empty. */
/* What each byte becomes in a form component: itself (A-Z a-z 0-9 - . _ ~),
 * '+' (a space) or %XX (0), looked up once per byte; filled at boot. */
static char nd_form_kept[256];

static void nd_form_table_init(void) {
    int c;
    for (c = 0; c < 256; c++) {
        int unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
            || c == '-' || c == '.' || c == '_' || c == '~';
        nd_form_kept[c] = unreserved ? (char)c : c == ' ' ? '+' : 0;
    }
}

static void nd_form_component(pTHX_ SV *out, SV *sv, int characters) {
    static const char hex[] = "0123456789ABCDEF";
    STRLEN len, i;
    const unsigned char *s;
    char *d;
    if (!SvOK(sv)) return;
    s = (const unsigned char *)SvPV(sv, len);
    if (characters && !SvUTF8(sv)) {
        /* A byte string taken as characters: its bytes above 0x7F are
         * Latin-1 characters, sent as their UTF-8 (a copy is upgraded; the
         * caller's scalar is left as it is). */
        for (i = 0; i < len && s[i] < 0x80; i++) {}
        if (i < len) {
            SV *copy = sv_2mortal(newSVpvn((const char *)s, len));
            s = (const unsigned char *)SvPVutf8(copy, len);
        }
    }
    /* Room for the worst case (every byte escaped), written in place. */
    d = SvGROW(out, SvCUR(out) + 3 * len + 1) + SvCUR(out);
    for (i = 0; i < len; i++) {
        unsigned char c = s[i];
        char kept = nd_form_kept[c];
        if (kept) {
            *d++ = kept;
        } else {
            *d++ = '%';
            *d++ = hex[c >> 4];
            *d++ = hex[c & 15];
        }
    }
    SvCUR_set(out, d - SvPVX(out));
    *d = '\0';
}

/* The engine response a Nodelay::Response object holds (its {handle}), NULL
 * when it has none. With delete, the handle is also taken out of the object
 * (for DESTROY, so it is freed once). */
static nodelay_response *nd_response_of(pTHX_ SV *self, int delete) {
    HV *hv;
    SV *handle;
    SV **slot;
    if (!SvROK(self) || SvTYPE(SvRV(self)) != SVt_PVHV) return NULL;
    hv = (HV *)SvRV(self);
    if (delete) {
        handle = hv_delete(hv, "handle", 6, 0);
    } else {
        slot = hv_fetchs(hv, "handle", 0);
        handle = slot ? *slot : NULL;
    }
    return handle && SvOK(handle) ? INT2PTR(nodelay_response *, SvIV(handle)) : NULL;
}

MODULE = Nodelay    PACKAGE = Nodelay::XS

BOOT:
    nd_form_table_init();

PROTOTYPES: DISABLE

# Runs the pending %SIG handlers (nd_perl_abort calls it inside G_EVAL).
void
_despatch_signals()
  CODE:
    PERL_ASYNC_CHECK();

unsigned int
abi_version()
  CODE:
    RETVAL = nodelay_abi_version();
  OUTPUT:
    RETVAL

const char *
code_name(code)
    unsigned int code
  CODE:
    RETVAL = nodelay_code_name(code);
  OUTPUT:
    RETVAL

void
client_new(timeout, verify, agent, cookie_file, proxy, http2, cookies, ca_file, max_per_host, rate_per_second, rate_burst, rate_per_host, accept_encoding, local_address)
    SV *timeout
    int verify
    SV *agent
    SV *cookie_file
    SV *proxy
    unsigned int http2
    int cookies
    SV *ca_file
    unsigned int max_per_host
    double rate_per_second
    unsigned int rate_burst
    int rate_per_host
    SV *accept_encoding
    SV *local_address
  PREINIT:
    nodelay_options o;
    nodelay_client *client = NULL;
    nodelay_code code;
  PPCODE:
    nodelay_options_init(&o);
    if (SvOK(timeout)) {
        double t = SvNV(timeout);
        o.connect_timeout = o.read_timeout = o.write_timeout = o.pool_timeout = t;
    }
    o.verify = verify;
    o.user_agent = SvOK(agent) ? SvPVutf8_nolen(agent) : NULL;
    o.cookie_file = SvOK(cookie_file) ? SvPV_nolen(cookie_file) : NULL;
    o.proxy = SvOK(proxy) ? SvPVutf8_nolen(proxy) : NULL;
    o.http2 = http2;
    o.cookies = cookies;
    o.ca_file = SvOK(ca_file) ? SvPV_nolen(ca_file) : NULL;
    o.max_connections_per_host = max_per_host;
    o.rate_per_second = rate_per_second;
    o.rate_burst = rate_burst;
    o.rate_per_host = rate_per_host;
    o.accept_encoding = SvOK(accept_encoding) ? SvPVutf8_nolen(accept_encoding) : NULL;
    o.local_address = SvOK(local_address) ? SvPVutf8_nolen(local_address) : NULL;
    code = nodelay_client_new(&o, &client);
    mXPUSHu(code);
    if (code == NODELAY_OK)
        mXPUSHi(PTR2IV(client));
    else
        mXPUSHp(nodelay_last_error(), strlen(nodelay_last_error()));

void
client_free(client)
    nodelay_client *client
  CODE:
    nodelay_client_free(client);

# Another handle over the same engine client (pool and jar shared): what a
# new ithread's copy of a Nodelay object holds. (0, handle) or (code, message).
void
client_dup(client)
    nodelay_client *client
  PREINIT:
    nodelay_client *copy = NULL;
    nodelay_code code;
  PPCODE:
    code = nodelay_client_dup(client, &copy);
    mXPUSHu(code);
    if (code == NODELAY_OK)
        mXPUSHi(PTR2IV(copy));
    else
        mXPUSHp(nodelay_last_error(), strlen(nodelay_last_error()));

void
client_save_cookies(client)
    nodelay_client *client
  PREINIT:
    nodelay_code code;
  PPCODE:
    code = nodelay_client_save_cookies(client);
    mXPUSHu(code);
    if (code != NODELAY_OK)
        mXPUSHp(nodelay_last_error(), strlen(nodelay_last_error()));

# The peer of the connection the client's latest request used, while it is
# kept for the next request: (host, port), or () when none is kept.
void
client_kept_peer(client)
    nodelay_client *client
  PREINIT:
    char host[NODELAY_PEER_HOST_CAP];
    uint16_t port = 0;
  PPCODE:
    if (nodelay_client_kept_peer(client, host, sizeof host, &port) == NODELAY_OK && host[0]) {
        mXPUSHp(host, strlen(host));
        mXPUSHu(port);
    }

# request(client, method, url, [name, value, ...], body_or_undef, want_body):
# (0, response, content) or (code, message).
void
request(client, method, url, headers, body, want_body)
    nodelay_client *client
    const char *method
    SV *url
    AV *headers
    SV *body
    int want_body
  PREINIT:
    nodelay_header *pairs = NULL;
    SSize_t n;
    nodelay_response *r = NULL;
    nodelay_code code;
    STRLEN body_len = 0;
    const char *body_ptr = NULL;
    SV *content = NULL;
    struct nd_wait handlers = {NULL, 0};
  PPCODE:
    pairs = nd_header_pairs(aTHX_ headers, &n);
    if (SvOK(body)) body_ptr = SvPVbyte(body, body_len);
    PUTBACK;
    code = nodelay_request(client, method, SvPVutf8_nolen(url), pairs, (size_t)n,
                           (const uint8_t *)body_ptr, body_len, nd_perl_abort, &handlers, &r);
    Safefree(pairs);
    if (code == NODELAY_OK && want_body) {
        code = read_body(aTHX_ r, &content, &handlers);
    }
    SPAGAIN;
    if (code != NODELAY_OK) {
        const char *message = nodelay_last_error();
        nodelay_response_free(r);
        nd_finish_wait(aTHX_ &handlers);
        mXPUSHu(code);
        mXPUSHp(message, strlen(message));
    } else {
        mXPUSHu(0);
        mXPUSHi(PTR2IV(r));
        if (content) mXPUSHs(content); else mXPUSHs(newSVpvs(""));
    }

# request_streamed(client, method, url, [name, value, ...], content_cb,
# trailer_cb_or_undef, want_body): as request, with the body pulled from
# content_cb (each call returns the next piece; undef or '' ends it) and sent
# chunked (or with the request's Content-Length header), then trailer_cb's
# fields (an arrayref of name, value pairs) after the last chunk. A callback
# that dies stops the request and its error is croaked once the engine
# returned.
void
request_streamed(client, method, url, headers, content_cb, trailer_cb, want_body)
    nodelay_client *client
    const char *method
    SV *url
    AV *headers
    SV *content_cb
    SV *trailer_cb
    int want_body
  PREINIT:
    nodelay_header *pairs = NULL;
    SSize_t n;
    nodelay_response *r = NULL;
    nodelay_code code;
    SV *content = NULL;
    struct nd_wait handlers = {NULL, 0};
    struct nd_upload upload = {NULL, NULL, NULL, NULL, NULL, NULL};
    nodelay_body_source source;
  PPCODE:
    pairs = nd_header_pairs(aTHX_ headers, &n);
    upload.content_cb = content_cb;
    upload.trailer_cb = SvOK(trailer_cb) ? trailer_cb : NULL;
    upload.wait = &handlers;
    source.next = nd_next_piece;
    source.trailers = upload.trailer_cb ? nd_trailer_fields : NULL;
    source.ctx = &upload;
    source.length = -1;
    PUTBACK;
    code = nodelay_request_streamed(client, method, SvPVutf8_nolen(url), pairs, (size_t)n,
                                    &source, nd_perl_abort, &handlers, &r);
    Safefree(pairs);
    Safefree(upload.fields);
    SvREFCNT_dec(upload.piece);
    SvREFCNT_dec(upload.trailers);
    if (code == NODELAY_OK && want_body) {
        code = read_body(aTHX_ r, &content, &handlers);
    }
    SPAGAIN;
    if (code != NODELAY_OK) {
        const char *message = nodelay_last_error();
        nodelay_response_free(r);
        nd_finish_wait(aTHX_ &handlers);
        mXPUSHu(code);
        mXPUSHp(message, strlen(message));
    } else {
        mXPUSHu(0);
        mXPUSHi(PTR2IV(r));
        if (content) mXPUSHs(content); else mXPUSHs(newSVpvs(""));
    }

# request_many(client, [[method, url, [name, value, ...], body_or_undef], ...],
# concurrency, deadline): every request sent at once, at most concurrency in
# flight (0: the engine's default), each read whole, the whole batch within
# deadline seconds (negative: none). The calling thread waits in the engine
# (other ithreads run), running %SIG handlers as a single request does.
# (0, [[0, response, content] or [code, message], ...]) in input order, or
# (code, message) when the whole call failed. Requests given the same header
# arrayref share one converted array (the engine converts it once).
void
request_many(client, requests, concurrency, deadline)
    nodelay_client *client
    AV *requests
    UV concurrency
    NV deadline
  PREINIT:
    SSize_t n, i;
    nodelay_batch_request *reqs = NULL;
    nodelay_header **owned = NULL;
    AV *previous = NULL;
    nodelay_batch *batch = NULL;
    nodelay_code code;
    struct nd_wait handlers = {NULL, 0};
  PPCODE:
    n = av_len(requests) + 1;
    Newxz(reqs, n ? n : 1, nodelay_batch_request);
    Newxz(owned, n ? n : 1, nodelay_header *);
    for (i = 0; i < n; i++) {
        SV **item = av_fetch(requests, i, 0);
        AV *req, *headers;
        SV **method, **url, **fields, **body;
        if (!item || !SvROK(*item) || SvTYPE(SvRV(*item)) != SVt_PVAV) {
            Safefree(reqs);
            for (i = 0; i < n; i++) Safefree(owned[i]);
            Safefree(owned);
            croak("Nodelay::XS::request_many: each request must be an array reference");
        }
        req = (AV *)SvRV(*item);
        method = av_fetch(req, 0, 0);
        url = av_fetch(req, 1, 0);
        fields = av_fetch(req, 2, 0);
        body = av_fetch(req, 3, 0);
        reqs[i].method = method ? SvPVutf8_nolen(*method) : NULL;
        reqs[i].url = url ? SvPVutf8_nolen(*url) : NULL;
        headers = fields && SvROK(*fields) && SvTYPE(SvRV(*fields)) == SVt_PVAV ? (AV *)SvRV(*fields) : NULL;
        if (headers && headers == previous) {
            reqs[i].headers = reqs[i - 1].headers;
            reqs[i].n_headers = reqs[i - 1].n_headers;
        } else if (headers) {
            SSize_t count;
            owned[i] = nd_header_pairs(aTHX_ headers, &count);
            reqs[i].headers = owned[i];
            reqs[i].n_headers = (size_t)count;
        }
        previous = headers;
        if (body && SvOK(*body)) {
            STRLEN len;
            reqs[i].body = (const uint8_t *)SvPVbyte(*body, len);
            reqs[i].body_len = len;
        }
    }
    PUTBACK;
    code = nodelay_request_many(client, reqs, (size_t)n, (size_t)concurrency, (double)deadline,
                                nd_perl_abort, &handlers, &batch);
    for (i = 0; i < n; i++) Safefree(owned[i]);
    Safefree(owned);
    Safefree(reqs);
    SPAGAIN;
    if (code != NODELAY_OK) {
        const char *message = nodelay_last_error();
        nd_finish_wait(aTHX_ &handlers);
        mXPUSHu(code);
        mXPUSHp(message, strlen(message));
    } else {
        AV *outcomes = newAV();
        size_t count = nodelay_batch_count(batch), k;
        av_extend(outcomes, (SSize_t)count);
        for (k = 0; k < count; k++) {
            nodelay_response *r = NULL;
            const char *message = NULL;
            AV *outcome = newAV();
            nodelay_code got = nodelay_batch_take(batch, k, &r, &message);
            av_push(outcome, newSVuv(got));
            if (got == NODELAY_OK) {
                size_t len = 0;
                const uint8_t *content = nodelay_response_body(r, &len);
                av_push(outcome, newSViv(PTR2IV(r)));
                av_push(outcome, newSVpvn((const char *)content, len));
            } else {
                av_push(outcome, newSVpv(message ? message : "", 0));
            }
            av_push(outcomes, newRV_noinc((SV *)outcome));
        }
        nodelay_batch_free(batch);
        mXPUSHu(0);
        mXPUSHs(newRV_noinc((SV *)outcomes));
    }

unsigned int
response_status(r)
    nodelay_response *r
  CODE:
    RETVAL = nodelay_response_status(r);
  OUTPUT:
    RETVAL

SV *
response_reason(r)
    nodelay_response *r
  PREINIT:
    size_t len = 0;
    const uint8_t *reason;
  CODE:
    reason = nodelay_response_reason(r, &len);
    RETVAL = newSVpvn((const char *)reason, len);
  OUTPUT:
    RETVAL

# Every value of the named header, in received order (lazy: looked up in
# the received head bytes when asked).
void
response_header(r, name)
    nodelay_response *r
    SV *name
  PREINIT:
    STRLEN name_len;
    const char *name_ptr;
    const uint8_t *value;
    size_t len, nth;
  PPCODE:
    name_ptr = SvPV(name, name_len);
    for (nth = 0; nodelay_response_header(r, name_ptr, name_len, nth, &value, &len); nth++) {
        mXPUSHp((const char *)value, len);
        if (GIMME_V != G_ARRAY) break;
    }

void
response_headers(r)
    nodelay_response *r
  PREINIT:
    size_t i, count, name_len, value_len;
    const uint8_t *name, *value;
  PPCODE:
    count = nodelay_response_header_count(r);
    EXTEND(SP, (SSize_t)(2 * count));
    for (i = 0; nodelay_response_header_at(r, i, &name, &name_len, &value, &value_len); i++) {
        mPUSHp((const char *)name, name_len);
        mPUSHp((const char *)value, value_len);
    }

# The trailer fields that followed the body (once read to its end), as name,
# value pairs in received order.
void
response_trailers(r)
    nodelay_response *r
  PREINIT:
    size_t i, count, name_len, value_len;
    const uint8_t *name, *value;
  PPCODE:
    count = nodelay_response_trailer_count(r);
    EXTEND(SP, (SSize_t)(2 * count));
    for (i = 0; i < count && nodelay_response_trailer_at(r, i, &name, &name_len, &value, &value_len); i++) {
        mPUSHp((const char *)name, name_len);
        mPUSHp((const char *)value, value_len);
    }

# The whole head in one call: (status, reason, version, whether a
# Content-Encoding field is there, then every header as name, value in
# received order) -- what LWP::Protocol::nodelay builds its HTTP::Response
# from.
void
response_head(r)
    nodelay_response *r
  PREINIT:
    size_t i, count, name_len, value_len, reason_len = 0;
    const uint8_t *name, *value, *reason;
    const char *version;
  PPCODE:
    count = nodelay_response_header_count(r);
    EXTEND(SP, (SSize_t)(4 + 2 * count));
    mPUSHu(nodelay_response_status(r));
    reason = nodelay_response_reason(r, &reason_len);
    mPUSHp((const char *)reason, reason_len);
    version = nodelay_response_version(r);
    mPUSHp(version, strlen(version));
    mPUSHi(nodelay_response_header(r, "content-encoding", 16, 0, &value, &value_len) ? 1 : 0);
    for (i = 0; i < count && nodelay_response_header_at(r, i, &name, &name_len, &value, &value_len); i++) {
        mPUSHp((const char *)name, name_len);
        mPUSHp((const char *)value, value_len);
    }

# The head as HTTP::Tiny's response hash holds it: (status, reason, version,
# {headers}), the headers keyed by lower-cased name, a repeated field's
# values in an arrayref in received order.
void
response_head_hash(r)
    nodelay_response *r
  PREINIT:
    size_t i, name_len, value_len, reason_len = 0;
    const uint8_t *name, *value, *reason;
    const char *version;
    HV *headers;
    char lower[256];
  PPCODE:
    headers = newHV();
    for (i = 0; nodelay_response_header_at(r, i, &name, &name_len, &value, &value_len); i++) {
        SV *key = name_len <= sizeof lower ? NULL : newSVpvn((const char *)name, name_len);
        const char *k = (const char *)name;
        size_t j;
        SV **old;
        SV *v = newSVpvn((const char *)value, value_len);
        if (key) {
            /* A name longer than the buffer (rare): lower-cased in an SV. */
            char *p = SvPVX(key);
            for (j = 0; j < name_len; j++) p[j] = toLOWER(p[j]);
            k = p;
        } else {
            for (j = 0; j < name_len; j++) lower[j] = toLOWER(name[j]);
            k = lower;
        }
        old = hv_fetch(headers, k, (I32)name_len, 0);
        if (!old) {
            hv_store(headers, k, (I32)name_len, v, 0);
        } else if (SvROK(*old) && SvTYPE(SvRV(*old)) == SVt_PVAV) {
            av_push((AV *)SvRV(*old), v);
        } else {
            AV *values = newAV();
            av_push(values, SvREFCNT_inc(*old));
            av_push(values, v);
            hv_store(headers, k, (I32)name_len, newRV_noinc((SV *)values), 0);
        }
        SvREFCNT_dec(key);
    }
    EXTEND(SP, 4);
    mPUSHu(nodelay_response_status(r));
    reason = nodelay_response_reason(r, &reason_len);
    mPUSHp((const char *)reason, reason_len);
    version = nodelay_response_version(r);
    mPUSHp(version, strlen(version));
    mPUSHs(newRV_noinc((SV *)headers));

# The next piece of the body, decoded, at most cap bytes, read straight into
# a new scalar: (0, piece), the piece empty at the end; or (code, message).
void
response_read_chunk(r, cap)
    nodelay_response *r
    size_t cap
  PREINIT:
    SV *piece;
    size_t n = 0;
    nodelay_code code;
    struct nd_wait handlers = {NULL, 0};
  PPCODE:
    if (cap == 0) cap = 1;
    piece = newSV(cap + 1);
    PUTBACK;
    code = nodelay_response_read_chunk(r, (uint8_t *)SvPVX(piece), cap, &n, nd_perl_abort, &handlers);
    SPAGAIN;
    if (code != NODELAY_OK) {
        const char *message = nodelay_last_error();
        SvREFCNT_dec(piece);
        nd_finish_wait(aTHX_ &handlers);
        mXPUSHu(code);
        mXPUSHp(message, strlen(message));
    } else {
        SvPOK_only(piece);
        SvCUR_set(piece, n);
        *SvEND(piece) = '\0';
        mXPUSHu(0);
        mXPUSHs(piece);
    }

void
response_free(r)
    nodelay_response *r
  CODE:
    nodelay_response_free(r);

const char *
response_version(r)
    nodelay_response *r
  CODE:
    RETVAL = nodelay_response_version(r);
  OUTPUT:
    RETVAL

# json_decode(bytes): (1, value) when the engine's JSON fast path took the
# document, () when it leaves it to JSON::PP (Nodelay::Response::json).
# JSON::PP must be loaded: its true and false are the booleans handed out.
void
json_decode(content)
    SV *content
  PREINIT:
    STRLEN len;
    const char *doc;
    nodelay_json *json = NULL;
    const nodelay_json_item *items;
    size_t count = 0, at = 0;
    SV *yes, *no, *value;
  PPCODE:
    yes = get_sv("JSON::PP::true", 0);
    no = get_sv("JSON::PP::false", 0);
    if (!yes || !no) croak("Nodelay::XS::json_decode: JSON::PP is not loaded");
    doc = SvPVbyte(content, len);
    if (nodelay_json_parse((const uint8_t *)doc, len, &json) != NODELAY_OK) XSRETURN_EMPTY;
    items = nodelay_json_items(json, &count);
    value = count ? nd_json_value(aTHX_ items, &at, yes, no) : newSV(0);
    nodelay_json_free(json);
    mXPUSHi(1);
    mXPUSHs(value);

# form_urlencode([name, value, ...]): the application/x-www-form-urlencoded
# body of the pairs, in order (a missing last value is empty).
SV *
form_urlencode(pairs, characters = 0)
    AV *pairs
    int characters
  PREINIT:
    SSize_t n, i;
  CODE:
    n = av_len(pairs) + 1;
    if (characters) {
        /* What HTTP::Tiny's www_form_urlencode does more (an odd count, an
         * undef name, an arrayref value) is left to the Perl caller: undef. */
        if (n % 2) XSRETURN_UNDEF;
        for (i = 0; i < n; i += 2) {
            SV **name = av_fetch(pairs, i, 0);
            SV **value = av_fetch(pairs, i + 1, 0);
            if (!name || !SvOK(*name)) XSRETURN_UNDEF;
            if (value && SvROK(*value) && SvTYPE(SvRV(*value)) == SVt_PVAV) XSRETURN_UNDEF;
        }
    }
    RETVAL = newSVpvs("");
    for (i = 0; i < n; i += 2) {
        SV **name = av_fetch(pairs, i, 0);
        SV **value = i + 1 < n ? av_fetch(pairs, i + 1, 0) : NULL;
        if (i) sv_catpvs(RETVAL, "&");
        if (name) nd_form_component(aTHX_ RETVAL, *name, characters);
        sv_catpvs(RETVAL, "=");
        if (value) nd_form_component(aTHX_ RETVAL, *value, characters);
    }
  OUTPUT:
    RETVAL

# Nodelay::Response's status and DESTROY, called once per request, as XSUBs
# rather than Perl subs over the functions above: no Perl frame each.
MODULE = Nodelay    PACKAGE = Nodelay::Response

unsigned int
status(self)
    SV *self
  CODE:
    RETVAL = nodelay_response_status(nd_response_of(aTHX_ self, 0));
  OUTPUT:
    RETVAL

void
DESTROY(self)
    SV *self
  CODE:
    nodelay_response *r = nd_response_of(aTHX_ self, 1);
    if (r) nodelay_response_free(r);
