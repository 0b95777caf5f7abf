"""The idioms of httpx's "Authentication" and "SSL" pages, run with ``httpx`` itself and
with ``nodelay`` imported in its place, in the same run: a test that fails on httpx is a
wrong test, one that fails on nodelay is a broken promise of issue 15.

Authentication runs against PyPI's httpbin under waitress; SSL against a TLS server with
a certificate from a test CA (trustme).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import http.server
import ssl
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import nodelay
import pytest
import trustme
from nodelay import SSLContextWarning

httpx = pytest.importorskip("httpx")


def _run(coro: Any) -> Any:
    return asyncio.run(coro)


# -- Basic and Digest ------------------------------------------------------------------------


def test_basic_auth(hx: ModuleType, httpbin: str) -> None:
    auth = hx.BasicAuth(username="finley", password="secret")
    with hx.Client(auth=auth) as client:
        r = client.get(f"{httpbin}/basic-auth/finley/secret")
    assert r.json() == {"authenticated": True, "user": "finley"}
    r = hx.get(f"{httpbin}/basic-auth/finley/secret", auth=("finley", "secret"))
    assert r.status_code == 200


def test_digest_auth_keeps_the_challenge_in_history(hx: ModuleType, httpbin: str) -> None:
    auth = hx.DigestAuth(username="olivia", password="secret")
    with hx.Client(auth=auth) as client:
        r = client.get(f"{httpbin}/digest-auth/auth/olivia/secret")
    assert r.json() == {"authenticated": True, "user": "olivia"}
    assert [h.status_code for h in r.history] == [401]
    assert "digest" in r.history[0].headers["www-authenticate"].lower()
    assert r.history[0].history == []


def test_digest_auth_async(hx: ModuleType, httpbin: str) -> None:
    async def main() -> Any:
        async with hx.AsyncClient(auth=hx.DigestAuth("olivia", "secret")) as client:
            return await client.get(f"{httpbin}/digest-auth/auth/olivia/secret/SHA-256")

    r = _run(main())
    assert r.status_code == 200 and [h.status_code for h in r.history] == [401]


# -- NetRC ------------------------------------------------------------------------------------


def _netrc(path: Path, host: str = "127.0.0.1") -> str:
    path.write_text(f"machine {host}\nlogin finley\npassword secret\n")
    path.chmod(0o600)  # netrc refuses a password file others can read
    return str(path)


def test_netrc_auth_from_a_file(hx: ModuleType, httpbin: str, tmp_path: Path) -> None:
    auth = hx.NetRCAuth(file=_netrc(tmp_path / "netrc"))
    with hx.Client(auth=auth) as client:
        assert client.get(f"{httpbin}/basic-auth/finley/secret").status_code == 200
        # No entry for this host: the request goes without credentials.
        other = httpbin.replace("127.0.0.1", "localhost")
        assert client.get(f"{other}/basic-auth/finley/secret").status_code == 401


def test_netrc_auth_from_home(
    hx: ModuleType, httpbin: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _netrc(tmp_path / ".netrc")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("NETRC", raising=False)
    with hx.Client(auth=hx.NetRCAuth()) as client:
        assert client.get(f"{httpbin}/basic-auth/finley/secret").status_code == 200


def test_netrc_auth_missing_file(hx: ModuleType, tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        hx.NetRCAuth(file=str(tmp_path / "absent"))


# -- custom authentication schemes -----------------------------------------------------------


def test_custom_auth_header(hx: ModuleType, httpbin: str) -> None:
    class MyCustomAuth(hx.Auth):  # type: ignore[name-defined,misc]
        def __init__(self, token: str) -> None:
            self.token = token

        def auth_flow(self, request: Any) -> Any:
            request.headers["X-Authentication"] = self.token
            yield request

    with hx.Client(auth=MyCustomAuth("t-0")) as client:
        r = client.get(f"{httpbin}/headers")
    assert r.json()["headers"]["X-Authentication"] == "t-0"


def test_custom_auth_resends_on_401(hx: ModuleType, httpbin: str) -> None:
    class MyCustomAuth(hx.Auth):  # type: ignore[name-defined,misc]
        def auth_flow(self, request: Any) -> Any:
            response = yield request
            if response.status_code == 401:
                request.headers["Authorization"] = "Bearer t-1"
                yield request

    r = hx.get(f"{httpbin}/bearer", auth=MyCustomAuth())
    assert r.json() == {"authenticated": True, "token": "t-1"}
    assert [h.status_code for h in r.history] == [401]


class _Signing:
    """A signature over the request body (``requires_request_body``)."""

    key = b"k"

    @classmethod
    def sign(cls, body: bytes) -> str:
        return hmac.new(cls.key, body, hashlib.sha256).hexdigest()


def _signing_auth(hx: ModuleType) -> Any:
    class SignedAuth(hx.Auth):  # type: ignore[name-defined,misc]
        requires_request_body = True

        def auth_flow(self, request: Any) -> Any:
            request.headers["X-Signature"] = _Signing.sign(request.content)
            yield request

    return SignedAuth()


def test_requires_request_body(hx: ModuleType, httpbin: str) -> None:
    body = b'{"amount": 10}'
    r = hx.post(f"{httpbin}/post", content=body, auth=_signing_auth(hx))
    assert r.json()["headers"]["X-Signature"] == _Signing.sign(body)

    async def main() -> Any:
        async with hx.AsyncClient(auth=_signing_auth(hx)) as client:
            return await client.post(f"{httpbin}/post", content=body)

    assert _run(main()).json()["headers"]["X-Signature"] == _Signing.sign(body)


def _refreshing_auth(hx: ModuleType, httpbin: str) -> Any:
    class RefreshAuth(hx.Auth):  # type: ignore[name-defined,misc]
        """The docs' token refresh: on a 401, ask for a token, then send again."""

        requires_response_body = True

        def __init__(self) -> None:
            self.access_token = "expired"

        def build_refresh_request(self) -> Any:
            token = base64.urlsafe_b64encode(b"fresh-token").decode()
            return hx.Request("GET", f"{httpbin}/base64/{token}")

        def update_tokens(self, response: Any) -> None:
            self.access_token = response.text  # read: requires_response_body

        def auth_flow(self, request: Any) -> Any:
            request.headers["Authorization"] = f"Bearer {self.access_token}"
            response = yield request
            if response.status_code == 401:
                refresh_response = yield self.build_refresh_request()
                self.update_tokens(refresh_response)
                request.headers["Authorization"] = f"Bearer {self.access_token}"
                yield request

    return RefreshAuth()


