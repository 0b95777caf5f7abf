/* nodelay_request_many from C, against the embedded server (HTTP/1.1 and
 * h2c on one port): outcomes in input order with per-request errors, the
 * concurrency and the per-host limit as the server counts them
 * (/stats/in-flight), the client's headers and jar, a deadline, an abort
 * callback, HTTP/2, and the argument checks. Run by tests/c_batch.rs as
 * `batch_test BASE_URL REFUSED_URL`; exit 0 when every check passed, else
 * the failed check is printed. The server's peak only grows, so the
 * concurrency checks run from the lowest peak to the highest. */

#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"

/* Requests of a batch, each with its own URL buffer. */
#define MAX_REQUESTS 64
#define URL_BYTES 256

struct batch_spec {
    nodelay_batch_request requests[MAX_REQUESTS];
    char urls[MAX_REQUESTS][URL_BYTES];
    size_t n;
};

static void add(struct batch_spec *spec, const char *base, const char *path) {
    char *url = spec->urls[spec->n];
    snprintf(url, URL_BYTES, "%s%s", base, path);
    nodelay_batch_request *r = &spec->requests[spec->n++];
    memset(r, 0, sizeof *r);
    r->method = "GET";
    r->url = url;
}

static nodelay_client *client_with(unsigned max_per_host, uint32_t http2) {
    nodelay_options o;
    nodelay_options_init(&o);
    o.max_connections_per_host = max_per_host;
    o.http2 = http2;
    nodelay_client *c = NULL;
    CHECK(nodelay_client_new(&o, &c) == NODELAY_OK);
    return c;
}

/* The body of a GET as a NUL-terminated string (malloc'd), NULL on failure. */
static char *get_text(nodelay_client *c, const char *base, const char *path) {
    char url[URL_BYTES];
    snprintf(url, sizeof url, "%s%s", base, path);
    nodelay_response *r = NULL;
    if (nodelay_request(c, "GET", url, NULL, 0, NULL, 0, NULL, NULL, &r) != NODELAY_OK) return NULL;
    char *text = NULL;
    if (nodelay_response_read(r, NULL, NULL) == NODELAY_OK) {
        size_t len = 0;
        const uint8_t *body = nodelay_response_body(r, &len);
        text = malloc(len + 1);
        memcpy(text, body, len);
        text[len] = '\0';
    }
    nodelay_response_free(r);
    return text;
}

/* The most requests the server has answered at once so far. */
static long peak_in_flight(const char *base) {
    nodelay_client *c = client_with(0, NODELAY_HTTP2_OFF);
    char *text = get_text(c, base, "/stats/in-flight");
    nodelay_client_free(c);
    const char *at = text ? strstr(text, "\"peak_in_flight\": ") : NULL;
    long peak = at ? strtol(at + strlen("\"peak_in_flight\": "), NULL, 10) : -1;
    free(text);
    return peak;
}

/* Runs `spec` and checks that every request answered `status` with a body
 * of `body` (NULL: any); returns the batch's code. */
static nodelay_code run_all_ok(nodelay_client *c, struct batch_spec *spec, size_t concurrency,
                               const char *body, const char *version) {
    nodelay_batch *b = NULL;
    nodelay_code code = nodelay_request_many(c, spec->requests, spec->n, concurrency, -1.0, NULL,
                                             NULL, &b);
    CHECK(code == NODELAY_OK);
    if (!b) return code;
    CHECK(nodelay_batch_count(b) == spec->n);
    for (size_t i = 0; i < spec->n; i++) {
        nodelay_response *r = NULL;
        const char *message = NULL;
        CHECK(nodelay_batch_take(b, i, &r, &message) == NODELAY_OK);
        if (!r) continue;
        CHECK(nodelay_response_status(r) == 200);
        CHECK(strcmp(nodelay_response_version(r), version) == 0);
        size_t len = 0;
        const uint8_t *got = nodelay_response_body(r, &len);
        if (body) CHECK(len == strlen(body) && memcmp(got, body, len) == 0);
        nodelay_response_free(r);
    }
    nodelay_batch_free(b);
    return code;
}

