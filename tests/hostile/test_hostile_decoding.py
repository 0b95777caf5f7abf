"""docs/hostile.md B14-B16: decompression bombs, too many codings, corrupt streams."""

from __future__ import annotations

import gzip
import http.client
import zlib
from urllib.parse import urlsplit

import nodelay
import pytest
from nodelay import _core
from scripted import Recv, Send

from .conftest import FAST, Factory, hostile_case, peak_rss_kib

pytestmark = pytest.mark.both_drivers

MIB = 1024 * 1024


def encoded_response(body: bytes, encoding: str, *, chunked: bool = False) -> bytes:
    head = f"HTTP/1.1 200 OK\r\nContent-Encoding: {encoding}\r\n"
    if not chunked:
        return (head + f"Content-Length: {len(body)}\r\n\r\n").encode() + body
    wire = (head + "Transfer-Encoding: chunked\r\n\r\n").encode()
    for i in range(0, len(body), 16384):
        piece = body[i : i + 16384]
        wire += b"%x\r\n" % len(piece) + piece + b"\r\n"
    return wire + b"0\r\n\r\n"


def gzip_of_zeros(size: int) -> bytes:
    """A gzip member of ``size`` zero bytes, built without compressing them all: one MiB of
    zeros compressed with a full flush is a byte-aligned, history-free run of deflate blocks,
    so repeating it is the deflate stream of repeated MiBs. The CRC in the trailer is not
    computed (a bounded decoder stops long before it)."""
    assert size % MIB == 0
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = c.compress(b"\0" * MIB) + c.flush(zlib.Z_FULL_FLUSH)
    end = c.flush(zlib.Z_FINISH)
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
    trailer = b"\0\0\0\0" + (size & 0xFFFFFFFF).to_bytes(4, "little")
    return header + block * (size // MIB) + end + trailer


def layered_bomb() -> bytes:
    """~10 GiB of zeros in three gzip layers: a few KiB on the wire."""
    inner = gzip_of_zeros(10 * 1024 * MIB)  # ~10 MB
    return gzip.compress(gzip.compress(inner, 9, mtime=0), 9, mtime=0)


# -- B14: bombs --------------------------------------------------------------------------------


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_b14_layered_gzip_bomb(scripted: Factory, client: nodelay.Client, chunked: bool) -> None:
    bomb = layered_bomb()
    assert len(bomb) < 64 * 1024
    peak = peak_rss_kib()
    hostile_case(
        scripted,
        client,
        [Recv(), Send(encoded_response(bomb, "gzip, gzip, gzip", chunked=chunked))],
        nodelay.DecodingError,
        within=FAST + 3.0,
        match="ratio",
    )
    assert peak_rss_kib() - peak < 128 * 1024, "memory grew with the bomb"


def test_b14_single_layer_bomb_past_the_ratio_floor(
    scripted: Factory, client: nodelay.Client
) -> None:
    bomb = gzip_of_zeros(256 * MIB)  # ~260 KB on the wire, 1030:1
    peak = peak_rss_kib()
    hostile_case(
        scripted,
        client,
        [Recv(), Send(encoded_response(bomb, "gzip"))],
        nodelay.DecodingError,
        within=FAST + 3.0,
        match="ratio",
    )
    assert peak_rss_kib() - peak < 400 * 1024


def test_b14_compressible_body_below_the_floor_decodes(
    scripted: Factory, client: nodelay.Client
) -> None:
    body = gzip_of_zeros(8 * MIB)
    # The CRC of the helper's stream is left zero: fix it for a fully valid member.
    crc = zlib.crc32(b"\0" * (8 * MIB)).to_bytes(4, "little")
    srv = scripted([Recv(), Send(encoded_response(body[:-8] + crc + body[-4:], "gzip"))])
    assert client.get(srv.url + "/").content == b"\0" * (8 * MIB)


def test_b14_decoded_size_cap(scripted: Factory) -> None:
    # The cap is an engine setting (Client does not expose it yet): 1 MiB here.
    engine = _core.Engine(_core.EngineOptions(max_decoded_size=MIB))
    body = gzip.compress(b"a" * (2 * MIB))
    srv = scripted([Recv(), Send(encoded_response(body, "gzip"))])
    with pytest.raises(nodelay.DecodingError, match="limit"):
        engine.request("GET", srv.url + "/", [], None, (5.0, 5.0, 5.0, 5.0, None))
    engine.close()


# -- B15: too many codings ---------------------------------------------------------------------


def _layers(data: bytes, n: int) -> bytes:
    for _ in range(n):
        data = gzip.compress(data, mtime=0)
    return data


@pytest.mark.parametrize(
    "headers",
    [
        ["gzip, gzip, gzip, gzip, gzip, gzip"],
        ["gzip, gzip, gzip", "gzip, gzip, gzip"],
        ["gzip"] * 6,
        ["gzip, identity, gzip, gzip, gzip, gzip, gzip"],
    ],
    ids=["one-header", "two-headers", "six-headers", "identity-does-not-hide-one"],
)
def test_b15_six_layers_refused(
    scripted: Factory, client: nodelay.Client, headers: list[str]
) -> None:
    body = _layers(b"deep", 6)
    head = "HTTP/1.1 200 OK\r\n" + "".join(f"Content-Encoding: {h}\r\n" for h in headers)
    wire = (head + f"Content-Length: {len(body)}\r\n\r\n").encode() + body
    hostile_case(
        scripted, client, [Recv(), Send(wire)], nodelay.DecodingError, match="content codings"
    )


def test_b15_five_layers_decoded(scripted: Factory, client: nodelay.Client) -> None:
    srv = scripted([Recv(), Send(encoded_response(_layers(b"deep", 5), ", ".join(["gzip"] * 5)))])
    assert client.get(srv.url + "/").content == b"deep"


# -- B16: corrupt and unusual streams ----------------------------------------------------------


def _raw_from_server(server: _core.TestServer, path: str) -> bytes:
    """A route's encoded body exactly as sent (http.client does not decode)."""
    parts = urlsplit(server.url)
    conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=10)
    try:
        conn.request("GET", path)
        return conn.getresponse().read()
    finally:
        conn.close()


