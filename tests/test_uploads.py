"""Uploads: ``content=`` iterables and files, ``files=`` multipart, streamed by the engine."""

from __future__ import annotations

import email.parser
import email.policy
import hashlib
import http.server
import io
import os
import ssl
import threading
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import nodelay
import pytest
import trustme
from nodelay import _core
from nodelay._prepare import encode_body as _encode_body
from scripted import Close, Recv, ScriptedServer, Send, response

pytestmark = pytest.mark.both_drivers

MIB = 1024 * 1024


def _chunks(*pieces: bytes) -> Iterator[bytes]:
    yield from pieces


def _anything(client: nodelay.Client, server: _core.TestServer, **kwargs: object) -> dict:
    r = client.post(f"{server.url}/anything", **kwargs)  # type: ignore[arg-type]
    assert r.status_code == 200
    data: dict = r.json()
    data["headers"] = {k: v for k, v in data["headers"]}
    return data


def _parse_multipart(content_type: str, body: bytes) -> list[tuple[str, dict[str, str], bytes]]:
    """(name, part headers, content) of each part, parsed by Python's ``email`` package."""
    raw = f"Content-Type: {content_type}\r\n\r\n".encode() + body
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(raw)
    assert message.is_multipart()
    parts = []
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        payload = part.get_payload(decode=True)
        parts.append((str(name), {k.lower(): str(v) for k, v in part.items()}, payload or b""))
    return parts


@pytest.fixture
def big_file(tmp_path: Path) -> Path:
    path = tmp_path / "big.bin"
    block = bytes(range(256)) * 4096  # 1 MiB
    with path.open("wb") as f:
        for _ in range(6):
            f.write(block)
        f.write(b"tail")
    return path


# ---------------------------------------------------------------- content= iterables


def test_generator_content_is_sent_chunked(
    client: nodelay.Client, server: _core.TestServer
) -> None:
    data = _anything(client, server, content=_chunks(b"hello ", b"", b"streamed ", b"world"))
    assert data["headers"].get("transfer-encoding") == "chunked"
    assert "content-length" not in data["headers"]
    assert data["body"] == "hello streamed world"


@pytest.mark.sync_only("module-level nodelay.post is Client whatever the driver")
def test_chunked_bytes_on_the_wire() -> None:
    with ScriptedServer([Recv(), Send(response(body=b"ok")), Close()]) as srv:
        # The scripted server reads the whole chunked request before it answers.
        nodelay.post(srv.url + "/up", content=_chunks(b"ab", b"cde"))
        assert srv.wait_finished(1)
        raw = bytes(srv.conns[0].received)
    head, _, body = raw.partition(b"\r\n\r\n")
    assert b"\r\nTransfer-Encoding: chunked" in head
    assert body == b"2\r\nab\r\n3\r\ncde\r\n0\r\n\r\n"


def test_list_of_bytes_can_be_replayed(client: nodelay.Client, server: _core.TestServer) -> None:
    upload = _core.Upload([[b"a", b"b"]])
    assert upload.length is None
    for _ in range(2):
        r = client.post(f"{server.url}/echo", content=upload)  # type: ignore[arg-type]
        assert r.content == b"ab"
    assert upload.replayable


def test_generator_error_propagates_as_is(client: nodelay.Client, server: _core.TestServer) -> None:
    class Boom(Exception):
        pass

    def gen() -> Iterator[bytes]:
        yield b"first"
        raise Boom("generator failed")

    with pytest.raises(Boom, match="generator failed"):
        client.post(f"{server.url}/echo", content=gen())
    # The connection that carried half a body is not reused for the next request.
    assert client.post(f"{server.url}/echo", content=b"x").content == b"x"


def test_iterator_of_non_bytes_is_a_type_error(
    client: nodelay.Client, server: _core.TestServer
) -> None:
    with pytest.raises(TypeError, match="must yield bytes, got str"):
        client.post(f"{server.url}/echo", content=iter(["text"]))


