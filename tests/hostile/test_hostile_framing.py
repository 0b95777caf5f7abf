"""docs/hostile.md A1-A13: HTTP/1.1 framing and parsing, as the Python API sees it."""

from __future__ import annotations

import socket
import time

import nodelay
import pytest
from scripted import Close, Recv, Send, SendSlowly, Sleep, response

from .conftest import (
    FAST,
    FRESH_SCRIPT,
    POISON,
    Factory,
    assert_fresh_connection,
    hostile_case,
    peak_rss_kib,
    stopped_by_the_total,
)

pytestmark = pytest.mark.both_drivers

OK_HEAD = b"HTTP/1.1 200 OK\r\n"
CHUNKED_HEAD = OK_HEAD + b"Transfer-Encoding: chunked\r\n\r\n"


def cl_head(value: bytes) -> bytes:
    return OK_HEAD + b"Content-Length: " + value + b"\r\n\r\n"


# -- A1: Transfer-Encoding and Content-Length together -------------------------------------


def test_a1_chunked_with_content_length_decoded_then_closed(
    scripted: Factory, client: nodelay.Client
) -> None:
    wire = OK_HEAD + b"Content-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n"
    wire += b"5\r\nhello\r\n0\r\n\r\n"
    srv = scripted([Recv(), Send(wire), Recv(timeout=5.0), Send(POISON)], FRESH_SCRIPT)
    start = time.monotonic()
    r = client.get(srv.url + "/a1", timeout=nodelay.Timeout(10.0))
    assert time.monotonic() - start < FAST
    assert r.content == b"hello"
    assert_fresh_connection(client, srv)  # chunked wins, but the connection is not reused


@pytest.mark.parametrize(
    "order",
    [
        b"Transfer-Encoding: chunked\r\nContent-Length: 3\r\n",
        b"Content-Length: 3\r\nTransfer-Encoding: chunked\r\n",
    ],
    ids=["te-first", "cl-first"],
)
def test_a1_content_length_never_frames_a_chunked_body(
    scripted: Factory, client: nodelay.Client, order: bytes
) -> None:
    # Read by Content-Length, the body would be "5\r\n" and "hello..." the next response.
    wire = OK_HEAD + order + b"\r\n5\r\nhello\r\n0\r\n\r\n"
    srv = scripted([Recv(), Send(wire), Recv(timeout=5.0), Send(POISON)], FRESH_SCRIPT)
    assert client.get(srv.url + "/").content == b"hello"
    assert_fresh_connection(client, srv)


def test_a1_capitalised_chunked_with_content_length_and_a_bad_chunk(
    scripted: Factory, client: nodelay.Client
) -> None:
    # Node's test-http-client-response-content-length-and-te: read by Content-Length the
    # body would be "6\r\nfoo"; read as chunked it lacks the CRLF after the data.
    wire = OK_HEAD + b"Content-Length: 6\r\nTransfer-Encoding: Chunked\r\n\r\n6\r\nfoobar0\r\n"
    hostile_case(scripted, client, [Recv(), Send(wire)], nodelay.RemoteProtocolError)


# -- A2: Content-Length values ---------------------------------------------------------------

BAD_CONTENT_LENGTHS = {
    "negative": cl_head(b"-1") + b"hello",
    "plus-sign": cl_head(b"+5") + b"hello",
    "hex": cl_head(b"0x10") + b"hello",
    "exponent": cl_head(b"1e3") + b"hello",
    "20-digits": cl_head(b"99999999999999999999") + b"hello",
    "u64-overflow-19-digits-max+1": cl_head(b"18446744073709551616") + b"hello",
    "two-headers-differ": OK_HEAD + b"Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello!",
    "list-differs": cl_head(b"5, 6") + b"hello!",
    "empty-value": cl_head(b"") + b"hello",
    "empty-list-element": cl_head(b"5,,5") + b"hello",
    "inner-space": cl_head(b"5 5") + b"hello",
    "fraction": cl_head(b"5.0") + b"hello",
    "unicode-digit": cl_head("\u0665".encode()) + b"hello",
}


