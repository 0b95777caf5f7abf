"""Auth: Basic, Digest (RFC 7616, checked by a server computing the digest itself), Bearer,
function auth, ``.netrc`` through ``$NETRC``, and credentials never leaving the origin."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import nodelay
import pytest

pytestmark = pytest.mark.both_drivers

USER, PASSWORD = "alice", "s3cr3t wörd"
NONCE, OPAQUE, REALM = (
    "dcd98b7102dd2f0e8b11d0f600bfb0c093",
    "5ccc069c403ebaf9f0171e9517f40e41",
    "t@x",
)
HASHES = {"MD5": "md5", "SHA-256": "sha256", "SHA-512-256": "sha512_256"}


def expected_digest(fields: dict[str, str], method: str, password: str = PASSWORD) -> str:
    """RFC 7616 §3.4.1, written independently of nodelay's implementation."""
    algorithm = fields.get("algorithm", "MD5")
    sess = algorithm.upper().endswith("-SESS")
    name = HASHES[algorithm[:-5] if sess else algorithm]

    def h(text: str) -> str:
        return hashlib.new(name, text.encode("utf-8")).hexdigest()

    ha1 = h(f"{fields['username']}:{fields['realm']}:{password}")
    if sess:
        ha1 = h(f"{ha1}:{fields['nonce']}:{fields['cnonce']}")
    ha2 = h(f"{method}:{fields['uri']}")
    if "qop" not in fields:
        return h(f"{ha1}:{fields['nonce']}:{ha2}")
    return h(f"{ha1}:{fields['nonce']}:{fields['nc']}:{fields['cnonce']}:{fields['qop']}:{ha2}")