def test_consumed_generator_cannot_be_sent_again(
    client: nodelay.Client, server: _core.TestServer
) -> None:
    upload = _core.Upload([_chunks(b"once")])
    assert upload.replayable
    assert client.post(f"{server.url}/echo", content=upload).content == b"once"  # type: ignore[arg-type]
    assert not upload.replayable
    with pytest.raises(nodelay.StreamConsumed):
        client.post(f"{server.url}/echo", content=upload)  # type: ignore[arg-type]


def test_redirect_307_with_a_generator_raises_stream_consumed(
    client: nodelay.Client, server: _core.TestServer
) -> None:
    # httpx's behaviour: the body cannot be sent again, so following the 307 raises.
    url = f"{server.url}/redirect-to?url=/echo&status_code=307"
    with pytest.raises(nodelay.StreamConsumed):
        client.post(url, content=_chunks(b"abc"), follow_redirects=True)


def test_redirect_307_replays_a_seekable_file(
    client: nodelay.Client, server: _core.TestServer, tmp_path: Path
) -> None:
    path = tmp_path / "f.txt"
    path.write_bytes(b"file body")
    url = f"{server.url}/redirect-to?url=/echo&status_code=307"
    with path.open("rb") as f:
        r = client.post(url, content=f, follow_redirects=True)
    assert r.status_code == 200
    assert [h.status_code for h in r.history] == [307]
    assert r.content == b"file body"


# ---------------------------------------------------------------- content= files


def test_file_content_has_content_length_and_streams(
    client: nodelay.Client, server: _core.TestServer, big_file: Path
) -> None:
    size = big_file.stat().st_size
    with big_file.open("rb") as f:
        f.seek(10)  # sent from the current position, as requests and httpx do
        r = client.put(f"{server.url}/echo", content=f)
    assert r.content == big_file.read_bytes()[10:]
    assert len(r.content) == size - 10


def test_file_upload_memory_is_not_proportional_to_its_size(
    server: _core.TestServer, big_file: Path
) -> None:
    # /count reads the body and answers only its length, so every Python allocation
    # seen here is the client's: the engine reads the file into one reused buffer
    # (readinto), nothing the size of the file.
    with nodelay.Client() as client, big_file.open("rb") as f:
        tracemalloc.start()
        try:
            r = client.put(f"{server.url}/count", content=f)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert r.json() == {"body_len": big_file.stat().st_size}
    assert peak < MIB, peak


def test_multipart_file_upload_memory_is_not_proportional(
    server: _core.TestServer, big_file: Path
) -> None:
    with nodelay.Client() as client, big_file.open("rb") as f:
        tracemalloc.start()
        try:
            r = client.post(f"{server.url}/count", files={"big": f}, data={"a": "1"})
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert r.json()["body_len"] > big_file.stat().st_size
    assert peak < MIB, peak


def test_bytesio_content_uses_its_size(client: nodelay.Client, server: _core.TestServer) -> None:
    data = _anything(client, server, content=io.BytesIO(b"in memory"))
    assert data["headers"]["content-length"] == "9"
    assert data["body"] == "in memory"


def test_unsized_file_is_sent_chunked(client: nodelay.Client, server: _core.TestServer) -> None:
    read_fd, write_fd = os.pipe()
    os.write(write_fd, b"from a pipe")
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as pipe:
        data = _anything(client, server, content=pipe)
    assert data["headers"].get("transfer-encoding") == "chunked"
    assert data["body"] == "from a pipe"


def test_text_mode_file_is_refused(
    client: nodelay.Client, server: _core.TestServer, tmp_path: Path
) -> None:
    path = tmp_path / "t.txt"
    path.write_text("text")
    with path.open() as f, pytest.raises(TypeError, match="binary mode"):
        client.post(f"{server.url}/echo", content=f)


def test_file_that_shrinks_during_upload_fails(
    client: nodelay.Client, server: _core.TestServer, tmp_path: Path
) -> None:
    path = tmp_path / "shrinks.bin"
    path.write_bytes(b"x" * 100)
    with path.open("rb") as f:
        upload = _core.Upload([(f, 200)])
        with pytest.raises(ValueError, match="changed during the upload"):
            client.post(f"{server.url}/echo", content=upload)  # type: ignore[arg-type]