def test_requires_response_body(hx: ModuleType, httpbin: str) -> None:
    auth = _refreshing_auth(hx, httpbin)
    with hx.Client(auth=auth) as client:
        r = client.get(f"{httpbin}/status/401")
        with client.stream("GET", f"{httpbin}/status/401") as streamed:
            assert [h.status_code for h in streamed.history] == [401, 200]
            assert streamed.history[1].text == "fresh-token"
    # The retried request is the original one: still 401, but after a refresh.
    assert r.status_code == 401
    assert auth.access_token == "fresh-token"
    assert r.request.headers["Authorization"] == "Bearer fresh-token"
    assert [h.status_code for h in r.history] == [401, 200]
    assert r.history[1].text == "fresh-token"

    async def main() -> Any:
        auth = _refreshing_auth(hx, httpbin)
        async with hx.AsyncClient(auth=auth) as client:
            async with client.stream("GET", f"{httpbin}/status/401") as r:
                await r.aread()
        return auth, r

    auth, r = _run(main())
    assert auth.access_token == "fresh-token"
    assert [h.status_code for h in r.history] == [401, 200]


def _token_auth(hx: ModuleType, httpbin: str) -> Any:
    class MyCustomAuth(hx.Auth):  # type: ignore[name-defined,misc]
        """The docs' I/O-doing auth: each client kind has its own flow and lock."""

        def __init__(self) -> None:
            self._sync_lock = threading.RLock()
            self._async_lock = asyncio.Lock()
            self.calls: list[str] = []

        def sync_get_token(self) -> str:
            with self._sync_lock, hx.Client() as client:
                return client.get(f"{httpbin}/base64/c3luYy10b2tlbg==").text

        def sync_auth_flow(self, request: Any) -> Any:
            self.calls.append("sync")
            request.headers["Authorization"] = f"Bearer {self.sync_get_token()}"
            yield request

        async def async_get_token(self) -> str:
            async with self._async_lock, hx.AsyncClient() as client:
                return (await client.get(f"{httpbin}/base64/YXN5bmMtdG9rZW4=")).text

        async def async_auth_flow(self, request: Any) -> Any:
            self.calls.append("async")
            request.headers["Authorization"] = f"Bearer {await self.async_get_token()}"
            yield request

    return MyCustomAuth()