/* 8 slow requests: a per-host limit of 2 is what the server sees, whatever
 * the concurrency asked; then concurrency 3, then 8, each seen exactly. */
static void concurrency_as_the_server_sees_it(const char *base) {
    struct batch_spec spec = {.n = 0};
    for (int i = 0; i < 8; i++) add(&spec, base, "/delay/300");
    nodelay_client *limited = client_with(2, NODELAY_HTTP2_OFF);
    run_all_ok(limited, &spec, 8, "delayed", "HTTP/1.1");
    nodelay_client_free(limited);
    CHECK(peak_in_flight(base) == 2);

    nodelay_client *c = client_with(0, NODELAY_HTTP2_OFF);
    run_all_ok(c, &spec, 3, "delayed", "HTTP/1.1");
    CHECK(peak_in_flight(base) == 3);
    spec.n = 0;
    for (int i = 0; i < 16; i++) add(&spec, base, "/delay/300");
    run_all_ok(c, &spec, 8, "delayed", "HTTP/1.1");
    CHECK(peak_in_flight(base) == 8);
    nodelay_client_free(c);
}

/* Outcomes come back in input order, a failed request has its own code and
 * message, and the others are unaffected. */
static void order_and_errors(const char *base, const char *refused) {
    struct batch_spec spec = {.n = 0};
    const char *paths[] = {"/bytes/7", "/delay/200", "/bytes/1", "/chunked/300", "/gzip/5000"};
    const size_t lengths[] = {7, 7, 1, 300, 5000};
    for (int i = 0; i < 5; i++) add(&spec, base, paths[i]);
    add(&spec, refused, "");
    add(&spec, "", "no-scheme");
    add(&spec, base, "/status/404");
    nodelay_client *c = client_with(0, NODELAY_HTTP2_OFF);
    nodelay_batch *b = NULL;
    CHECK(nodelay_request_many(c, spec.requests, spec.n, 4, -1.0, NULL, NULL, &b) == NODELAY_OK);
    if (b) {
        for (size_t i = 0; i < 5; i++) {
            nodelay_response *r = NULL;
            CHECK(nodelay_batch_take(b, i, &r, NULL) == NODELAY_OK);
            size_t len = 0;
            nodelay_response_body(r, &len);
            CHECK(len == lengths[i]);
            CHECK(nodelay_response_body_length(r) == -1); /* read already */
            nodelay_response_free(r);
        }
        nodelay_response *r = NULL;
        const char *message = NULL;
        CHECK(nodelay_batch_take(b, 5, &r, &message) == NODELAY_E_CONNECT);
        CHECK(r == NULL && message && strlen(message) > 0);
        CHECK(strcmp(nodelay_last_error(), message) == 0);
        CHECK(nodelay_batch_take(b, 6, &r, &message) == NODELAY_E_UNSUPPORTED_PROTOCOL);
        CHECK(nodelay_batch_take(b, 7, &r, NULL) == NODELAY_OK);
        CHECK(nodelay_response_status(r) == 404);
        nodelay_response_free(r);
        /* A response is taken once; an index past the end is refused. */
        CHECK(nodelay_batch_take(b, 0, &r, NULL) == NODELAY_E_INVALID_ARGUMENT && r == NULL);
        CHECK(nodelay_batch_take(b, 8, &r, NULL) == NODELAY_E_INVALID_ARGUMENT);
        nodelay_batch_free(b);
    }
    nodelay_client_free(c);
}

/* The request's own headers and the client's User-Agent go out with every
 * request (one header array shared by all); the jar's cookie set by one
 * batch is sent by the next, and a request's own Cookie wins. */