# ---------------------------------------------------------------- files= multipart


def test_multipart_fields_and_files_parse_back(
    client: nodelay.Client, server: _core.TestServer, tmp_path: Path
) -> None:
    path = tmp_path / "report.csv"
    path.write_bytes(b"a,b\n1,2\n")
    with path.open("rb") as f:
        r = client.post(
            f"{server.url}/echo",
            data={"title": "Q3", "tags": ["x", "y"]},
            files={
                "report": f,
                "note": ("note.txt", b"hello", "text/plain"),
                "meta": ("m.json", '{"k": 1}', "application/json", {"X-Part": "7"}),
            },
        )
    content_type = r.headers["content-type"]
    assert content_type.startswith("multipart/form-data; boundary=")
    parts = _parse_multipart(content_type, r.content)
    assert [(name, body) for name, _, body in parts] == [
        ("title", b"Q3"),
        ("tags", b"x"),
        ("tags", b"y"),
        ("report", b"a,b\n1,2\n"),
        ("note", b"hello"),
        ("meta", b'{"k": 1}'),
    ]
    headers = {name: h for name, h, _ in parts}
    assert headers["report"]["content-disposition"] == (
        'form-data; name="report"; filename="report.csv"'
    )
    assert headers["report"]["content-type"] == "text/csv"
    assert headers["note"]["content-type"] == "text/plain"
    assert headers["meta"]["x-part"] == "7"


def test_multipart_repeated_file_names_from_a_list(
    client: nodelay.Client, server: _core.TestServer
) -> None:
    r = client.post(
        f"{server.url}/echo",
        files=[("f", ("a.bin", b"A")), ("f", ("b.bin", b"B"))],
    )
    parts = _parse_multipart(r.headers["content-type"], r.content)
    assert [(n, h["content-disposition"], b) for n, h, b in parts] == [
        ("f", 'form-data; name="f"; filename="a.bin"', b"A"),
        ("f", 'form-data; name="f"; filename="b.bin"', b"B"),
    ]
    assert parts[0][1]["content-type"] == "application/octet-stream"


def test_multipart_exact_bytes_and_filename_escaping() -> None:
    body, content_type = _encode_body(
        "POST", None, {"k": "v"}, None, {"f": ('a"b\\c\r\nd.txt', b"data", "text/plain")}
    )
    assert isinstance(body, bytes), "a small multipart is one bytes body (one write)"
    assert content_type is not None
    boundary = content_type.partition("boundary=")[2].encode()
    assert len(boundary) == 32
    assert body == (
        b"--" + boundary + b"\r\n"
        b'Content-Disposition: form-data; name="k"\r\n\r\nv\r\n'
        b"--" + boundary + b"\r\n"
        b'Content-Disposition: form-data; name="f"; filename="a%22b\\\\c%0D%0Ad.txt"\r\n'
        b"Content-Type: text/plain\r\n\r\ndata\r\n"
        b"--" + boundary + b"--\r\n"
    )
    again = _encode_body("POST", None, None, None, {"f": b"x"})[1]
    assert again != content_type, "the boundary is random per request"


def test_small_multipart_with_a_real_file_is_one_body(tmp_path: Path) -> None:
    path = tmp_path / "small.txt"
    path.write_bytes(b"small")
    with path.open("rb") as f:
        body, _ = _encode_body("POST", None, None, None, {"f": f})
    assert isinstance(body, bytes)
    assert b"\r\n\r\nsmall\r\n" in body


def test_large_multipart_is_streamed_with_exact_length(
    client: nodelay.Client, server: _core.TestServer, big_file: Path
) -> None:
    with big_file.open("rb") as f:
        body, content_type = _encode_body("POST", None, {"a": "1"}, None, {"big": f})
        assert isinstance(body, _core.Upload)
        assert body.length is not None
        r = client.post(
            f"{server.url}/echo", content=body, headers={"Content-Type": content_type or ""}
        )  # type: ignore[arg-type]
    assert len(r.content) == body.length
    parts = _parse_multipart(r.headers["content-type"], r.content)
    assert [name for name, _, _ in parts] == ["a", "big"]
    assert parts[1][2] == big_file.read_bytes()


