"""What requests' ``HTTPAdapter.send`` gets as its "connection pool" when nodelay is under it.

``HTTPAdapter.send`` asks ``get_connection_with_tls_context`` for a urllib3 pool, lets
``cert_verify`` set the pool's TLS attributes, then calls ``pool.urlopen(...)`` and turns
urllib3's exceptions into requests' own. ``EnginePool`` is that pool with the engine in
place of urllib3's connections, so ``send`` itself stays requests' code: everything that
patches or wraps it (``responses``, OpenTelemetry, subclasses) keeps working, and the
errors callers see are the ones requests makes, built from the urllib3 exceptions this
module raises (the table ``_URLLIB3_ERRORS``).

Retries follow the ``urllib3.Retry`` requests passes (``HTTPAdapter.max_retries``), with
urllib3's own ``increment``/``is_retry``/``sleep``: the same counts, backoff and
``Retry-After`` handling as under urllib3.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from requests.structures import CaseInsensitiveDict
from urllib3.exceptions import (
    ConnectTimeoutError,
    EmptyPoolError,
    InsecureRequestWarning,
    InvalidHeader,
    MaxRetryError,
    NewConnectionError,
    ProtocolError,
    ProxyError,
    ReadTimeoutError,
    SSLError,
)
from urllib3.response import HTTPResponse
from urllib3.util.request import rewind_body, set_file_position
from urllib3.util.retry import Retry
from urllib3.util.timeout import Timeout

from .. import _exceptions as nd
from .._upload import encode_content
from .._urls import HTTP_DEFAULT_PORTS
from ._engine import ENGINE_ERRORS, mapped_error
from ._requests_response import EngineResponse

if TYPE_CHECKING:
    from .._core import Engine, TimeoutTuple, Upload

__all__ = ["EnginePool", "EngineSource"]

_METHODS_NOT_EXPECTING_BODY = frozenset(("GET", "HEAD", "DELETE", "TRACE", "OPTIONS", "CONNECT"))
"""urllib3 sends ``Content-Length: 0`` for a request without a body unless its method is one
of these (``urllib3.util.request.body_to_chunks``)."""

_FRAMING_HEADERS = frozenset(("content-length", "transfer-encoding"))
"""The body's framing: sent as requests set them (the engine frames a body by the ones it
is given, and picks length or chunked itself only when there are none)."""

_DEFAULT_PORTS = HTTP_DEFAULT_PORTS

_SOCKS = "socks"
"""How the schemes of SOCKS proxy URLs begin (socks5, socks5h, socks4, socks4a)."""


class EngineSource(Protocol):
    """Where an ``EnginePool`` gets its engine (the adapter: one engine per TLS and
    proxy setting)."""

    def engine_for(self, pool: EnginePool) -> Engine: ...


def _seconds(value: Any) -> float | None:
    """A urllib3 timeout value in seconds; its "default" sentinel means none."""
    return float(value) if isinstance(value, (int, float)) else None


def _timeouts(timeout: Any) -> TimeoutTuple:
    """urllib3's ``Timeout`` (or a number) as the engine's (connect, read, write, pool,
    total). urllib3 applies the read timeout to each socket operation after connecting,
    writes included; it waits for a pool slot without limit unless told otherwise."""
    if not isinstance(timeout, Timeout):
        timeout = Timeout.from_float(timeout)
    read = _seconds(timeout.read_timeout)
    return (_seconds(timeout.connect_timeout), read, read, None, None)


def _header_text(value: str | bytes) -> str:
    # requests allows bytes names and values; http.client sends them as latin-1.
    return value.decode("latin-1") if isinstance(value, bytes) else value


def _engine_body(body: Any) -> bytes | Upload | None:
    if body is None or isinstance(body, bytes):
        return body
    if hasattr(body, "read") and hasattr(body, "encoding"):  # a text file: urllib3 encodes
        return encode_content(_text_chunks(body))
    return encode_content(body)


def _text_chunks(file: Any) -> Any:
    while chunk := file.read(1 << 16):
        yield chunk.encode("utf-8") if isinstance(chunk, str) else chunk


def _warn_unverified(host: str) -> None:
    """urllib3's warning for each https request sent without verification (requests users
    silence it with ``urllib3.disable_warnings``, which keeps working)."""
    warnings.warn(
        f"Unverified HTTPS request is being made to host '{host}'. Adding certificate "
        "verification is strongly advised. See: https://urllib3.readthedocs.io/en/latest/"
        "advanced-usage.html#tls-warnings",
        InsecureRequestWarning,
        stacklevel=2,
    )


class EnginePool:
    """A urllib3-pool-shaped handle for one origin: ``cert_verify`` sets its TLS
    attributes as on a urllib3 pool, then ``urlopen`` sends through the engine those
    attributes select."""

    __slots__ = (
        "_origin",
        "_source",
        "ca_cert_dir",
        "ca_certs",
        "cert_file",
        "cert_reqs",
        "host",
        "key_file",
        "port",
        "proxy",
        "proxy_is_socks",
        "scheme",
    )

    def __init__(
        self,
        source: EngineSource,
        scheme: str,
        host: str,
        port: int | None,
        proxy: str | None,
    ) -> None:
        self._source = source
        self.scheme = scheme
        self.host = host
        self.port = port if port is not None else _DEFAULT_PORTS.get(scheme)
        self.proxy = proxy
        self.proxy_is_socks = proxy is not None and proxy.lower().startswith(_SOCKS)
        netloc = f"[{host}]" if ":" in host else host
        # A port the URL leaves out stays out (it would show in Host).
        self._origin = f"{scheme}://{netloc}" if port is None else f"{scheme}://{netloc}:{port}"
        self.cert_reqs: str | None = None
        self.ca_certs: str | None = None
        self.ca_cert_dir: str | None = None
        self.cert_file: str | None = None
        self.key_file: str | None = None

    def __repr__(self) -> str:
        # urllib3's pool names: they open requests' error messages.
        kind = "HTTPSConnectionPool" if self.scheme == "https" else "HTTPConnectionPool"
        return f"{kind}(host={self.host!r}, port={self.port!r})"

    def tls_key(self) -> tuple[Any, ...]:
        """What selects the engine: the TLS attributes ``cert_verify`` set, and the
        proxy."""
        return (
            self.cert_reqs,
            self.ca_certs,
            self.ca_cert_dir,
            self.cert_file,
            self.key_file,
            self.proxy,
        )

    def urlopen(
        self,
        method: str,
        url: str,
        body: Any = None,
        headers: Any = None,
        retries: Retry | int | bool | None = None,
        redirect: bool = True,
        assert_same_host: bool = True,
        timeout: Any = None,
        pool_timeout: Any = None,
        release_conn: bool | None = None,
        chunked: bool = False,
        body_pos: Any = None,
        preload_content: bool = True,
        decode_content: bool = True,
        **response_kw: Any,
    ) -> HTTPResponse:
        """Send one request (``redirect`` is never followed: requests passes False) and
        return urllib3's ``HTTPResponse`` over the engine's body."""
        if not isinstance(retries, Retry):
            retries = Retry.from_int(retries, redirect=False)
        target = url if not url.startswith("/") else self._origin + url
        sent_headers = self._headers(method, headers, body)
        engine_body = _engine_body(body)
        timeouts = _timeouts(timeout)
        engine = self._source.engine_for(self)
        if self.scheme == "https" and self.cert_reqs == "CERT_NONE":
            _warn_unverified(self.host)
        body_pos = set_file_position(body, body_pos)
        while True:
            try:
                stream = engine.open(method, target, sent_headers, engine_body, timeouts)
            except ENGINE_ERRORS as exc:
                error = mapped_error(exc, _URLLIB3_ERRORS)(exc, self)
                retries = retries.increment(
                    method,
                    url,
                    error=error,
                    _pool=self,  # type: ignore[arg-type]
                    _stacktrace=sys.exc_info()[2],
                )
                retries.sleep()
            else:
                response = EngineResponse(stream, method, url, retries, decode_content)
                if not retries.is_retry(method, response.status, "retry-after" in response.headers):
                    if preload_content:
                        response.read(cache_content=True, decode_content=decode_content)
                    return response
                try:
                    retries = retries.increment(method, url, response=response, _pool=self)  # type: ignore[arg-type]
                except MaxRetryError:
                    if retries.raise_on_status:
                        response.drain_conn()
                        raise
                    return response
                response.drain_conn()
                retries.sleep(response)
            if body_pos is not None:
                rewind_body(body, body_pos)

    def _headers(self, method: str, headers: Any, body: Any) -> list[tuple[str, str]]:
        # requests' CaseInsensitiveDict keeps (name as set, value) pairs in ``_store``:
        # read there, they cost no lookup per field.
        fields: Any
        if type(headers) is CaseInsensitiveDict:
            fields = headers._store.values()
        else:
            fields = headers.items() if headers else ()
        sent = [
            (n, v) if type(n) is str and type(v) is str else (_header_text(n), _header_text(v))
            for n, v in fields
        ]
        if body is None and method.upper() not in _METHODS_NOT_EXPECTING_BODY:
            if not any(name.lower() in _FRAMING_HEADERS for name, _ in sent):
                sent.append(("Content-Length", "0"))
        return sent

    def close(self) -> None:
        """Nothing to close: connections belong to the adapter's engines."""


