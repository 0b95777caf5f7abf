/* The C ABI from C: GET/POST against the embedded server, the lazy header
 * lookup, both body paths, a streamed request body, a read timeout, a refused connection, an abort
 * callback driven by a signal handler, the cookie file, and options from an
 * older (shorter) header. Run by
 * tests/c_abi.rs as `abi_test BASE_URL REFUSED_URL COOKIE_FILE`; exit 0 when
 * every check passed, else the failed check is printed. */

#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "check.h"

static char url_buf[512];

static const char *url(const char *base, const char *path) {
    snprintf(url_buf, sizeof url_buf, "%s%s", base, path);
    return url_buf;
}

static nodelay_client *client_with(double read_timeout, const char *cookie_file) {
    nodelay_options o;
    nodelay_options_init(&o);
    o.read_timeout = read_timeout;
    o.cookie_file = cookie_file;
    nodelay_client *c = NULL;
    CHECK(nodelay_client_new(&o, &c) == NODELAY_OK);
    return c;
}

static void get_known_length(nodelay_client *c, const char *base) {
    nodelay_response *r = NULL;
    CHECK(nodelay_request(c, "GET", url(base, "/bytes/1000"), NULL, 0, NULL, 0, NULL, NULL, &r) ==
          NODELAY_OK);
    if (!r) return;
    CHECK(nodelay_response_status(r) == 200);
    CHECK(strcmp(nodelay_response_version(r), "HTTP/1.1") == 0);
    size_t len = 0;
    const uint8_t *reason = nodelay_response_reason(r, &len);
    CHECK(len == 2 && memcmp(reason, "OK", 2) == 0);
    const uint8_t *value = NULL;
    CHECK(nodelay_response_header(r, "CONTENT-length", 14, 0, &value, &len) == 1);
    CHECK(len == 4 && memcmp(value, "1000", 4) == 0);
    CHECK(nodelay_response_header(r, "x-absent", 8, 0, &value, &len) == 0);
    CHECK(nodelay_response_header_count(r) >= 1);
    const uint8_t *name = NULL;
    size_t name_len = 0;
    CHECK(nodelay_response_header_at(r, 0, &name, &name_len, &value, &len) == 1);
    CHECK(nodelay_response_header_at(r, 1000, &name, &name_len, &value, &len) == 0);
    /* The caller's own buffer, of the announced size. */
    int64_t n = nodelay_response_body_length(r);
    CHECK(n == 1000);
    uint8_t *buf = malloc(1000);
    CHECK(nodelay_response_read_into(r, buf, 999, NULL, NULL) == NODELAY_E_INVALID_ARGUMENT);
    CHECK(nodelay_response_read_into(r, buf, 1000, NULL, NULL) == NODELAY_OK);
    CHECK(buf[0] == 'a' || (buf[0] >= '0' && buf[0] <= 'z'));
    CHECK(nodelay_response_body_length(r) == -1); /* read: nothing left */
    CHECK(nodelay_response_read(r, NULL, NULL) == NODELAY_E_INVALID_ARGUMENT);
    free(buf);
    nodelay_response_free(r);
}

static void get_chunked(nodelay_client *c, const char *base) {
    nodelay_response *r = NULL;
    CHECK(nodelay_request(c, "GET", url(base, "/chunked/500"), NULL, 0, NULL, 0, NULL, NULL, &r) ==
          NODELAY_OK);
    if (!r) return;
    CHECK(nodelay_response_body_length(r) == -1);
    CHECK(nodelay_response_read(r, NULL, NULL) == NODELAY_OK);
    size_t len = 0;
    nodelay_response_body(r, &len);
    CHECK(len == 500);
    CHECK(nodelay_response_trailer_count(r) == 0); /* ended by 0 CRLF CRLF */
    CHECK(nodelay_response_trailer_at(r, 0, NULL, NULL, NULL, NULL) == 0);
    nodelay_response_free(r);
}