@pytest.mark.parametrize("case", sorted(BAD_CONTENT_LENGTHS))
def test_a2_invalid_content_length(scripted: Factory, client: nodelay.Client, case: str) -> None:
    hostile_case(
        scripted,
        client,
        [Recv(), Send(BAD_CONTENT_LENGTHS[case])],
        nodelay.RemoteProtocolError,
        match="Content-Length",
    )


@pytest.mark.parametrize("value", [b"5, 5", b"0005", b" 5 ", b"5\r\nContent-Length: 5"])
def test_a2_equivalent_content_lengths_accepted(
    scripted: Factory, client: nodelay.Client, value: bytes
) -> None:
    srv = scripted([Recv(), Send(cl_head(value) + b"hello")])
    assert client.get(srv.url + "/").content == b"hello"


# -- A3: transfer codings --------------------------------------------------------------------

BAD_TRANSFER_ENCODINGS = {
    "gzip-chunked": b"Transfer-Encoding: gzip, chunked\r\n",
    "chunked-gzip": b"Transfer-Encoding: chunked, gzip\r\n",
    "chunked-twice-in-list": b"Transfer-Encoding: chunked, chunked\r\n",
    "chunked-twice-as-headers": b"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n",
    "identity": b"Transfer-Encoding: identity\r\n",
    "unknown": b"Transfer-Encoding: x-custom\r\n",
    "empty": b"Transfer-Encoding: \r\n",
    "chunked-with-parameter": b"Transfer-Encoding: chunked;q=1\r\n",
    "misspelt": b"Transfer-Encoding: chunkedx\r\n",
}


@pytest.mark.parametrize("case", sorted(BAD_TRANSFER_ENCODINGS))
def test_a3_unsupported_transfer_encoding(
    scripted: Factory, client: nodelay.Client, case: str
) -> None:
    wire = OK_HEAD + BAD_TRANSFER_ENCODINGS[case] + b"\r\n5\r\nhello\r\n0\r\n\r\n"
    hostile_case(
        scripted, client, [Recv(), Send(wire)], nodelay.RemoteProtocolError, match="Transfer"
    )


def test_a3_chunked_in_http10_refused(scripted: Factory, client: nodelay.Client) -> None:
    wire = b"HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"
    hostile_case(scripted, client, [Recv(), Send(wire)], nodelay.RemoteProtocolError)


@pytest.mark.parametrize("value", [b"CHUNKED", b"Chunked ", b"chunked,", b"\tchunked"])
def test_a3_chunked_spelling_variants_accepted(
    scripted: Factory, client: nodelay.Client, value: bytes
) -> None:
    wire = OK_HEAD + b"Transfer-Encoding: " + value + b"\r\n\r\n5\r\nhello\r\n0\r\n\r\n"
    srv = scripted([Recv(), Send(wire)])
    assert client.get(srv.url + "/").content == b"hello"


# -- A4: chunk sizes and delimiters ----------------------------------------------------------

BAD_CHUNKS = {
    "size-negative": b"-1\r\nx\r\n0\r\n\r\n",
    "size-overflow-17-hex-digits": b"10000000000000000\r\nx\r\n0\r\n\r\n",
    "size-leading-space": b" 5\r\nhello\r\n0\r\n\r\n",
    "size-trailing-space": b"5 \r\nhello\r\n0\r\n\r\n",
    "size-0x-prefix": b"0x5\r\nhello\r\n0\r\n\r\n",
    "size-plus-sign": b"+5\r\nhello\r\n0\r\n\r\n",
    "size-empty": b"\r\nhello\r\n0\r\n\r\n",
    "size-not-hex": b"zz\r\nhello\r\n0\r\n\r\n",
    "size-bare-lf": b"5\nhello\r\n0\r\n\r\n",
    "size-bare-cr": b"5\rhello\r\n0\r\n\r\n",
    "data-bare-lf": b"5\r\nhello\n0\r\n\r\n",
    "data-longer-than-size": b"5\r\nhello!\r\n0\r\n\r\n",
    "data-shorter-than-size": b"6\r\nhello\r\n0\r\n\r\n",
    "last-chunk-bare-lf": b"5\r\nhello\r\n0\n\n",
    "extension-nul": b"5;a=\x00\r\nhello\r\n0\r\n\r\n",
    "extension-bare-lf": b"5;a\nhello\r\n0\r\n\r\n",
    "trailer-bare-lf": b"5\r\nhello\r\n0\r\nX-T: 1\n\r\n",
    "trailer-nul": b"5\r\nhello\r\n0\r\nX-T: \x00\r\n\r\n",
}


