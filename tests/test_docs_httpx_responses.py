"""httpx's documented idioms for responses, streaming, exceptions and text encodings
(quickstart "Response Content" and "Streaming Responses", advanced "Streaming" and
"Monitoring download progress", the exceptions page, and "Character set encodings and
auto-detection"), run with ``httpx`` itself and with ``nodelay`` imported in its place, in
the same run: a test that fails on httpx is a wrong test, one that fails on nodelay is a
broken promise of issue 15. The server is PyPI's httpbin under waitress (conftest.py's
``httpbin``), or a ``MockTransport`` handler where the docs build the response.
"""

from __future__ import annotations

import asyncio
import io
from types import ModuleType
from typing import Any

import pytest

httpx = pytest.importorskip("httpx")

LATIN_1_TEXT = "Verträge über Größe, café"
"""Text whose Latin-1 bytes are not valid UTF-8."""


# -- quickstart: response content -------------------------------------------------------------


def test_response_content_text_binary_and_json(hx: ModuleType, httpbin: str) -> None:
    r = hx.get(f"{httpbin}/encoding/utf8")
    assert r.encoding == "utf-8"
    assert "∮ E⋅da = Q" in r.text
    assert r.content.decode("utf-8") == r.text
    r = hx.get(f"{httpbin}/encoding/utf8")
    r.encoding = "ISO-8859-1"  # before .text is read (httpx refuses it after)
    assert r.encoding == "ISO-8859-1"
    assert r.text == r.content.decode("ISO-8859-1")
    r = hx.get(f"{httpbin}/json")
    assert r.json()["slideshow"]["author"] == "Yours Truly"
    assert r.headers["Content-Type"] == "application/json"
    assert r.headers.get("content-type") == "application/json"
    r = hx.get(f"{httpbin}/bytes/16", params={"seed": 1})
    assert isinstance(r.content, bytes) and len(r.content) == 16


def test_num_bytes_downloaded_of_a_read_response(hx: ModuleType, httpbin: str) -> None:
    r = hx.get(f"{httpbin}/bytes/1234")
    assert r.num_bytes_downloaded == 1234
    # Compressed: the counter is the bytes as sent, not the decoded body.
    r = hx.get(f"{httpbin}/gzip")
    assert r.json()["gzipped"] is True
    assert r.num_bytes_downloaded == int(r.headers["content-length"])
    assert r.num_bytes_downloaded < len(r.content)


# -- quickstart: streaming responses ---------------------------------------------------------


def test_streaming_iterators(hx: ModuleType, httpbin: str) -> None:
    with hx.stream("GET", f"{httpbin}/bytes/5000", params={"seed": 7}) as r:
        whole = b"".join(r.iter_bytes())
    assert len(whole) == 5000
    with hx.stream("GET", f"{httpbin}/bytes/5000", params={"seed": 7}) as r:
        assert b"".join(r.iter_bytes(chunk_size=1000)) == whole
    with hx.stream("GET", f"{httpbin}/stream/5") as r:
        lines = list(r.iter_lines())
    assert [line for line in lines if line][4].startswith("{")
    assert len([line for line in lines if line]) == 5
    with hx.stream("GET", f"{httpbin}/encoding/utf8") as r:
        text = "".join(r.iter_text())
    assert "∮ E⋅da = Q" in text
    with hx.stream("GET", f"{httpbin}/gzip") as r:
        raw = b"".join(r.iter_raw())
    import gzip
    import json

    assert json.loads(gzip.decompress(raw))["gzipped"] is True


def test_streamed_content_is_not_available_until_read(hx: ModuleType, httpbin: str) -> None:
    with hx.stream("GET", f"{httpbin}/bytes/100") as r:
        with pytest.raises(hx.ResponseNotRead):
            r.content  # noqa: B018
        with pytest.raises(hx.ResponseNotRead):
            r.text  # noqa: B018
        # "conditionally load the response body"
        if int(r.headers["Content-Length"]) < 1_000_000:
            r.read()
        assert len(r.content) == 100
        assert r.is_stream_consumed