/* The connection a request left kept is reported with its peer; one closed
 * (the server's Connection: close) is not. */
static void kept_peer(const char *base) {
    nodelay_client *c = client_with(5.0, NULL);
    char host[NODELAY_PEER_HOST_CAP];
    uint16_t port = 1;
    CHECK(nodelay_client_kept_peer(c, host, sizeof host, &port) == NODELAY_OK);
    CHECK(host[0] == 0 && port == 0); /* no request yet */
    get_known_length(c, base);
    CHECK(nodelay_client_kept_peer(c, host, sizeof host, &port) == NODELAY_OK);
    CHECK(strcmp(host, "127.0.0.1") == 0);
    CHECK(port == (uint16_t)atoi(strrchr(base, ':') + 1));
    nodelay_response *r = NULL;
    static const nodelay_header close_it[] = {{"Connection", 10, "close", 5}};
    CHECK(nodelay_request(c, "GET", url(base, "/bytes/5"), close_it, 1, NULL, 0, NULL, NULL, &r) ==
          NODELAY_OK);
    if (r) {
        CHECK(nodelay_response_read(r, NULL, NULL) == NODELAY_OK);
        nodelay_response_free(r);
    }
    CHECK(nodelay_client_kept_peer(c, host, sizeof host, &port) == NODELAY_OK);
    CHECK(host[0] == 0 && port == 0);
    CHECK(nodelay_client_kept_peer(c, host, 8, &port) == NODELAY_E_INVALID_ARGUMENT);
    nodelay_client_free(c);
}

/* A host language's signal handling: the handler only sets a flag (as
 * Perl's does), installed without SA_RESTART so the blocked read returns
 * EINTR, and the abort callback answers from the flag. */
static volatile sig_atomic_t alarm_fired = 0;
static int abort_calls = 0;

static void on_alarm(int sig) {
    (void)sig;
    alarm_fired = 1;
}

static int32_t should_abort(void *ctx) {
    (*(int *)ctx)++;
    return alarm_fired;
}

/* Pieces of a decoded body through a small buffer: the same bytes as the
 * whole read of the same resource, then 0 at the end (and after it). */
static void stream_gzip(nodelay_client *c, const char *base) {
    nodelay_response *whole = NULL, *r = NULL;
    CHECK(nodelay_request(c, "GET", url(base, "/gzip/100000"), NULL, 0, NULL, 0, NULL, NULL,
                          &whole) == NODELAY_OK);
    if (!whole) return;
    CHECK(nodelay_response_read(whole, NULL, NULL) == NODELAY_OK);
    size_t whole_len = 0;
    const uint8_t *expected = nodelay_response_body(whole, &whole_len);
    CHECK(whole_len == 100000);
    CHECK(nodelay_request(c, "GET", url(base, "/gzip/100000"), NULL, 0, NULL, 0, NULL, NULL, &r) ==
          NODELAY_OK);
    if (!r) return;
    uint8_t *got = malloc(whole_len + 1);
    uint8_t piece[4096];
    size_t total = 0, n = 0;
    int pieces = 0;
    nodelay_code code;
    while ((code = nodelay_response_read_chunk(r, piece, sizeof piece, &n, should_abort,
                                               &abort_calls)) == NODELAY_OK &&
           n > 0 && pieces < 10000) {
        CHECK(n <= sizeof piece);
        if (total + n <= whole_len) memcpy(got + total, piece, n);
        total += n;
        pieces++;
    }
    CHECK(code == NODELAY_OK);
    CHECK(total == whole_len && pieces > 1);
    CHECK(total == whole_len && memcmp(got, expected, whole_len) == 0);
    CHECK(nodelay_response_read_chunk(r, piece, sizeof piece, &n, NULL, NULL) == NODELAY_OK &&
          n == 0);
    CHECK(nodelay_response_read(r, NULL, NULL) == NODELAY_E_INVALID_ARGUMENT);
    CHECK(nodelay_response_read_chunk(r, piece, 0, &n, NULL, NULL) == NODELAY_E_INVALID_ARGUMENT);
    free(got);
    nodelay_response_free(r);
    nodelay_response_free(whole);
}