@pytest.mark.parametrize("case", sorted(BAD_CHUNKS))
def test_a4_malformed_chunked_body(scripted: Factory, client: nodelay.Client, case: str) -> None:
    # The server keeps the connection open: the error must come from the bytes, not EOF.
    hostile_case(
        scripted,
        client,
        [Recv(), Send(CHUNKED_HEAD + BAD_CHUNKS[case])],
        nodelay.RemoteProtocolError,
        match="chunk",
    )


def test_a4_many_tiny_chunks_decode_in_linear_time(
    scripted: Factory, client: nodelay.Client
) -> None:
    n = 100_000
    # The same chunks with a 1-byte extension each: 100,000 bytes of extensions, too many.
    body = b"1;e\r\nx\r\n" * n + b"0\r\n\r\n"
    srv = scripted([Recv(), Send(CHUNKED_HEAD + b"1\r\nx\r\n" * n + b"0\r\n\r\n")])
    start = time.monotonic()
    assert client.get(srv.url + "/").content == b"x" * n
    assert time.monotonic() - start < FAST
    hostile_case(scripted, client, [Recv(), Send(CHUNKED_HEAD + body)], nodelay.RemoteProtocolError)


# -- A5: chunk-extension and trailer floods --------------------------------------------------


def _flood(prefix: bytes, unit: bytes, total: int) -> object:
    """A step sending ``prefix`` then ``unit`` repeated up to ``total`` bytes, giving up
    quietly when the client hangs up (as it must, long before the end)."""

    def send(sock: socket.socket) -> None:
        sock.settimeout(5.0)
        try:
            sock.sendall(prefix)
            block = unit * max(1, 65536 // len(unit))
            sent = 0
            while sent < total:
                sock.sendall(block)
                sent += len(block)
        except OSError:
            pass

    return send


FLOOD_BYTES = 64 * 1024 * 1024  # what the server would send if never stopped


@pytest.mark.parametrize(
    ("prefix", "unit"),
    [
        (CHUNKED_HEAD + b"1;", b"a"),  # one endless extension
        (CHUNKED_HEAD, b"1;a=b\r\nx\r\n"),  # a small extension on every chunk
        (CHUNKED_HEAD + b"0\r\nX-T: ", b"a"),  # one endless trailer line
        (CHUNKED_HEAD + b"0\r\n", b"X-T: 1\r\n"),  # endless trailer fields
    ],
    ids=["one-long-extension", "extension-per-chunk", "one-long-trailer", "many-trailers"],
)
def test_a5_extension_and_trailer_floods_stop_at_the_limit(
    scripted: Factory, client: nodelay.Client, prefix: bytes, unit: bytes
) -> None:
    peak = peak_rss_kib()
    failure = hostile_case(
        scripted,
        client,
        [Recv(), _flood(prefix, unit, FLOOD_BYTES)],  # type: ignore[list-item]
        nodelay.RemoteProtocolError,
        match="exceed",
        poison=False,
    )
    assert "16384" in str(failure.exc)
    assert peak_rss_kib() - peak < 32 * 1024, "memory grew with the flood"


def test_a5_limits_are_per_message_not_per_chunk(scripted: Factory, client: nodelay.Client) -> None:
    # 20 chunks with a 1 KiB extension each: 20 KiB of extensions in one message.
    body = b"".join(b"1;" + b"e" * 1023 + b"\r\nx\r\n" for _ in range(20)) + b"0\r\n\r\n"
    hostile_case(scripted, client, [Recv(), Send(CHUNKED_HEAD + body)], nodelay.RemoteProtocolError)


def test_a5_extensions_and_trailers_within_limits_accepted(
    scripted: Factory, client: nodelay.Client
) -> None:
    body = b"5;" + b"e" * 8000 + b"\r\nhello\r\n0\r\n" + b"X-T: " + b"t" * 8000 + b"\r\n\r\n"
    srv = scripted([Recv(), Send(CHUNKED_HEAD + body), Recv(), Send(response(body=b"2nd"))])
    assert client.get(srv.url + "/").content == b"hello"
    assert client.get(srv.url + "/").content == b"2nd"
    assert srv.connections == 1  # a valid message keeps the connection in sync


# -- A6: header lines that must never frame a body -------------------------------------------

BAD_HEADER_LINES = {
    "space-before-colon-content-length": b"Content-Length : 5\r\n",
    "space-before-colon-transfer-encoding": b"Transfer-Encoding : chunked\r\n",
    "tab-before-colon": b"Content-Length\t: 5\r\n",
    "no-colon": b"Content-Length 5\r\n",
    "nul-in-value": b"X-A: a\x00b\r\n",
    "cr-in-value": b"X-A: a\rb\r\n",
    "nul-in-name": b"X-\x00A: 1\r\n",
    "empty-name": b": 5\r\n",
    "obs-fold": b"X-A: 1\r\n folded\r\n",
    "obs-fold-on-content-length": b"Content-Length:\r\n 5\r\n",
    "leading-whitespace-line": b" Content-Length: 5\r\n",
    "del-in-name": b"X\x7fA: 1\r\n",
}


@pytest.mark.parametrize("case", sorted(BAD_HEADER_LINES))
def test_a6_malformed_header_line(scripted: Factory, client: nodelay.Client, case: str) -> None:
    wire = OK_HEAD + BAD_HEADER_LINES[case] + b"Content-Length: 5\r\n\r\nhello"
    hostile_case(scripted, client, [Recv(), Send(wire)], nodelay.RemoteProtocolError)


def test_a6_obs_text_in_values_kept_not_fatal(scripted: Factory, client: nodelay.Client) -> None:
    wire = OK_HEAD + b"X-Latin: caf\xe9\r\nContent-Length: 2\r\n\r\nok"
    srv = scripted([Recv(), Send(wire)])
    r = client.get(srv.url + "/")
    assert r.content == b"ok" and r.headers["x-latin"] == "caf\xe9"


# -- A7: status lines ------------------------------------------------------------------------

BAD_STATUS_LINES = {
    "two-digit-status": b"HTTP/1.1 20 OK\r\nContent-Length: 0\r\n\r\n",
    "four-digit-status": b"HTTP/1.1 2000 OK\r\nContent-Length: 0\r\n\r\n",
    "http2-over-h1": b"HTTP/2.0 200 OK\r\nContent-Length: 0\r\n\r\n",
    "http2-bare": b"HTTP/2 200\r\nContent-Length: 0\r\n\r\n",
    "http12": b"HTTP/1.2 200 OK\r\nContent-Length: 0\r\n\r\n",
    "lowercase-http": b"http/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
    "http09-body": b"<html>hello</html>\r\n\r\n",
    "icy": b"ICY 200 OK\r\nContent-Length: 0\r\n\r\n",
    "status-not-numeric": b"HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n",
    "no-space-after-version": b"HTTP/1.1200 OK\r\nContent-Length: 0\r\n\r\n",
    "nul-in-reason": b"HTTP/1.1 200 O\x00K\r\nContent-Length: 0\r\n\r\n",
    "binary-garbage": bytes(range(256)),
    "http05": b"HTTP/0.5 200 OK\r\n\r\n",  # urllib3 socket-level suite
}


@pytest.mark.parametrize("case", sorted(BAD_STATUS_LINES))
def test_a7_bad_status_line(scripted: Factory, client: nodelay.Client, case: str) -> None:
    hostile_case(
        scripted, client, [Recv(), Send(BAD_STATUS_LINES[case])], nodelay.RemoteProtocolError
    )


def test_a7_http09_refused_at_once_even_if_the_server_keeps_talking(
    scripted: Factory, client: nodelay.Client
) -> None:
    # No blank line ever comes: waiting for one would mean waiting for the read timeout.
    hostile_case(
        scripted,
        client,
        [Recv(), SendSlowly(b"<html>" + b"x" * 1000, interval=0.05, chunk=10)],
        nodelay.RemoteProtocolError,
        timeout=nodelay.Timeout(30.0),
        poison=False,
    )


def test_a7_unexpected_101_refused(scripted: Factory, client: nodelay.Client) -> None:
    wire = b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"
    hostile_case(scripted, client, [Recv(), Send(wire)], nodelay.RemoteProtocolError)


@pytest.mark.parametrize(
    "status_line",
    [b"HTTP/1.1 200", b"HTTP/1.1 200 ", b"HTTP/1.1 599 Whatever", b"HTTP/1.0 200 OK"],
)
def test_a7_unusual_but_valid_status_lines(
    scripted: Factory, client: nodelay.Client, status_line: bytes
) -> None:
    srv = scripted([Recv(), Send(status_line + b"\r\nContent-Length: 2\r\n\r\nok")])
    r = client.get(srv.url + "/")
    assert r.content == b"ok"
    assert r.status_code == int(status_line.split()[1])


def test_a7_leading_empty_line_same_outcome_whatever_the_segmentation(
    scripted: Factory, client: nodelay.Client
) -> None:
    wire = b"\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    whole = scripted([Recv(), Send(wire)])
    dripped = scripted([Recv(), SendSlowly(wire, interval=0.01, chunk=1)])

    def outcome(url: str) -> str:
        try:
            return client.get(url, timeout=nodelay.Timeout(5.0)).text
        except nodelay.RemoteProtocolError as exc:
            return type(exc).__name__

    assert outcome(whole.url + "/") == outcome(dripped.url + "/")


# -- A8: oversized and dripped heads ---------------------------------------------------------


def test_a8_200k_header_line(scripted: Factory, client: nodelay.Client) -> None:
    wire = OK_HEAD + b"X-Big: " + b"a" * (200 * 1024) + b"\r\nContent-Length: 0\r\n\r\n"
    hostile_case(scripted, client, [Recv(), Send(wire)], nodelay.HeaderTooLarge, match="exceeds")


def test_a8_endless_header_line_refused_at_the_line_limit(
    scripted: Factory, client: nodelay.Client
) -> None:
    hostile_case(
        scripted,
        client,
        [Recv(), _flood(OK_HEAD + b"X-Big: ", b"a", FLOOD_BYTES)],  # type: ignore[list-item]
        nodelay.HeaderTooLarge,
        match="exceeds",
        poison=False,
    )


def test_a8_100000_tiny_headers(scripted: Factory, client: nodelay.Client) -> None:
    wire = OK_HEAD + b"a: b\r\n" * 100_000 + b"Content-Length: 0\r\n\r\n"
    hostile_case(scripted, client, [Recv(), Send(wire)], nodelay.HeaderTooLarge)


def test_a8_129_short_headers(scripted: Factory, client: nodelay.Client) -> None:
    wire = OK_HEAD + b"".join(b"X-%d: v\r\n" % i for i in range(128)) + b"Content-Length: 0\r\n\r\n"
    hostile_case(scripted, client, [Recv(), Send(wire)], nodelay.HeaderTooLarge, match="128")


def test_a8_endless_tiny_headers_stop_at_the_head_limit(
    scripted: Factory, client: nodelay.Client
) -> None:
    hostile_case(
        scripted,
        client,
        [Recv(), _flood(OK_HEAD, b"a: b\r\n", FLOOD_BYTES)],  # type: ignore[list-item]
        nodelay.HeaderTooLarge,
        poison=False,
    )


def test_a8_dripped_head_stopped_by_the_total_deadline(
    scripted: Factory, client: nodelay.Client
) -> None:
    # One byte every 50 ms: the head's deadline (the read timeout, 3 s after the request was
    # sent) comes after the total's, so the total deadline must stop it (the read timeout
    # bounding a dripped head is docs/hostile.md L36, test_hostile_network.py).
    drip = OK_HEAD + b"".join(b"X-%d: v\r\n" % i for i in range(100)) + b"\r\n"
    stopped_by_the_total(
        scripted,
        client,
        [Recv(), SendSlowly(drip, interval=0.05)],
        read=3.0,
        match=r"^total timeout of 1\.5 s exceeded while waiting for the response head$",
    )


# -- A9: bodies cut short --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("declared", "sent"),
    [(10, 3), (1_000_000, 300_000), (100_000_000, 10)],
    ids=["small", "large-direct-read", "beyond-preallocation"],
)
def test_a9_body_shorter_than_content_length(
    scripted: Factory, client: nodelay.Client, declared: int, sent: int
) -> None:
    wire = cl_head(str(declared).encode()) + b"x" * sent
    hostile_case(
        scripted,
        client,
        [Recv(), Send(wire), Close()],
        nodelay.RemoteProtocolError,
        match=f"received {sent} of {declared} bytes",
        poison=False,
    )