_URLLIB3_ERRORS: dict[type[BaseException], Callable[[Exception, EnginePool], Exception]] = {
    nd.ConnectTimeout: lambda exc, pool: ConnectTimeoutError(
        pool, f"Connection to {pool.host} timed out. ({exc})"
    ),
    nd.PoolTimeout: lambda exc, pool: EmptyPoolError(pool, str(exc)),  # type: ignore[arg-type]
    nd.TimeoutException: lambda exc, pool: ReadTimeoutError(
        pool,  # type: ignore[arg-type]
        None,
        f"Read timed out. ({exc})",
    ),
    nd.ProxyError: lambda exc, pool: (
        # urllib3's SOCKS connections raise every SOCKS failure (refusal, credentials)
        # as a failure to connect; an HTTP proxy's is its ProxyError.
        NewConnectionError(pool, f"Failed to establish a new connection: {exc}")  # type: ignore[arg-type]
        if pool.proxy_is_socks
        else ProxyError("Unable to connect to proxy", exc)
    ),
    nd.TLSError: lambda exc, pool: SSLError(str(exc)),
    nd.ConnectError: lambda exc, pool: NewConnectionError(pool, str(exc)),  # type: ignore[arg-type]
    nd.LocalProtocolError: lambda exc, pool: InvalidHeader(str(exc)),
    nd.RequestError: lambda exc, pool: ProtocolError("Connection aborted.", exc),
}
"""The urllib3 exception urllib3's pool raises (before retries) where the engine raised a
nodelay one, with urllib3's wording (code matches "Read timed out" in messages) and the
engine's message in parentheses. ``HTTPAdapter.send`` maps these to requests' classes: a
connect failure to ``ConnectionError``, a TLS one to ``SSLError``, a write or read stall to
``ReadTimeout`` (urllib3's socket timeout covers both)."""