static void post_echo(nodelay_client *c, const char *base) {
    const char *body = "name=nodelay&lang=c";
    nodelay_header headers[] = {
        {"Content-Type", 12, "application/x-www-form-urlencoded", 33},
    };
    nodelay_response *r = NULL;
    CHECK(nodelay_request(c, "POST", url(base, "/echo"), headers, 1, (const uint8_t *)body,
                          strlen(body), NULL, NULL, &r) == NODELAY_OK);
    if (!r) return;
    CHECK(nodelay_response_status(r) == 200);
    size_t len = 0;
    const uint8_t *value = NULL;
    CHECK(nodelay_response_header(r, "x-echo-method", 13, 0, &value, &len) == 1);
    CHECK(len == 4 && memcmp(value, "POST", 4) == 0);
    CHECK(nodelay_response_header(r, "content-type", 12, 0, &value, &len) == 1);
    CHECK(len == 33);
    CHECK(nodelay_response_read(r, NULL, NULL) == NODELAY_OK);
    const uint8_t *echoed = nodelay_response_body(r, &len);
    CHECK(len == strlen(body) && memcmp(echoed, body, len) == 0);
    nodelay_response_free(r);
}

/* A streamed body: pieces from a callback, sent chunked (no length given)
 * or with the length given; the echo route sends the bytes back. */
struct pieces {
    const char *const *piece;
    size_t next;
    int fail_at; /* the piece whose call fails (-1: none) */
    int trailer_calls;
};

static int32_t next_piece(void *ctx, const uint8_t **data, size_t *len) {
    struct pieces *p = (struct pieces *)ctx;
    if ((int)p->next == p->fail_at) return 1;
    const char *piece = p->piece[p->next];
    if (!piece) {
        *len = 0;
        return 0;
    }
    p->next++;
    *data = (const uint8_t *)piece;
    *len = strlen(piece);
    return 0;
}

static int32_t one_trailer(void *ctx, const nodelay_header **fields, size_t *n) {
    static const nodelay_header trailer[] = {{"X-Sum", 5, "5", 1}};
    ((struct pieces *)ctx)->trailer_calls++;
    *fields = trailer;
    *n = 1;
    return 0;
}

static void post_streamed(nodelay_client *c, const char *base, int64_t length) {
    static const char *const abc[] = {"ab", "cde", NULL};
    struct pieces p = {abc, 0, -1, 0};
    nodelay_body_source body = {next_piece, length < 0 ? one_trailer : NULL, &p, length};
    nodelay_response *r = NULL;
    CHECK(nodelay_request_streamed(c, "POST", url(base, "/echo"), NULL, 0, &body, NULL, NULL,
                                   &r) == NODELAY_OK);
    if (!r) return;
    CHECK(nodelay_response_status(r) == 200);
    CHECK(p.trailer_calls == (length < 0 ? 1 : 0));
    size_t len = 0;
    CHECK(nodelay_response_read(r, NULL, NULL) == NODELAY_OK);
    const uint8_t *echoed = nodelay_response_body(r, &len);
    CHECK(len == 5 && memcmp(echoed, "abcde", 5) == 0);
    nodelay_response_free(r);
}

static void streamed_source_fails(nodelay_client *c, const char *base) {
    static const char *const abc[] = {"ab", "cde", NULL};
    struct pieces p = {abc, 0, 1, 0};
    nodelay_body_source body = {next_piece, NULL, &p, -1};
    nodelay_response *r = NULL;
    CHECK(nodelay_request_streamed(c, "PUT", url(base, "/echo"), NULL, 0, &body, NULL, NULL,
                                   &r) == NODELAY_E_BODY_SOURCE);
    CHECK(r == NULL);
    /* Pieces that do not add up to the length given are refused. */
    struct pieces short_of = {abc, 0, -1, 0};
    nodelay_body_source sized = {next_piece, NULL, &short_of, 9};
    CHECK(nodelay_request_streamed(c, "PUT", url(base, "/echo"), NULL, 0, &sized, NULL, NULL,
                                   &r) == NODELAY_E_LOCAL_PROTOCOL);
    nodelay_body_source no_next = {NULL, NULL, NULL, -1};
    CHECK(nodelay_request_streamed(c, "PUT", url(base, "/echo"), NULL, 0, &no_next, NULL, NULL,
                                   &r) == NODELAY_E_INVALID_ARGUMENT);
}