@pytest.mark.parametrize(
    "body",
    [
        b"a\r\nabc",
        b"ffffffffffffffff\r\nabc",
        b"5\r\nhello\r\n",
        b"5\r\nhello\r\n0\r\n",
        b"5\r\nhello\r\n0\r\nX-T: 1\r\n",
    ],
    ids=[
        "mid-chunk",
        "mid-u64-max-chunk",
        "before-last-chunk",
        "before-final-crlf",
        "mid-trailers",
    ],
)
def test_a9_chunked_body_cut(scripted: Factory, client: nodelay.Client, body: bytes) -> None:
    hostile_case(
        scripted,
        client,
        [Recv(), Send(CHUNKED_HEAD + body), Close()],
        nodelay.RemoteProtocolError,
        match=r"chunked body cut after \d+ bytes",
        poison=False,
    )


def test_a9_head_cut(scripted: Factory, client: nodelay.Client) -> None:
    hostile_case(
        scripted,
        client,
        [Recv(), Send(OK_HEAD + b"Content-Length: 5\r\n"), Close()],
        nodelay.RemoteProtocolError,
        match="middle of the response head",
        poison=False,
    )


# -- A10: more body than Content-Length --------------------------------------------------------

FAKE_SECOND = response(body=b"SMUGGLED")