def test_a_stream_is_read_once_and_not_after_close(hx: ModuleType, httpbin: str) -> None:
    with hx.stream("GET", f"{httpbin}/bytes/100") as r:
        assert sum(len(c) for c in r.iter_bytes()) == 100
        with pytest.raises(hx.StreamConsumed):
            list(r.iter_bytes())
        with pytest.raises(hx.StreamConsumed):
            r.read()
    with hx.stream("GET", f"{httpbin}/bytes/100") as r:
        pass
    assert r.is_closed
    with pytest.raises(hx.StreamClosed):
        list(r.iter_bytes())
    with pytest.raises(hx.StreamClosed):
        r.read()
    # Both are StreamErrors, which are RuntimeErrors (API misuse, not network trouble).
    assert issubclass(hx.StreamClosed, hx.StreamError)
    assert issubclass(hx.StreamConsumed, hx.StreamError)
    assert not issubclass(hx.StreamError, hx.HTTPError)


def test_monitoring_download_progress(hx: ModuleType, httpbin: str) -> None:
    download_file = io.BytesIO()
    updates: list[int] = []
    with hx.stream("GET", f"{httpbin}/bytes/50000", params={"seed": 3}) as response:
        total = int(response.headers["Content-Length"])
        num_bytes_downloaded = response.num_bytes_downloaded
        for chunk in response.iter_bytes():
            download_file.write(chunk)
            updates.append(response.num_bytes_downloaded - num_bytes_downloaded)
            num_bytes_downloaded = response.num_bytes_downloaded
    assert total == 50000 == sum(updates) == len(download_file.getvalue())
    assert response.num_bytes_downloaded == total


def test_manual_streaming_with_send(hx: ModuleType, httpbin: str) -> None:
    with hx.Client() as client:
        request = client.build_request("GET", f"{httpbin}/bytes/3000")
        r = client.send(request, stream=True)
        try:
            assert r.status_code == 200
            assert sum(len(chunk) for chunk in r.iter_bytes()) == 3000
        finally:
            r.close()
        assert r.is_closed


def test_async_streaming(hx: ModuleType, httpbin: str) -> None:
    async def main() -> tuple[int, int, int]:
        async with hx.AsyncClient() as client:
            async with client.stream("GET", f"{httpbin}/bytes/20000") as r:
                with pytest.raises(hx.ResponseNotRead):
                    r.content  # noqa: B018
                size = 0
                async for chunk in r.aiter_bytes():
                    size += len(chunk)
                downloaded = r.num_bytes_downloaded
            async with client.stream("GET", f"{httpbin}/stream/3") as r:
                lines = [line async for line in r.aiter_lines() if line]
            request = client.build_request("GET", f"{httpbin}/bytes/10")
            r = await client.send(request, stream=True)
            await r.aread()
            await r.aclose()
            assert len(r.content) == 10
            return size, downloaded, len(lines)

    assert asyncio.run(main()) == (20000, 20000, 3)


# -- responses built by transports -----------------------------------------------------------


def test_mock_transport_streams_a_response_body(hx: ModuleType) -> None:
    def handler(request: Any) -> Any:
        return hx.Response(200, content=iter([b"Hello, ", b"world!"]))

    with hx.Client(transport=hx.MockTransport(handler)) as client:
        r = client.get("https://example.org/")
        assert r.content == b"Hello, world!"
        assert r.headers["transfer-encoding"] == "chunked"
        assert r.num_bytes_downloaded == 13
        with client.stream("GET", "https://example.org/") as r:
            with pytest.raises(hx.ResponseNotRead):
                r.content  # noqa: B018
            assert list(r.iter_bytes()) == [b"Hello, ", b"world!"]