def parse_digest(header: str) -> dict[str, str]:
    assert header.startswith("Digest ")
    return {
        m.group(1): m.group(2) if m.group(2) is not None else m.group(3)
        for m in re.finditer(r'(\w+)=(?:"((?:[^"\\]|\\.)*)"|([^,\s]+))', header[7:])
    }


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: AuthServer

    def log_message(self, *args: object) -> None:
        pass

    def reply(self, status: int, body: object, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        self.rfile.read(length)
        self.do_GET()

    def do_GET(self) -> None:
        auth = self.headers.get("Authorization")
        self.server.seen.append((self.command, self.path, auth))
        path, _, query = self.path.partition("?")
        if path == "/redirect":
            self.reply(302, {}, {"Location": query.removeprefix("to=")})
        elif path == "/headers":
            self.reply(200, {"authorization": auth})
        elif path == "/basic":
            token = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
            if auth == f"Basic {token}":
                self.reply(200, {"user": USER})
            else:
                self.reply(401, {}, {"WWW-Authenticate": 'Basic realm="t"'})
        elif path.startswith("/digest/"):
            self.digest(path.split("/")[2], path.split("/")[3], auth)
        else:
            self.reply(404, {})

    def digest(self, algorithms: str, qop: str, auth: str | None) -> None:
        challenges = [
            f'Digest realm="{REALM}", nonce="{NONCE}", algorithm={a}, opaque="{OPAQUE}"'
            + (f', qop="{qop}"' if qop != "none" else "")
            for a in algorithms.split(",")
        ]
        if auth is not None and auth.startswith("Digest "):
            fields = parse_digest(auth)
            self.server.digests.append(fields)
            ok = (
                fields["username"] == USER
                and fields["realm"] == REALM
                and fields["nonce"] == NONCE
                and fields.get("opaque") == OPAQUE
                and fields["uri"] == self.path
                and fields["response"] == expected_digest(fields, self.command)
            )
            if ok:
                self.reply(200, {"user": USER, "nc": fields.get("nc")})
                return
        self.send_response(401)
        for challenge in challenges:
            self.send_header("WWW-Authenticate", challenge)
        self.send_header("Content-Length", "0")
        self.end_headers()


class AuthServer(ThreadingHTTPServer):
    daemon_threads = True
    seen: list[tuple[str, str, str | None]]
    digests: list[dict[str, str]]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


def start() -> AuthServer:
    srv = AuthServer(("127.0.0.1", 0), Handler)
    srv.seen, srv.digests = [], []
    threading.Thread(target=srv.serve_forever, args=(0.02,), daemon=True).start()
    return srv


@pytest.fixture
def auth_server() -> Iterator[AuthServer]:
    srv = start()
    yield srv
    srv.shutdown()
    srv.server_close()


@pytest.fixture
def other_auth_server() -> Iterator[AuthServer]:
    srv = start()
    yield srv
    srv.shutdown()
    srv.server_close()


@pytest.fixture(autouse=True)
def no_netrc(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Tests never read the real ~/.netrc."""
    monkeypatch.setenv("NETRC", str(tmp_path / "no-such-netrc"))


# -- Basic, Bearer, function ----------------------------------------------------------------


def test_basic_tuple_object_client_and_module(auth_server: AuthServer) -> None:
    url = auth_server.url + "/basic"
    assert nodelay.get(url).status_code == 401
    assert nodelay.get(url, auth=(USER, PASSWORD)).json() == {"user": USER}
    with nodelay.Client(auth=nodelay.BasicAuth(USER, PASSWORD)) as c:
        assert c.get(url).status_code == 200
        assert c.get(url, auth=(USER, "wrong")).status_code == 401
        assert c.post(url, json={}).status_code == 200
        c.auth = None
        assert c.get(url).status_code == 401


def test_bearer_and_function_auth(auth_server: AuthServer) -> None:
    url = auth_server.url + "/headers"
    r = nodelay.get(url, auth=nodelay.BearerAuth("tok"))
    assert r.json() == {"authorization": "Bearer tok"}

    def sign(request: nodelay.Request) -> nodelay.Request:
        request.headers["Authorization"] = f"Custom {request.method} {request.url}"
        return request

    with nodelay.Client(auth=sign) as c:
        assert c.get(url).json() == {"authorization": f"Custom GET {url}"}
    with pytest.raises(TypeError):
        nodelay.Client(auth="just a string")  # type: ignore[arg-type]


# -- Digest -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "algorithms",
    ["MD5", "SHA-256", "MD5-sess", "SHA-256-sess", "SHA-512-256"],
)
def test_digest_challenge_and_retry(auth_server: AuthServer, algorithms: str) -> None:
    url = f"{auth_server.url}/digest/{algorithms}/auth?x=1"
    with nodelay.Client(auth=nodelay.DigestAuth(USER, PASSWORD)) as c:
        r = c.get(url)
        assert r.status_code == 200 and r.json() == {"user": USER, "nc": "00000001"}
        assert [a is None for _, _, a in auth_server.seen] == [True, False]
        assert auth_server.digests[0]["algorithm"] == algorithms
        # The next request reuses the challenge: one round trip, next nonce count.
        r = c.post(url, content=b"body")
        assert r.json() == {"user": USER, "nc": "00000002"}
        assert len(auth_server.seen) == 3


def test_digest_prefers_sha256_and_handles_no_qop(auth_server: AuthServer) -> None:
    digest = nodelay.DigestAuth(USER, PASSWORD)
    r = nodelay.get(f"{auth_server.url}/digest/MD5,SHA-256/auth", auth=digest)
    assert r.status_code == 200 and auth_server.digests[-1]["algorithm"] == "SHA-256"
    r = nodelay.get(f"{auth_server.url}/digest/MD5/none", auth=nodelay.DigestAuth(USER, PASSWORD))
    assert r.status_code == 200 and "qop" not in auth_server.digests[-1]


def test_digest_wrong_password_gives_the_401(auth_server: AuthServer) -> None:
    r = nodelay.get(f"{auth_server.url}/digest/MD5/auth", auth=nodelay.DigestAuth(USER, "no"))
    assert r.status_code == 401
    assert len(auth_server.seen) == 2  # one retry, no loop


def test_digest_ignores_non_digest_401(auth_server: AuthServer) -> None:
    r = nodelay.get(auth_server.url + "/basic", auth=nodelay.DigestAuth(USER, PASSWORD))
    assert r.status_code == 401 and len(auth_server.seen) == 1


# -- .netrc -----------------------------------------------------------------------------------


def write_netrc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, host: str) -> None:
    path = tmp_path / "netrc"
    path.write_text(f"machine {host}\n  login {USER}\n  password {PASSWORD.replace(' ', '_')}\n")
    monkeypatch.setenv("NETRC", str(path))


def test_netrc_only_with_netrc_auth_as_in_httpx(
    auth_server: AuthServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Top-level nodelay follows httpx: a ``.netrc`` entry for the host is sent only with
    ``auth=NetRCAuth()``, never on its own. httpx, in the same test, is the oracle."""
    import httpx

    write_netrc(tmp_path, monkeypatch, "127.0.0.1")
    # NetRCAuth() reads ~/.netrc (the stdlib's netrc default), not $NETRC.
    monkeypatch.setenv("HOME", str(tmp_path))
    home_netrc = tmp_path / ".netrc"
    home_netrc.write_text((tmp_path / "netrc").read_text())
    home_netrc.chmod(0o600)  # the stdlib refuses a ~/.netrc others may read
    url = auth_server.url + "/headers"
    expected = "Basic " + base64.b64encode(f"{USER}:s3cr3t_wörd".encode()).decode()
    for lib in (httpx, nodelay):
        with lib.Client() as c:
            assert c.get(url).json() == {"authorization": None}, lib
        assert lib.get(url).json() == {"authorization": None}, lib
        with lib.Client(auth=lib.NetRCAuth()) as c:
            assert c.get(url).json() == {"authorization": expected}, lib
            # A host that is not in the file gets nothing.
            other = url.replace("127.0.0.1", "localhost")
            assert c.get(other).json() == {"authorization": None}, lib
        assert lib.get(url, auth=lib.NetRCAuth()).json() == {"authorization": expected}, lib
        # NetRCAuth(file) reads that file.
        with lib.Client(auth=lib.NetRCAuth(str(tmp_path / "netrc"))) as c:
            assert c.get(url).json() == {"authorization": expected}, lib


@pytest.mark.sync_only("nodelay.requests has no async client")
def test_requests_facade_reads_netrc_as_requests_does(
    auth_server: AuthServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``nodelay.requests`` keeps requests' default: ``.netrc`` is used without ``auth``
    when ``trust_env`` (requests, in the same test, is the oracle)."""
    import nodelay.requests
    import requests

    write_netrc(tmp_path, monkeypatch, "127.0.0.1")
    url = auth_server.url + "/headers"
    # requests encodes str credentials as Latin-1.
    expected = "Basic " + base64.b64encode(f"{USER}:s3cr3t_wörd".encode("latin-1")).decode()
    for lib in (requests, nodelay.requests):
        assert lib.get(url).json() == {"authorization": expected}, lib
        with lib.Session() as s:
            assert s.get(url).json() == {"authorization": expected}, lib
            s.trust_env = False
            assert s.get(url).json() == {"authorization": None}, lib


# -- redirects --------------------------------------------------------------------------------


def test_auth_kept_on_same_origin_redirect(auth_server: AuthServer) -> None:
    url = f"{auth_server.url}/redirect?to=/basic"
    r = nodelay.get(url, auth=(USER, PASSWORD), follow_redirects=True)
    assert r.status_code == 200 and r.json() == {"user": USER}


@pytest.mark.parametrize("how", ["tuple", "client", "header", "netrc"])
def test_redirect_to_another_port_drops_authorization(
    auth_server: AuthServer,
    other_auth_server: AuthServer,
    how: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """E22: same host, other port = other origin: no Authorization there, and auth (from
    any source, .netrc included) is not applied again."""
    target = other_auth_server.url + "/headers"
    url = f"{auth_server.url}/redirect?to={target}"
    auth: nodelay.Auth | tuple[str, str] | None = None
    if how == "netrc":
        write_netrc(tmp_path, monkeypatch, "127.0.0.1")
        auth = nodelay.NetRCAuth(str(tmp_path / "netrc"))
    elif how == "client":
        auth = (USER, PASSWORD)
    client = nodelay.Client(follow_redirects=True, auth=auth)
    with client:
        if how == "tuple":
            r = client.get(url, auth=(USER, PASSWORD))
        elif how == "header":
            r = client.get(url, headers={"Authorization": "Bearer leak"})
        else:
            r = client.get(url)
    assert r.json() == {"authorization": None}
    assert auth_server.seen[0][2] is not None
    assert other_auth_server.seen == [("GET", "/headers", None)]