def test_sync_and_async_auth_flows(hx: ModuleType, httpbin: str) -> None:
    auth = _token_auth(hx, httpbin)
    with hx.Client(auth=auth) as client:
        assert client.get(f"{httpbin}/bearer").json()["token"] == "sync-token"

    async def main() -> Any:
        async with hx.AsyncClient(auth=auth) as client:
            return (await client.get(f"{httpbin}/bearer")).json()["token"]

    assert _run(main()) == "async-token"
    assert auth.calls == ["sync", "async"]


def test_auth_supporting_one_client_kind_raises(hx: ModuleType, httpbin: str) -> None:
    # The docs: support one of the two by overriding the other to raise RuntimeError.
    class SyncOnlyAuth(hx.Auth):  # type: ignore[name-defined,misc]
        def sync_auth_flow(self, request: Any) -> Any:
            request.headers["Authorization"] = "Bearer s"
            yield request

        async def async_auth_flow(self, request: Any) -> Any:
            raise RuntimeError("Cannot use a sync authentication class with httpx.AsyncClient")
            yield request  # pragma: no cover

    assert hx.get(f"{httpbin}/bearer", auth=SyncOnlyAuth()).json()["token"] == "s"

    async def main() -> Any:
        async with hx.AsyncClient(auth=SyncOnlyAuth()) as client:
            return await client.get(f"{httpbin}/bearer")

    with pytest.raises(RuntimeError, match="Cannot use a sync authentication"):
        _run(main())


def test_an_auth_overriding_only_sync_auth_flow_is_never_silently_skipped(
    httpbin: str,
) -> None:
    # httpx would send this AsyncClient request without credentials; nodelay refuses.
    class SyncOnly(nodelay.Auth):
        def sync_auth_flow(self, request: Any) -> Any:
            request.headers["Authorization"] = "Bearer s"
            yield request

    async def main() -> Any:
        async with nodelay.AsyncClient(auth=SyncOnly()) as client:
            return await client.get(f"{httpbin}/bearer")

    with pytest.raises(TypeError, match="overrides sync_auth_flow but not async_auth_flow"):
        _run(main())

    class AsyncOnly(nodelay.Auth):
        async def async_auth_flow(self, request: Any) -> Any:
            yield request

    with pytest.raises(TypeError, match="overrides async_auth_flow but not sync_auth_flow"):
        nodelay.get(f"{httpbin}/bearer", auth=AsyncOnly())


# -- SSL: verify=ssl.SSLContext --------------------------------------------------------------


class _Hello(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "6")
        self.end_headers()
        self.wfile.write(b"secure")

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def _tls_server(ca: trustme.CA) -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    server.daemon_threads = True
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ca.issue_cert("localhost", "127.0.0.1").configure_cert(ctx)
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield f"https://localhost:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@pytest.fixture(scope="module")
def tls_ca() -> trustme.CA:
    return trustme.CA()


@pytest.fixture
def tls_url(tls_ca: trustme.CA) -> Iterator[str]:
    with _tls_server(tls_ca) as url:
        yield url


def test_ssl_context_with_a_custom_ca_file(
    hx: ModuleType, tls_ca: trustme.CA, tls_url: str, tmp_path: Path
) -> None:
    cafile = tmp_path / "certs.pem"
    tls_ca.cert_pem.write_to_path(str(cafile))
    ctx = ssl.create_default_context(cafile=str(cafile))
    with hx.Client(verify=ctx) as client:
        assert client.get(tls_url).text == "secure"

    async def main() -> str:
        async with hx.AsyncClient(verify=ctx) as client:
            return (await client.get(tls_url)).text

    assert _run(main()) == "secure"