def test_response_stream_argument_and_manual_reads(hx: ModuleType) -> None:
    class Body(hx.SyncByteStream if hasattr(hx, "SyncByteStream") else object):  # type: ignore[misc]
        def __iter__(self) -> Any:
            yield b"abc"
            yield b"def"

    r = hx.Response(200, stream=Body())
    assert "content-length" not in r.headers and "transfer-encoding" not in r.headers
    with pytest.raises(hx.ResponseNotRead):
        r.content  # noqa: B018
    assert r.read() == b"abcdef" and r.content == b"abcdef"
    assert r.num_bytes_downloaded == 6

    async def pieces() -> Any:
        yield b"as"
        yield b"ync"

    async def main() -> bytes:
        r = hx.Response(200, content=pieces())
        with pytest.raises(RuntimeError):
            r.read()  # an async body is read with aread()
        return bytes(await r.aread())

    assert asyncio.run(main()) == b"async"


def test_streamed_request_bodies_reach_a_transport(hx: ModuleType) -> None:
    seen: list[bytes] = []

    class Echo(hx.BaseTransport):  # type: ignore[misc,name-defined]
        def handle_request(self, request: Any) -> Any:
            with pytest.raises(hx.RequestNotRead):
                request.content  # noqa: B018
            seen.append(request.read())
            return hx.Response(200, content=request.content)

    def body() -> Any:
        yield b"streamed "
        yield b"upload"

    with hx.Client(transport=Echo()) as client:
        assert client.post("https://example.org/", content=body()).content == b"streamed upload"
    assert seen == [b"streamed upload"]

    def handler(request: Any) -> Any:  # MockTransport reads the body before the handler
        return hx.Response(200, content=request.content)

    with hx.Client(transport=hx.MockTransport(handler)) as client:
        assert client.post("https://example.org/", content=body()).content == b"streamed upload"

    def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [environ["wsgi.input"].read()]

    with hx.Client(transport=hx.WSGITransport(app=app)) as client:
        assert client.post("http://testserver/", content=body()).text == "streamed upload"

    async def asgi(scope: dict[str, Any], receive: Any, send: Any) -> None:
        chunks = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"".join(chunks)})

    async def abody() -> Any:
        yield b"async "
        yield b"upload"

    async def main() -> str:
        async with hx.AsyncClient(transport=hx.ASGITransport(app=asgi)) as client:
            r = await client.post("http://testserver/", content=abody())
            return str(r.text)

    assert asyncio.run(main()) == "async upload"


# -- exceptions ------------------------------------------------------------------------------


def test_exceptions_page_idiom(hx: ModuleType, httpbin: str) -> None:
    messages = []
    for url in (f"{httpbin}/status/503", "http://127.0.0.1:9/"):
        try:
            response = hx.get(url)
            response.raise_for_status()
        except hx.RequestError as exc:
            messages.append(f"An error occurred while requesting {exc.request.url!r}.")
        except hx.HTTPStatusError as exc:
            messages.append(
                f"Error response {exc.response.status_code} while requesting {exc.request.url!r}."
            )
    assert messages[0].startswith("Error response 503 while requesting")
    assert messages[1].startswith("An error occurred while requesting")
    try:
        hx.get(f"{httpbin}/status/404").raise_for_status()
    except hx.HTTPError as exc:
        assert "404" in str(exc)


def test_exception_hierarchy_of_the_stream_and_cookie_errors(hx: ModuleType) -> None:
    for name in ("StreamConsumed", "StreamClosed", "ResponseNotRead", "RequestNotRead"):
        cls = getattr(hx, name)
        assert issubclass(cls, hx.StreamError) and issubclass(cls, RuntimeError)
        assert "`read()`" in str(cls()) or "stream" in str(cls()).lower()
        assert name in hx.__all__
    assert issubclass(hx.CookieConflict, Exception)
    assert not issubclass(hx.CookieConflict, hx.HTTPError)
    assert "CookieConflict" in hx.__all__


