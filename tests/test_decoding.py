"""Content-Encoding: gzip/deflate/br/zstd decoded by default, multi-member gzip, corrupt
streams, too many layers, and the decompression-bomb bounds (docs/hostile.md B14-B16)."""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Callable

import nodelay
import pytest
from nodelay import _core
from scripted import Recv, ScriptedServer, Send

pytestmark = pytest.mark.both_drivers

Scripted = Callable[..., ScriptedServer]
PATTERN = b"abcdefghijklmnopqrstuvwxyz0123456789"


def pattern(n: int) -> bytes:
    return (PATTERN * (n // len(PATTERN) + 1))[:n]


def response(body: bytes, encoding: str) -> bytes:
    head = f"HTTP/1.1 200 OK\r\nContent-Encoding: {encoding}\r\nContent-Length: {len(body)}\r\n\r\n"
    return head.encode() + body


@pytest.mark.parametrize("route", ["gzip", "deflate", "brotli", "zstd"])
def test_server_codings_decoded(server: _core.TestServer, route: str) -> None:
    with nodelay.Client() as client:
        for n in (0, 1000, 300_000):
            r = client.get(f"{server.url}/{route}/{n}")
            assert r.status_code == 200
            assert r.content == pattern(n)


def test_accept_encoding_sent_by_default(server: _core.TestServer) -> None:
    r = nodelay.get(f"{server.url}/headers")
    assert r.json()["headers"]["accept-encoding"] == "gzip, deflate, br, zstd"


def test_multi_member_gzip_decodes_every_member(scripted: Scripted) -> None:
    body = gzip.compress(b"first,") + gzip.compress(b"second")
    srv = scripted([Recv(), Send(response(body, "gzip"))])
    assert nodelay.get(srv.url).content == b"first,second"


def test_raw_deflate_accepted(scripted: Scripted) -> None:
    raw = zlib.compressobj(wbits=-15)
    body = raw.compress(b"raw deflate body") + raw.flush()
    srv = scripted([Recv(), Send(response(body, "deflate"))])
    assert nodelay.get(srv.url).content == b"raw deflate body"


def test_stacked_codings_undone_in_reverse_order(scripted: Scripted) -> None:
    body = gzip.compress(zlib.compress(b"layered"))
    srv = scripted([Recv(), Send(response(body, "deflate, gzip"))])
    assert nodelay.get(srv.url).content == b"layered"


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "br", "zstd"])
def test_corrupt_stream_raises_decoding_error(encoding: str, scripted: Scripted) -> None:
    srv = scripted([Recv(), Send(response(b"\x1f\x8b not really compressed", encoding))])
    with pytest.raises(nodelay.DecodingError) as info:
        nodelay.get(srv.url)
    assert info.value.url is not None and info.value.url.startswith(srv.url)


def test_six_layers_refused(scripted: Scripted) -> None:
    body = b"x"
    for _ in range(6):
        body = gzip.compress(body)
    srv = scripted([Recv(), Send(response(body, ", ".join(["gzip"] * 6)))])
    with pytest.raises(nodelay.DecodingError, match="more than 5 content codings"):
        nodelay.get(srv.url)


def test_nested_gzip_bomb_stops_at_ratio_guard(scripted: Scripted) -> None:
    # 256 MiB of zeros, gzip of gzip: a few KiB on the wire, ~10^5:1.
    inner = zlib.compressobj(9, zlib.DEFLATED, 31)
    chunk = bytes(1 << 20)
    parts = [inner.compress(chunk) for _ in range(256)]
    parts.append(inner.flush())
    bomb = gzip.compress(b"".join(parts), 9)
    assert len(bomb) < 64 * 1024
    srv = scripted([Recv(), Send(response(bomb, "gzip, gzip"))])
    with pytest.raises(nodelay.DecodingError, match="ratio"):
        nodelay.get(srv.url)


def test_unknown_coding_delivered_as_received(scripted: Scripted) -> None:
    srv = scripted([Recv(), Send(response(b"opaque", "x-custom"))])
    assert nodelay.get(srv.url).content == b"opaque"


def test_head_with_content_encoding_has_empty_body(scripted: Scripted) -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 20\r\n\r\n"
    srv = scripted([Recv(), Send(head)])
    assert nodelay.head(srv.url).content == b""
