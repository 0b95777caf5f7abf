"""Transport adapters: ``HTTPAdapter`` sends one prepared request through a nodelay
``Client`` (one exchange: redirects and cookies are the session's business, as in requests).

An adapter keeps one ``Client`` per (verify, cert, proxy) combination it has been asked for,
since those are fixed for a client's connection pool; that is what lets ``Session.verify``,
``cert`` and ``proxies`` change after the session was made, and per request.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import urlsplit

from .. import Client, Limits
from .. import Retry as _NodelayRetry
from .._models import Response as _NodelayResponse
from . import _errors
from .cookies import RequestsCookieJar
from .exceptions import InvalidProxyURL, InvalidSchema, RetryError
from .models import Response, build_response
from .structures import CaseInsensitiveDict
from .utils import get_encoding_from_headers, select_proxy

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from .models import PreparedRequest

__all__ = ["BaseAdapter", "HTTPAdapter"]

DEFAULT_POOLBLOCK = False
DEFAULT_POOLSIZE = 10
DEFAULT_RETRIES = 0
DEFAULT_POOL_TIMEOUT = None
MAX_CLIENTS_PER_ADAPTER = 8
"""Distinct (verify, cert, proxy) pools an adapter keeps; the least recently used one is
closed past this (urllib3's PoolManager keeps 10 pools the same way)."""

_ENGINE_DEFAULT_HEADERS = ("User-Agent", "Accept", "Accept-Encoding")
"""The headers a nodelay ``Client`` adds by itself; a prepared request without one of them
sends it as ``None`` (dropped), so the wire carries the prepared headers only."""
_FRAMING_HEADERS = frozenset(("content-length", "transfer-encoding"))
"""Left to the engine, which frames the body it sends (length or chunked) itself."""


def _retry_policy(max_retries: Any) -> _NodelayRetry:
    """requests' ``max_retries``: an int (connection failures only, as requests'
    ``Retry(n, read=False)``), nodelay's ``Retry``, or a urllib3 ``Retry`` (its counts,
    backoff, ``status_forcelist``, ``allowed_methods``, ``Retry-After`` and
    ``raise_on_status`` are honoured; ``redirect``, ``other`` and hooks are not)."""
    if isinstance(max_retries, _NodelayRetry):
        return max_retries
    if isinstance(max_retries, int):
        return _NodelayRetry(total=max_retries, read=0)
    # A urllib3 Retry (duck-typed: urllib3 is not a dependency of nodelay).
    read = max_retries.read
    allowed = getattr(max_retries, "allowed_methods", None)
    return _NodelayRetry(
        total=None if max_retries.total is None else int(max_retries.total),
        connect=max_retries.connect,
        read=0 if read is False else read,
        status=max_retries.status,
        backoff_factor=max_retries.backoff_factor,
        status_forcelist=max_retries.status_forcelist,
        allowed_methods=None if allowed is False else allowed,
        respect_retry_after=bool(getattr(max_retries, "respect_retry_after_header", True)),
        backoff_max=float(getattr(max_retries, "backoff_max", 120)),
    )


def _response_from_raw(req: PreparedRequest, raw: Any) -> Response:
    """requests' ``HTTPAdapter.build_response`` over a urllib3-shaped response ``raw``:
    its Set-Cookie fields go to the request's jar (the session's), as the engine's do."""
    response = Response()
    response.status_code = getattr(raw, "status", None)  # type: ignore[assignment]
    response.headers = CaseInsensitiveDict(getattr(raw, "headers", {}))
    response.encoding = get_encoding_from_headers(response.headers)
    response.raw = raw
    response.reason = getattr(raw, "reason", "")
    response.url = req.url.decode("utf-8") if isinstance(req.url, bytes) else (req.url or "")
    response.request = req
    set_cookies = [value for name, value in _raw_header_items(raw) if name.lower() == "set-cookie"]
    if set_cookies:
        response.cookies = RequestsCookieJar()
        response.cookies._jar.store(response.url, set_cookies)
        session_jar = req._jar
        if session_jar is not None and session_jar._jar.store(response.url, set_cookies):
            session_jar._changed()
    return response


def _raw_header_items(raw: Any) -> list[tuple[str, str]]:
    """Every header field of a urllib3-shaped response, repeated names apart."""
    headers = getattr(raw, "headers", None)
    if headers is None:
        return []
    return list(headers.items())


def _encoded(chunks: Iterable[Any]) -> Iterator[bytes]:
    # urllib3 sends str chunks of a generator body as UTF-8.
    for chunk in chunks:
        yield chunk.encode("utf-8") if isinstance(chunk, str) else chunk


class BaseAdapter:
    """The Base Transport Adapter."""

    def send(
        self,
        request: PreparedRequest,
        stream: bool = False,
        timeout: Any = None,
        verify: bool | str = True,
        cert: Any = None,
        proxies: Mapping[str, str] | None = None,
    ) -> Response:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError


class HTTPAdapter(BaseAdapter):
    """The built-in HTTP adapter, for ``Session.mount``.

    ``pool_maxsize``: idle connections kept per host (nodelay's ``max_keepalive``);
    ``pool_connections``: how many distinct pools urllib3 caches, which nodelay does not
    need (its pool has every host); ``pool_block``: accepted, nodelay never blocks for a
    pool slot beyond its limits. ``max_retries``: see ``_retry_policy``.
    """

    __attrs__: ClassVar[list[str]] = [
        "max_retries",
        "_raise_on_status",
        "config",
        "_pool_connections",
        "_pool_maxsize",
        "_pool_block",
    ]

    def __init__(
        self,
        pool_connections: int = DEFAULT_POOLSIZE,
        pool_maxsize: int = DEFAULT_POOLSIZE,
        max_retries: Any = DEFAULT_RETRIES,
        pool_block: bool = DEFAULT_POOLBLOCK,
    ) -> None:
        self.max_retries = _retry_policy(max_retries)
        # urllib3's raise_on_status (default True): retries spent on statuses raise
        # RetryError rather than return the last response.
        self._raise_on_status = not isinstance(max_retries, (int, _NodelayRetry)) and bool(
            getattr(max_retries, "raise_on_status", True)
        )
        self.config: dict[str, Any] = {}
        self._pool_connections = pool_connections
        self._pool_maxsize = pool_maxsize
        self._pool_block = pool_block
        self._clients: OrderedDict[tuple[Any, ...], Client] = OrderedDict()
        self._lock = threading.Lock()

    def __getstate__(self) -> dict[str, Any]:
        return {attr: getattr(self, attr, None) for attr in self.__attrs__}

    def __setstate__(self, state: dict[str, Any]) -> None:
        for attr, value in state.items():
            setattr(self, attr, value)
        self._clients = OrderedDict()
        self._lock = threading.Lock()

    def _client(self, verify: Any, cert: Any, proxy: str | None) -> Client:
        key = (verify, cert if not isinstance(cert, list) else tuple(cert), proxy)
        with self._lock:  # sessions are shared by threads: one client per key
            client = self._clients.get(key)
            if client is not None:
                self._clients.move_to_end(key)
                return client
            return self._new_client(key, verify, cert, proxy)

    def _new_client(
        self, key: tuple[Any, ...], verify: Any, cert: Any, proxy: str | None
    ) -> Client:
        if isinstance(verify, str) and verify.lower() in ("true", "false"):
            verify = verify.lower() == "true"
        client = Client(
            timeout=None,
            limits=Limits(max_keepalive_connections=self._pool_maxsize),
            verify=verify,
            cert=tuple(cert) if isinstance(cert, list) else cert,
            proxy=proxy,
            trust_env=False,  # the session resolved proxies and .netrc already
            # No policy at all for 0 retries: the client's direct path.
            retries=self.max_retries if self.max_retries.total != 0 else None,
        )
        self._clients[key] = client
        while len(self._clients) > MAX_CLIENTS_PER_ADAPTER:
            self._clients.popitem(last=False)[1].close()
        return client

    def cert_verify(self, url: str, verify: Any, cert: Any) -> None:
        """Refuse missing CA bundle and client certificate files before connecting, with
        requests' ``OSError`` messages."""
        if isinstance(verify, str) and verify.lower() not in ("true", "false"):
            if not os.path.exists(verify):
                raise OSError(
                    f"Could not find a suitable TLS CA certificate bundle, invalid path: {verify}"
                )
        if cert:
            cert_file, key_file = (cert, None) if isinstance(cert, str) else (cert[0], cert[1])
            if cert_file and not os.path.exists(cert_file):
                raise OSError(f"Could not find the TLS certificate file, invalid path: {cert_file}")
            if key_file and not os.path.exists(key_file):
                raise OSError(f"Could not find the TLS key file, invalid path: {key_file}")

    def add_headers(self, request: PreparedRequest, **kwargs: Any) -> None:
        """Override to add headers to every request this adapter sends (no-op)."""

    def request_url(self, request: PreparedRequest, proxies: Mapping[str, str] | None) -> str:
        return request.path_url

    def send(
        self,
        request: PreparedRequest,
        stream: bool = False,
        timeout: Any = None,
        verify: bool | str = True,
        cert: Any = None,
        proxies: Mapping[str, str] | None = None,
    ) -> Response:
        """Send ``request`` once and return its ``Response``, the body still on the
        connection (``Response.content`` reads it; ``Session.send`` does at once unless
        ``stream``). ``timeout``: seconds, ``(connect, read)`` or ``None`` (no limit, as
        in requests)."""
        url = request.url or ""
        scheme = urlsplit(url).scheme.lower()
        if scheme not in ("http", "https"):
            raise InvalidSchema(f"No connection adapters were found for {url!r}")
        proxy = select_proxy(url, proxies)
        if proxy is not None:
            if "://" not in proxy:
                proxy = "http://" + proxy
            if not urlsplit(proxy).hostname:
                raise InvalidProxyURL(
                    "Please check proxy URL. It is malformed and could be missing the host."
                )
        if scheme == "https":
            self.cert_verify(url, verify, cert)
        self.add_headers(request, stream=stream, timeout=timeout, verify=verify, cert=cert)
        client = self._client(verify, cert, proxy)
        jar = request._jar if request._jar is not None else RequestsCookieJar()
        if client.cookies is not jar:
            client.cookies = jar
        headers: dict[str, str | None] = {
            name: value
            for name, value in request.headers.items()
            if name.lower() not in _FRAMING_HEADERS
        }
        if proxy is not None and "@" in urlsplit(proxy).netloc:
            # The client sends the proxy URL's credentials to the proxy itself.
            headers.pop("Proxy-Authorization", None)
        for name in _ENGINE_DEFAULT_HEADERS:
            if name not in request.headers:
                headers[name] = None
        body = request.body
        if body is not None and not isinstance(body, (bytes, str, bytearray)):
            if not hasattr(body, "read"):
                body = _encoded(body)
        elif isinstance(body, bytearray):
            body = bytes(body)
        if isinstance(timeout, tuple) and len(timeout) != 2:
            raise ValueError(
                f"Invalid timeout {timeout}. Pass a (connect, read) timeout tuple, "
                "or a single float to set both timeouts to the same value."
            )
        try:
            nd = client.request(
                request.method or "GET",
                url,
                headers=headers,
                content=body,
                timeout=timeout,
                follow_redirects=False,
                # Always streamed, as urllib3's preload_content=False in requests: the
                # body is read by ``Response.content`` (the session reads it at once
                # unless ``stream``), so errors while reading it are requests' body
                # errors (ChunkedEncodingError...), not connection errors.
                stream=True,
            )
        except _errors.NODELAY_ERRORS as exc:
            raise _errors.while_sending(exc, request) from exc
        if self._raise_on_status and self.max_retries.is_retry_status(
            request.method or "GET", nd.status_code, "retry-after" in nd.headers
        ):
            nd.close()
            raise RetryError(
                f"Max retries exceeded with url: {request.path_url} (Caused by "
                f"ResponseError('too many {nd.status_code} error responses'))",
                request=request,
            )
        response = build_response(request, nd)
        response.connection = self
        return response

    def build_response(self, req: PreparedRequest, resp: Any) -> Response:
        """A ``Response`` over ``resp``: the nodelay response ``send`` gets from the engine,
        or, as in requests, an object shaped like urllib3's ``HTTPResponse`` (``status``,
        ``headers``, ``reason``, and ``stream`` or ``read`` for the body). Tools that
        replace ``send`` build their answers that way: responses'
        ``RequestsMock(target="nodelay.requests.adapters.HTTPAdapter.send")``."""
        if isinstance(resp, _NodelayResponse):
            response = build_response(req, resp)
        else:
            response = _response_from_raw(req, resp)
        response.connection = self
        return response

    def close(self) -> None:
        """Close every pooled connection."""
        with self._lock:
            clients = list(self._clients.values())
            self._clients.clear()
        for client in clients:
            client.close()