def test_a10_extra_bytes_never_read_as_the_next_response(
    scripted: Factory, client: nodelay.Client
) -> None:
    srv = scripted(
        [Recv(), Send(cl_head(b"5") + b"hello" + FAKE_SECOND), Recv(timeout=5.0), Send(POISON)],
        FRESH_SCRIPT,
    )
    assert client.get(srv.url + "/").content == b"hello"
    assert_fresh_connection(client, srv)


def test_a10_late_extra_bytes_poison_the_idle_connection(
    scripted: Factory, client: nodelay.Client
) -> None:
    # The fake response arrives while the connection sits idle in the pool.
    srv = scripted(
        [Recv(), Send(cl_head(b"5") + b"hello"), Sleep(0.2), Send(FAKE_SECOND), Recv(5.0)],
        FRESH_SCRIPT,
    )
    assert client.get(srv.url + "/").content == b"hello"
    time.sleep(0.5)
    assert_fresh_connection(client, srv)


def test_a10_extra_bytes_after_chunked_body(scripted: Factory, client: nodelay.Client) -> None:
    wire = CHUNKED_HEAD + b"5\r\nhello\r\n0\r\n\r\n" + FAKE_SECOND
    srv = scripted([Recv(), Send(wire), Recv(timeout=5.0), Send(POISON)], FRESH_SCRIPT)
    assert client.get(srv.url + "/").content == b"hello"
    assert_fresh_connection(client, srv)