def test_multipart_through_the_client_sends_content_length(
    client: nodelay.Client, server: _core.TestServer, big_file: Path
) -> None:
    with big_file.open("rb") as f:
        data = _anything(client, server, files={"big": f})
    length = int(data["headers"]["content-length"])
    assert length == data["body_len"] > big_file.stat().st_size


def test_multipart_with_an_unsized_file_is_chunked(
    client: nodelay.Client, server: _core.TestServer
) -> None:
    read_fd, write_fd = os.pipe()
    os.write(write_fd, b"piped")
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as pipe:
        r = client.post(f"{server.url}/echo", files={"p": ("p.bin", pipe)})
    parts = _parse_multipart(r.headers["content-type"], r.content)
    assert parts[0][2] == b"piped"


def test_files_argument_errors() -> None:
    with pytest.raises(TypeError, match="files= combines with data= only"):
        _encode_body("POST", None, None, {"j": 1}, {"f": b"x"})
    with pytest.raises(TypeError, match="data= must be a dict"):
        _encode_body("POST", None, "raw", None, {"f": b"x"})
    with pytest.raises(TypeError, match="must be a binary file, bytes or str"):
        _encode_body("POST", None, None, None, {"f": ("n", 3)})
    with pytest.raises(ValueError, match="CR or LF"):
        _encode_body("POST", None, None, None, {"f": ("n", b"", "a/b", {"X": "1\r\nY: 2"})})


def test_tuple_of_bytes_is_content_like_a_list(
    client: nodelay.Client, server: _core.TestServer
) -> None:
    data = _anything(client, server, content=(b"a", b"b", b"c"))
    assert data["body"] == "abc"
    assert data["headers"].get("transfer-encoding") == "chunked"


@pytest.mark.sync_only(
    "iter_bytes() is sync streaming; test_async_uploads.py has it with aiter_bytes()"
)
def test_streamed_response_to_a_streamed_upload(
    client: nodelay.Client, server: _core.TestServer
) -> None:
    with client.stream("PUT", f"{server.url}/echo", content=_chunks(b"up", b"load")) as r:
        assert b"".join(r.iter_bytes()) == b"upload"


def test_module_level_post_with_files(server: _core.TestServer) -> None:
    r = nodelay.post(f"{server.url}/echo", files={"f": ("f.txt", b"body")}, data={"k": "v"})
    names = [name for name, _, _ in _parse_multipart(r.headers["content-type"], r.content)]
    assert names == ["k", "f"]


# ---------------------------------------------------------------- over TLS


class _DigestHandler(http.server.BaseHTTPRequestHandler):
    """Answers any PUT with the SHA-256 of the body it read (Content-Length or chunked)."""

    protocol_version = "HTTP/1.1"

    def do_PUT(self) -> None:
        digest = hashlib.sha256()
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            while size := int(self.rfile.readline().strip(), 16):
                digest.update(self.rfile.read(size))
                self.rfile.readline()
            self.rfile.readline()
        else:
            left = int(self.headers["Content-Length"])
            while left:
                piece = self.rfile.read(min(left, 65536))
                digest.update(piece)
                left -= len(piece)
        body = digest.hexdigest().encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_streamed_uploads_over_tls(big_file: Path, tmp_path: Path) -> None:
    ca = trustme.CA()
    ca_path = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(ca_path))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _DigestHandler)
    server.daemon_threads = True
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ca.issue_cert("localhost").configure_cert(ctx)
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"https://localhost:{server.server_address[1]}/up"
    expected = hashlib.sha256(big_file.read_bytes()).hexdigest()
    try:
        with nodelay.Client(verify=str(ca_path)) as client:
            with big_file.open("rb") as f:
                assert client.put(url, content=f).text == expected
            with big_file.open("rb") as f:
                pieces = iter(lambda: f.read(100_000), b"")
                assert client.put(url, content=pieces).text == expected
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