static void headers_and_cookies(const char *base) {
    nodelay_client *c = client_with(0, NODELAY_HTTP2_OFF);
    nodelay_header own = {"X-Batch", 7, "yes", 3};
    struct batch_spec spec = {.n = 0};
    for (int i = 0; i < 3; i++) {
        add(&spec, base, "/headers");
        spec.requests[i].headers = &own;
        spec.requests[i].n_headers = 1;
    }
    nodelay_batch *b = NULL;
    CHECK(nodelay_request_many(c, spec.requests, spec.n, 2, -1.0, NULL, NULL, &b) == NODELAY_OK);
    for (size_t i = 0; b && i < spec.n; i++) {
        nodelay_response *r = NULL;
        CHECK(nodelay_batch_take(b, i, &r, NULL) == NODELAY_OK);
        size_t len = 0;
        const char *body = (const char *)nodelay_response_body(r, &len);
        char *text = strndup(body, len);
        CHECK(strstr(text, "\"x-batch\": \"yes\"") != NULL);
        CHECK(strstr(text, "\"user-agent\": \"nodelay/") != NULL);
        free(text);
        nodelay_response_free(r);
    }
    nodelay_batch_free(b);

    spec.n = 0;
    add(&spec, base, "/cookies/set?flavour=oat");
    run_all_ok(c, &spec, 1, NULL, "HTTP/1.1");
    spec.n = 0;
    add(&spec, base, "/cookies");
    add(&spec, base, "/cookies");
    nodelay_header mine = {"Cookie", 6, "flavour=rye", 11};
    spec.requests[1].headers = &mine;
    spec.requests[1].n_headers = 1;
    b = NULL;
    CHECK(nodelay_request_many(c, spec.requests, spec.n, 2, -1.0, NULL, NULL, &b) == NODELAY_OK);
    const char *want[] = {"\"flavour\": \"oat\"", "\"flavour\": \"rye\""};
    for (size_t i = 0; b && i < 2; i++) {
        nodelay_response *r = NULL;
        CHECK(nodelay_batch_take(b, i, &r, NULL) == NODELAY_OK);
        size_t len = 0;
        const char *body = (const char *)nodelay_response_body(r, &len);
        char *text = strndup(body, len);
        CHECK(strstr(text, want[i]) != NULL);
        free(text);
        nodelay_response_free(r);
    }
    nodelay_batch_free(b);
    nodelay_client_free(c);
}

static double now_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* A deadline ends every request still running with a timeout naming it,
 * long before the server would answer. */
static void deadline(const char *base) {
    nodelay_client *c = client_with(0, NODELAY_HTTP2_OFF);
    struct batch_spec spec = {.n = 0};
    add(&spec, base, "/bytes/3");
    for (int i = 0; i < 4; i++) add(&spec, base, "/delay/5000");
    nodelay_batch *b = NULL;
    double started = now_seconds();
    CHECK(nodelay_request_many(c, spec.requests, spec.n, 2, 0.3, NULL, NULL, &b) == NODELAY_OK);
    CHECK(now_seconds() - started < 4.0);
    nodelay_response *r = NULL;
    CHECK(nodelay_batch_take(b, 0, &r, NULL) == NODELAY_OK);
    nodelay_response_free(r);
    for (size_t i = 1; b && i < spec.n; i++) {
        const char *message = NULL;
        nodelay_code code = nodelay_batch_take(b, i, &r, &message);
        CHECK(code == NODELAY_E_READ_TIMEOUT || code == NODELAY_E_CONNECT_TIMEOUT ||
              code == NODELAY_E_WRITE_TIMEOUT || code == NODELAY_E_POOL_TIMEOUT);
        CHECK(message && strstr(message, "total timeout of 0.3 s") != NULL);
    }
    nodelay_batch_free(b);
    nodelay_client_free(c);
}

static int abort_calls = 0;

/* Asks to stop on its fourth call (about 150 ms in). */
static int32_t stop_soon(void *ctx) {
    (void)ctx;
    return ++abort_calls >= 4;
}

/* The abort callback stops the whole batch: no outcomes, the interrupt's
 * code, and the client still works afterwards. */