# -- A11: a huge Content-Length ----------------------------------------------------------------


def test_a11_huge_content_length_tiny_body_no_preallocation(
    scripted: Factory, client: nodelay.Client
) -> None:
    peak = peak_rss_kib()
    hostile_case(
        scripted,
        client,
        [Recv(), Send(cl_head(b"1000000000000") + b"tiny"), Close()],
        nodelay.RemoteProtocolError,
        match="received 4 of 1000000000000",
        poison=False,
    )
    assert peak_rss_kib() - peak < 64 * 1024, "the announced size was preallocated"


def test_a11_content_length_just_below_exact_read_limit(
    scripted: Factory, client: nodelay.Client
) -> None:
    # 64 MiB is read into one exact buffer: a lie of that size costs at most that.
    peak = peak_rss_kib()
    hostile_case(
        scripted,
        client,
        [Recv(), Send(cl_head(str(64 * 1024 * 1024).encode()) + b"tiny"), Close()],
        nodelay.RemoteProtocolError,
        poison=False,
    )
    assert peak_rss_kib() - peak < 100 * 1024


# -- A12: responses that have no body whatever their headers say -------------------------------

BODYLESS = {
    "head-content-length": ("HEAD", b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n"),
    "head-chunked": ("HEAD", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"),
    "head-no-length": ("HEAD", b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n"),
    "204-content-length": ("GET", b"HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n"),
    "204-chunked": ("GET", b"HTTP/1.1 204 No Content\r\nTransfer-Encoding: chunked\r\n\r\n"),
    "304-content-length": ("GET", b"HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\n"),
    "304-chunked": ("GET", b"HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n\r\n"),
}


@pytest.mark.parametrize("case", sorted(BODYLESS))
def test_a12_bodyless_responses_keep_the_connection_in_sync(
    scripted: Factory, client: nodelay.Client, case: str
) -> None:
    method, wire = BODYLESS[case]
    srv = scripted([Recv(), Send(wire), Recv(), Send(response(body=b"second"))])
    start = time.monotonic()
    r = client.request(method, srv.url + "/", timeout=nodelay.Timeout(10.0))
    assert time.monotonic() - start < FAST  # no body was waited for
    assert r.content == b""
    assert client.get(srv.url + "/").content == b"second"
    assert srv.connections == 1


@pytest.mark.parametrize("status", [204, 304])
def test_a12_body_bytes_after_bodyless_response_not_read_as_next(
    scripted: Factory, client: nodelay.Client, status: int
) -> None:
    wire = b"HTTP/1.1 %d X\r\nContent-Length: 8\r\n\r\nSMUGGLED" % status
    srv = scripted([Recv(), Send(wire), Recv(timeout=5.0), Send(POISON)], FRESH_SCRIPT)
    assert client.get(srv.url + "/").content == b""
    time.sleep(0.1)
    assert_fresh_connection(client, srv)


# -- A13: interim responses ------------------------------------------------------------------

CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"
SECOND = response(body=b"2nd")


def test_a13_fifty_100_continue(scripted: Factory, client: nodelay.Client) -> None:
    wire = CONTINUE * 50 + response(body=b"late")
    hostile_case(
        scripted, client, [Recv(), Send(wire)], nodelay.RemoteProtocolError, match="interim"
    )


def test_a13_endless_interim_responses(scripted: Factory, client: nodelay.Client) -> None:
    hostile_case(
        scripted,
        client,
        [Recv(), _flood(b"", CONTINUE, FLOOD_BYTES)],  # type: ignore[list-item]
        nodelay.RemoteProtocolError,
        poison=False,
    )


def test_a13_ten_interim_responses_then_final(scripted: Factory, client: nodelay.Client) -> None:
    interim = CONTINUE * 5 + b"HTTP/1.1 103 Early Hints\r\nLink: </s.css>\r\n\r\n" * 5
    srv = scripted([Recv(), Send(interim + response(body=b"final")), Recv(), Send(SECOND)])
    r = client.get(srv.url + "/")
    assert r.status_code == 200 and r.content == b"final"
    assert client.get(srv.url + "/").content == b"2nd"
    assert srv.connections == 1