def test_ssl_context_with_cadata(hx: ModuleType, tls_ca: trustme.CA, tls_url: str) -> None:
    ctx = ssl.create_default_context()
    ctx.load_verify_locations(cadata=tls_ca.cert_pem.bytes().decode())
    assert hx.get(tls_url, verify=ctx).text == "secure"


def test_ssl_context_with_another_ca_fails(hx: ModuleType, tls_url: str) -> None:
    ctx = ssl.create_default_context()
    ctx.load_verify_locations(cadata=trustme.CA().cert_pem.bytes().decode())
    with pytest.raises(hx.ConnectError):
        hx.get(tls_url, verify=ctx)


def test_ssl_context_without_verification(hx: ModuleType, tls_url: str) -> None:
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    assert hx.get(tls_url, verify=ctx).text == "secure"


def test_ssl_context_settings_nodelay_cannot_honour(tls_url: str) -> None:
    ctx = ssl.create_default_context()
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    with pytest.raises(ValueError, match="minimum_version TLSv1_3"):
        nodelay.Client(verify=ctx)
    ctx = ssl.create_default_context()
    ctx.verify_flags |= ssl.VERIFY_CRL_CHECK_LEAF
    with pytest.raises(ValueError, match="CRL"):
        nodelay.Client(verify=ctx)
    ctx = ssl.create_default_context()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # TLS 1.1 is, since 3.10
        ctx.maximum_version = ssl.TLSVersion.TLSv1_1
    with pytest.raises(ValueError, match=r"TLS 1\.2 and 1\.3 only"):
        nodelay.Client(verify=ctx)
    ctx = ssl.create_default_context()
    ctx.set_ciphers("ECDHE+AESGCM")
    with pytest.warns(SSLContextWarning, match="cipher list") as caught:
        nodelay.Client(verify=ctx).close()
    assert caught[0].filename == __file__  # the line that made the client
    ctx = ssl.create_default_context()
    ctx.check_hostname = False  # the chain alone cannot be checked: verification is off
    with pytest.warns(SSLContextWarning, match="not verified at all"):
        assert nodelay.get(tls_url, verify=ctx).text == "secure"


def test_ssl_context_listing_no_ca_uses_the_system_store(tls_url: str) -> None:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    with pytest.warns(SSLContextWarning, match="system trust store"):
        client = nodelay.Client(verify=ctx)
    with client, pytest.raises(nodelay.ConnectError):
        client.get(tls_url)  # the test CA is in no system store


def test_answered_challenges_are_not_redirect_hops(httpbin: str) -> None:
    # nodelay answers the challenge, then follows the redirect the answer gets: one hop.
    class RedirectingAuth(nodelay.Auth):
        def auth_flow(self, request: Any) -> Any:
            response = yield request
            if response.status_code == 401:
                request.url = f"{httpbin}/redirect/1"
                request.headers["X-Answer"] = "1"
                yield request

    with nodelay.Client(auth=RedirectingAuth(), follow_redirects=True, max_redirects=1) as c:
        r = c.get(f"{httpbin}/status/401")
    assert r.status_code == 200
    assert [h.status_code for h in r.history] == [401, 302]


def test_requires_request_body_with_a_streamed_body_is_refused(httpbin: str) -> None:
    # httpx would read the stream into memory; nodelay asks for bytes instead.
    with pytest.raises(TypeError, match="requires the request body, which is streamed"):
        nodelay.post(f"{httpbin}/post", content=iter([b"a", b"b"]), auth=_signing_auth(nodelay))


def test_truststore_context_is_the_system_store(hx: ModuleType, tls_url: str) -> None:
    # The SSL page's `truststore.SSLContext`: the operating system's trust store, which
    # does not hold the test CA. (pip vendors truststore, so it is there without its wheel.)
    try:
        import truststore
    except ImportError:
        from pip._vendor import truststore
    ctx = truststore.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SSLContextWarning)
        with hx.Client(verify=ctx) as client, pytest.raises(hx.ConnectError):
            client.get(tls_url)