static void abort_stops_the_batch(const char *base) {
    nodelay_client *c = client_with(0, NODELAY_HTTP2_OFF);
    struct batch_spec spec = {.n = 0};
    for (int i = 0; i < 6; i++) add(&spec, base, "/delay/5000");
    nodelay_batch *b = (nodelay_batch *)&spec; /* must be cleared */
    double started = now_seconds();
    CHECK(nodelay_request_many(c, spec.requests, spec.n, 6, -1.0, stop_soon, NULL, &b) ==
          NODELAY_E_INTERRUPTED);
    CHECK(b == NULL);
    CHECK(abort_calls >= 4);
    CHECK(now_seconds() - started < 4.0);
    spec.n = 0;
    add(&spec, base, "/bytes/2");
    run_all_ok(c, &spec, 1, "ab", "HTTP/1.1");
    nodelay_client_free(c);
}

/* HTTP/2 with prior knowledge: every request a stream of one connection. */
static void http2(const char *base) {
    nodelay_client *c = client_with(0, NODELAY_HTTP2_PRIOR_KNOWLEDGE);
    struct batch_spec spec = {.n = 0};
    for (int i = 0; i < 20; i++) add(&spec, base, "/bytes/4");
    run_all_ok(c, &spec, 8, "abcd", "HTTP/2");
    nodelay_client_free(c);
}

static void invalid_arguments(const char *base) {
    nodelay_client *c = client_with(0, NODELAY_HTTP2_OFF);
    struct batch_spec spec = {.n = 0};
    add(&spec, base, "/bytes/1");
    nodelay_batch *b = NULL;
    CHECK(nodelay_request_many(c, spec.requests, 1, NODELAY_MAX_BATCH_CONCURRENCY + 1, -1.0, NULL,
                               NULL, &b) == NODELAY_E_INVALID_ARGUMENT);
    CHECK(strstr(nodelay_last_error(), "concurrency") != NULL);
    CHECK(nodelay_request_many(c, spec.requests, 1, 1, NAN, NULL, NULL, &b) ==
          NODELAY_E_INVALID_ARGUMENT);
    CHECK(nodelay_request_many(NULL, spec.requests, 1, 1, -1.0, NULL, NULL, &b) ==
          NODELAY_E_INVALID_ARGUMENT);
    CHECK(nodelay_request_many(c, NULL, 1, 1, -1.0, NULL, NULL, &b) == NODELAY_E_INVALID_ARGUMENT);
    CHECK(nodelay_request_many(c, spec.requests, 1, 1, -1.0, NULL, NULL, NULL) ==
          NODELAY_E_INVALID_ARGUMENT);
    spec.requests[0].method = NULL;
    CHECK(nodelay_request_many(c, spec.requests, 1, 1, -1.0, NULL, NULL, &b) ==
          NODELAY_E_INVALID_ARGUMENT);
    CHECK(b == NULL);
    /* No requests: an empty batch. */
    CHECK(nodelay_request_many(c, NULL, 0, 0, -1.0, NULL, NULL, &b) == NODELAY_OK);
    CHECK(nodelay_batch_count(b) == 0);
    nodelay_batch_free(b);
    nodelay_batch_free(NULL);
    CHECK(nodelay_batch_count(NULL) == 0);
    nodelay_client_free(c);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: batch_test BASE_URL REFUSED_URL\n");
        return 2;
    }
    const char *base = argv[1];
    size_t n = strlen(base);
    char trimmed[URL_BYTES];
    snprintf(trimmed, sizeof trimmed, "%.*s", (int)(n && base[n - 1] == '/' ? n - 1 : n), base);
    concurrency_as_the_server_sees_it(trimmed);
    order_and_errors(trimmed, argv[2]);
    headers_and_cookies(trimmed);
    deadline(trimmed);
    abort_stops_the_batch(trimmed);
    http2(trimmed);
    invalid_arguments(trimmed);
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("all batch checks passed\n");
    return 0;
}