GOOD_GZIP = gzip.compress(b"hello world " * 1000, mtime=0)
CORRUPT = {
    "gzip-bad-magic": ("gzip", b"\x1f\x8c" + GOOD_GZIP[2:]),
    "gzip-bad-crc": ("gzip", GOOD_GZIP[:-8] + b"\0\0\0\0" + GOOD_GZIP[-4:]),
    "gzip-bad-length": ("gzip", GOOD_GZIP[:-4] + b"\xff\xff\xff\xff"),
    "gzip-truncated": ("gzip", GOOD_GZIP[: len(GOOD_GZIP) // 2]),
    "gzip-no-trailer": ("gzip", GOOD_GZIP[:-8]),
    "gzip-garbage": ("gzip", b"this is not gzip at all"),
    "deflate-garbage": ("deflate", b"\xff" * 64),
    "deflate-truncated": ("deflate", zlib.compress(b"hello world " * 1000)[:40]),
    "br-garbage": ("br", b"\xff" * 64),
    "zstd-garbage": ("zstd", b"\x28\xb5\x2f\xfd" + b"\xff" * 60),
}


@pytest.mark.parametrize("case", sorted(CORRUPT))
def test_b16_corrupt_stream(scripted: Factory, client: nodelay.Client, case: str) -> None:
    coding, body = CORRUPT[case]
    hostile_case(
        scripted, client, [Recv(), Send(encoded_response(body, coding))], nodelay.DecodingError
    )


@pytest.mark.parametrize(("route", "coding"), [("brotli", "br"), ("zstd", "zstd")])
def test_b16_truncated_br_and_zstd(
    scripted: Factory,
    client: nodelay.Client,
    server: _core.TestServer,
    route: str,
    coding: str,
) -> None:
    raw = _raw_from_server(server, f"/{route}/100000")
    assert len(raw) > 20
    truncated = raw[: len(raw) // 2]
    hostile_case(
        scripted,
        client,
        [Recv(), Send(encoded_response(truncated, coding))],
        nodelay.DecodingError,
    )
    # The whole stream, replayed, decodes: the truncation is what failed.
    full = scripted([Recv(), Send(encoded_response(raw, coding))])
    assert len(client.get(full.url + "/").content) == 100_000


def test_b16_multi_member_gzip_decodes_every_member(
    scripted: Factory, client: nodelay.Client
) -> None:
    members = [gzip.compress(b"member %d;" % i, mtime=0) for i in range(50)]
    srv = scripted([Recv(), Send(encoded_response(b"".join(members), "gzip", chunked=True))])
    assert client.get(srv.url + "/").content == b"".join(b"member %d;" % i for i in range(50))


def test_b16_multi_member_gzip_with_a_corrupt_second_member(
    scripted: Factory, client: nodelay.Client
) -> None:
    body = gzip.compress(b"first", mtime=0) + b"\x1f\x8b\x08garbage"
    hostile_case(
        scripted, client, [Recv(), Send(encoded_response(body, "gzip"))], nodelay.DecodingError
    )