def test_cookie_conflict(hx: ModuleType) -> None:
    cookies = hx.Cookies()
    cookies.set("session", "a", domain="example.org")
    cookies.set("session", "b", domain="example.com")
    with pytest.raises(hx.CookieConflict):
        cookies.get("session")
    assert cookies.get("session", domain="example.com") == "b"
    cookies.set("single", "c", domain="example.org")
    assert cookies.get("single") == "c"


# -- text encodings ----------------------------------------------------------------------------


def _latin_1_handler(hx: ModuleType) -> Any:
    def handler(request: Any) -> Any:
        headers = {"Content-Type": "text/plain"}  # no charset
        return hx.Response(200, headers=headers, content=LATIN_1_TEXT.encode("latin-1"))

    return handler


def test_text_without_a_charset_is_utf_8_by_default(hx: ModuleType) -> None:
    with hx.Client(transport=hx.MockTransport(_latin_1_handler(hx))) as client:
        r = client.get("https://example.org/")
    assert r.charset_encoding is None
    assert r.encoding == "utf-8"
    assert "\ufffd" in r.text  # the Latin-1 bytes are not UTF-8


def test_default_encoding_as_a_name(hx: ModuleType, httpbin: str) -> None:
    with hx.Client(
        transport=hx.MockTransport(_latin_1_handler(hx)), default_encoding="latin-1"
    ) as client:
        r = client.get("https://example.org/")
    assert r.encoding == "latin-1" and r.text == LATIN_1_TEXT
    with hx.Client(default_encoding="latin-1") as client:
        r = client.get(f"{httpbin}/bytes/64", params={"seed": 5})  # no charset
        assert r.text == r.content.decode("latin-1")
        # A declared charset wins over the default.
        assert client.get(f"{httpbin}/encoding/utf8").encoding == "utf-8"
    with hx.Client(default_encoding="latin-1") as client:
        expected = client.get(f"{httpbin}/bytes/64", params={"seed": 5}).content.decode("latin-1")
        with client.stream("GET", f"{httpbin}/bytes/64", params={"seed": 5}) as r:
            assert "".join(r.iter_text()) == expected


def test_default_encoding_as_a_detector(hx: ModuleType) -> None:
    charset_normalizer = pytest.importorskip("charset_normalizer")
    calls: list[bytes] = []

    def autodetect(content: bytes) -> str | None:
        calls.append(content)
        best = charset_normalizer.from_bytes(content).best()
        return None if best is None else str(best.encoding)

    handler = _latin_1_handler(hx)
    with hx.Client(transport=hx.MockTransport(handler), default_encoding=autodetect) as client:
        r = client.get("https://example.org/")
        assert r.text == LATIN_1_TEXT
        assert calls == [LATIN_1_TEXT.encode("latin-1")]
        assert r.encoding and r.encoding == r.encoding  # decided once, kept
        assert len(calls) == 1

    async def main() -> str:
        async with hx.AsyncClient(
            transport=hx.MockTransport(handler), default_encoding=autodetect
        ) as client:
            return str((await client.get("https://example.org/")).text)

    assert asyncio.run(main()) == LATIN_1_TEXT


def test_setting_the_encoding_explicitly(hx: ModuleType) -> None:
    with hx.Client(transport=hx.MockTransport(_latin_1_handler(hx))) as client:
        r = client.get("https://example.org/")
        r.encoding = "latin-1"
        assert r.text == LATIN_1_TEXT


def test_an_empty_streamed_body_reads_as_empty(hx: ModuleType, httpbin: str) -> None:
    # Its stream is over as soon as the head is in, yet it was never closed by the caller.
    with hx.stream("GET", f"{httpbin}/status/204") as r:
        assert r.read() == b""

    async def main() -> bytes:
        async with hx.AsyncClient() as client:
            async with client.stream("GET", f"{httpbin}/status/401") as r:
                return bytes(await r.aread())

    assert asyncio.run(main()) == b""