static void read_timeout(const char *base) {
    nodelay_client *c = client_with(0.2, NULL);
    nodelay_response *r = NULL;
    nodelay_code code =
        nodelay_request(c, "GET", url(base, "/delay/3000"), NULL, 0, NULL, 0, NULL, NULL, &r);
    CHECK(code == NODELAY_E_READ_TIMEOUT);
    CHECK(r == NULL);
    CHECK(strcmp(nodelay_code_name(code), "read timeout") == 0);
    CHECK(strlen(nodelay_last_error()) > 0);
    nodelay_client_free(c);
}

static void refused(nodelay_client *c, const char *refused_url) {
    nodelay_response *r = NULL;
    CHECK(nodelay_request(c, "GET", refused_url, NULL, 0, NULL, 0, NULL, NULL, &r) ==
          NODELAY_E_CONNECT);
    CHECK(r == NULL);
}

static void invalid_arguments(nodelay_client *c) {
    nodelay_response *r = NULL;
    CHECK(nodelay_request(c, "GET", "ftp://example.test/", NULL, 0, NULL, 0, NULL, NULL, &r) ==
          NODELAY_E_UNSUPPORTED_PROTOCOL);
    CHECK(nodelay_request(c, "GET", NULL, NULL, 0, NULL, 0, NULL, NULL, &r) ==
          NODELAY_E_INVALID_ARGUMENT);
    nodelay_options o;
    nodelay_options_init(&o);
    o.size = 0;
    nodelay_client *bad = NULL;
    CHECK(nodelay_client_new(&o, &bad) == NODELAY_E_INVALID_ARGUMENT);
    CHECK(bad == NULL);
}

static void abort_by_signal(nodelay_client *c, const char *base) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval t = {{0, 0}, {0, 100000}}; /* 100 ms */
    setitimer(ITIMER_REAL, &t, NULL);
    nodelay_response *r = NULL;
    nodelay_code code = nodelay_request(c, "GET", url(base, "/delay/3000"), NULL, 0, NULL, 0,
                                        should_abort, &abort_calls, &r);
    CHECK(code == NODELAY_E_INTERRUPTED);
    CHECK(alarm_fired == 1);
    CHECK(abort_calls >= 1);
    signal(SIGALRM, SIG_DFL);
}

/* GET `path` and check that the body (its first 255 bytes) contains `needle`. */
static void get_body_contains(nodelay_client *c, const char *base, const char *path,
                              const char *needle) {
    nodelay_response *r = NULL;
    CHECK(nodelay_request(c, "GET", url(base, path), NULL, 0, NULL, 0, NULL, NULL, &r) ==
          NODELAY_OK);
    CHECK(nodelay_response_read(r, NULL, NULL) == NODELAY_OK);
    size_t len = 0;
    const char *body = (const char *)nodelay_response_body(r, &len);
    char text[256] = {0};
    memcpy(text, body, len < 255 ? len : 255);
    CHECK(strstr(text, needle) != NULL);
    nodelay_response_free(r);
}

static void cookies(const char *base, const char *cookie_file) {
    remove(cookie_file);
    nodelay_client *c = client_with(5.0, cookie_file);
    nodelay_response *r = NULL;
    CHECK(nodelay_request(c, "GET", url(base, "/cookies/set?session=abc123"), NULL, 0, NULL, 0,
                          NULL, NULL, &r) == NODELAY_OK);
    CHECK(nodelay_response_read(r, NULL, NULL) == NODELAY_OK);
    nodelay_response_free(r);
    /* The jar sends it back. */
    get_body_contains(c, base, "/cookies", "abc123");
    /* Autosaved already, before the client is freed. */
    FILE *f = fopen(cookie_file, "r");
    CHECK(f != NULL);
    if (f) {
        char line[512];
        CHECK(fgets(line, sizeof line, f) != NULL);
        CHECK(strncmp(line, "# Netscape HTTP Cookie File", 27) == 0);
        int found = 0;
        while (fgets(line, sizeof line, f))
            if (strstr(line, "\tsession\tabc123")) found = 1;
        CHECK(found);
        fclose(f);
    }
    nodelay_client_free(c);
    /* A new client loads the file. */
    c = client_with(5.0, cookie_file);
    get_body_contains(c, base, "/cookies", "abc123");
    nodelay_client_free(c);
}

/* A second handle over the same client: the jar and pool are shared, the
 * original handle may go first, and the state lives until the last one. */
static void dup_shares_the_client(const char *base) {
    nodelay_client *c = client_with(5.0, NULL);
    nodelay_client *d = NULL;
    CHECK(nodelay_client_dup(NULL, &d) == NODELAY_E_INVALID_ARGUMENT);
    CHECK(nodelay_client_dup(c, NULL) == NODELAY_E_INVALID_ARGUMENT);
    CHECK(nodelay_client_dup(c, &d) == NODELAY_OK);
    CHECK(d != NULL && d != c);
    nodelay_response *r = NULL;
    CHECK(nodelay_request(c, "GET", url(base, "/cookies/set?shared=yes"), NULL, 0, NULL, 0, NULL,
                          NULL, &r) == NODELAY_OK);
    nodelay_response_free(r);
    nodelay_client_free(c);
    get_body_contains(d, base, "/cookies", "yes");
    nodelay_client_free(d);
}

/* A program built against an older header knows a shorter struct: init
 * writes only the bytes that caller declares, and a client made from it works
 * (the fields it does not know keep their defaults). */
static void options_from_an_older_header(const char *base) {
    enum { OLD_SIZE = offsetof(nodelay_options, local_address), CANARY = 0x5a };
    unsigned char buf[sizeof(nodelay_options) + 16];
    memset(buf, CANARY, sizeof buf);
    nodelay_options *o = (nodelay_options *)(void *)buf;
    nodelay_options_init_sized(o, OLD_SIZE);
    CHECK(o->size == OLD_SIZE);
    CHECK(o->verify == 1);
    for (size_t i = OLD_SIZE; i < sizeof buf; i++) CHECK(buf[i] == CANARY);
    nodelay_client *c = NULL;
    CHECK(nodelay_client_new(o, &c) == NODELAY_OK);
    if (!c) return;
    get_known_length(c, base);
    nodelay_client_free(c);
    nodelay_options full;
    nodelay_options_init(&full);
    CHECK(full.size == sizeof full);
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s BASE_URL REFUSED_URL COOKIE_FILE\n", argv[0]);
        return 2;
    }
    const char *base = argv[1];
    CHECK(nodelay_abi_version() == NODELAY_ABI_VERSION);
    nodelay_client *c = client_with(5.0, NULL);
    get_known_length(c, base);
    get_chunked(c, base);
    post_echo(c, base);
    post_streamed(c, base, -1);
    post_streamed(c, base, 5);
    streamed_source_fails(c, base);
    stream_gzip(c, base);
    get_known_length(c, base); /* again, on the kept-alive connection */
    refused(c, argv[2]);
    invalid_arguments(c);
    abort_by_signal(c, base);
    nodelay_client_free(c);
    read_timeout(base);
    cookies(base, argv[3]);
    dup_shares_the_client(base);
    options_from_an_older_header(base);
    kept_peer(base);
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("ok\n");
    return 0;
}
