"""nodelay under requests: ``Adapter`` (an ``HTTPAdapter``) and ``Session`` (a
``requests.Session`` with it mounted for ``http://`` and ``https://``).

Above the transport line everything stays requests': ``Session`` (redirects, cookies,
auth, hooks, environment settings such as proxies, ``NO_PROXY`` and ``REQUESTS_CA_BUNDLE``),
``HTTPAdapter.send`` (timeouts, ``cert_verify``, exception mapping, ``build_response``)
and urllib3's ``HTTPResponse`` as ``Response.raw`` (content decoding, ``stream``,
``read(decode_content=...)``). The adapter replaces only the connection pool that ``send``
asks for (``get_connection_with_tls_context``) with an ``EnginePool`` that sends through
nodelay's engine, through any proxy requests picked (http, https, SOCKS). Tools that
patch ``HTTPAdapter.send`` or ``Session.send`` (responses, requests-mock, OpenTelemetry)
therefore see every request; a tool that replaced urllib3's connection classes (vcrpy)
gets the request through urllib3 itself, since that is the layer it records and replays.

docs/requests-adapter.md describes the adapter, what it honours and the measurements.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from . import missing_library

try:
    import requests
    import requests.adapters
    import requests.utils
    from urllib3 import connectionpool
    from urllib3.exceptions import LocationValueError
except ImportError as exc:  # pragma: no cover (requests is a test dependency)
    raise missing_library("requests", "requests") from exc

from .. import _core
from ._engine import engine_options
from ._requests_pool import EnginePool

if TYPE_CHECKING:
    from requests.models import PreparedRequest

__all__ = ["Adapter", "Session"]

MAX_POOLS_PER_ADAPTER = 256
"""Origins (with their TLS and proxy settings) an adapter keeps an ``EnginePool`` handle
for, so a request to a known one parses no URL; past this the handles are dropped and made
again (each is a few attributes; connections belong to the engines)."""

MAX_ENGINES_PER_ADAPTER = 8
"""Distinct TLS and proxy settings an adapter keeps an engine (a connection pool) for; the
least recently used one is closed past this (urllib3's PoolManager keeps 10 pools)."""

_URLLIB3 = "urllib3."
"""The package prefix of urllib3's own connection classes."""

_CERT_DIR_SUFFIXES = (".pem", ".crt", ".cer", ".0")
"""Files of a ``verify=<directory>`` that are read as PEM certificates (c_rehash names
its links ``<hash>.0``)."""


def _urllib3_connections_replaced() -> bool:
    """Whether something replaced urllib3's connection classes (vcrpy does, to record
    and replay): then the request must go through urllib3 for that tool to see it. The
    test is on the classes' module, so it holds whatever was patched when this module was
    imported."""
    return not (
        connectionpool.HTTPConnectionPool.ConnectionCls.__module__.startswith(_URLLIB3)
        and connectionpool.HTTPSConnectionPool.ConnectionCls.__module__.startswith(_URLLIB3)
    )


def _directory_bundle(directory: str) -> str:
    """The certificates of a CA directory (``verify=<dir>``, OpenSSL's ``capath``) as one
    PEM bundle file, which is what the engine takes."""
    from .._tls import _bundle_path

    pems = []
    for name in sorted(os.listdir(directory)):
        path = os.path.join(directory, name)
        if name.endswith(_CERT_DIR_SUFFIXES) and os.path.isfile(path):
            with open(path, encoding="ascii", errors="replace") as f:
                text = f.read()
            if "BEGIN CERTIFICATE" in text:
                pems.append(text.strip() + "\n")
    if not pems:
        raise OSError(f"Could not find a suitable TLS CA certificate in directory: {directory}")
    return _bundle_path("".join(pems))


class Adapter(requests.adapters.HTTPAdapter):
    """requests' ``HTTPAdapter`` with nodelay's engine in place of urllib3's pools.

    ``pool_maxsize``: idle connections kept per host; with ``pool_block`` also the most
    open at once (a request waits for one, as urllib3 blocks); ``pool_connections``:
    urllib3's count of cached pools, used only when a tool routes a request through
    urllib3 (see the module docstring). ``max_retries``: an int or a ``urllib3.Retry``,
    applied by urllib3's own retry logic. ``http2``: offer HTTP/2 by ALPN on https.
    """

    # requests declares it an instance attribute, so not a ClassVar here either.
    __attrs__ = [*requests.adapters.HTTPAdapter.__attrs__, "_http2"]  # noqa: RUF012

    def __init__(
        self,
        pool_connections: int = requests.adapters.DEFAULT_POOLSIZE,
        pool_maxsize: int = requests.adapters.DEFAULT_POOLSIZE,
        max_retries: Any = requests.adapters.DEFAULT_RETRIES,
        pool_block: bool = requests.adapters.DEFAULT_POOLBLOCK,
        http2: bool = False,
    ) -> None:
        self._http2 = http2
        self._engines: OrderedDict[tuple[Any, ...], _core.Engine] = OrderedDict()
        self._engines_lock = threading.Lock()
        self._pools: dict[tuple[Any, ...], EnginePool] = {}
        super().__init__(pool_connections, pool_maxsize, max_retries, pool_block)

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._engines = OrderedDict()
        self._engines_lock = threading.Lock()
        self._pools = {}
        super().__setstate__(state)

    def get_connection_with_tls_context(
        self,
        request: PreparedRequest,
        verify: Any,
        proxies: dict[str, str] | None = None,
        cert: Any = None,
    ) -> Any:
        """An ``EnginePool`` for the request's origin and proxy (http, https or SOCKS);
        urllib3's pool when its connection classes were replaced."""
        proxy = requests.utils.select_proxy(request.url or "", proxies) if proxies else None
        if _urllib3_connections_replaced():
            return super().get_connection_with_tls_context(request, verify, proxies, cert)
        url = request.url or ""
        # The URL up to the end of its authority (and whatever follows it before the first
        # "/") names the origin; with the settings cert_verify applies, it names the pool.
        key = (*url.split("/", 3)[:3], proxy, verify, cert)
        try:
            pool = self._pools.get(key)
        except TypeError:  # a verify or cert value that cannot be a key (a list)
            return self._new_pool(request, url, proxy)
        if pool is None:
            pool = self._new_pool(request, url, proxy)
            if len(self._pools) >= MAX_POOLS_PER_ADAPTER:
                self._pools.clear()
            self._pools[key] = pool
        return pool

    def _new_pool(self, request: PreparedRequest, url: str, proxy: str | None) -> EnginePool:
        parts = urlsplit(url)
        try:
            port = parts.port
        except ValueError as exc:
            raise requests.exceptions.InvalidURL(exc, request=request) from None
        if not parts.hostname:
            raise LocationValueError("No host specified.")
        if proxy:
            proxy = requests.utils.prepend_scheme_if_needed(proxy, "http")
            if not urlsplit(proxy).hostname:
                raise requests.exceptions.InvalidProxyURL(
                    "Please check proxy URL. It is malformed and could be missing the host."
                )
        return EnginePool(self, parts.scheme.lower(), parts.hostname, port, proxy or None)

    def request_url(self, request: PreparedRequest, proxies: dict[str, str] | None) -> str:
        """requests' choice of the URL to send; with no proxies at all it is the path,
        which is taken without parsing the URL for a proxy that cannot be there."""
        if not proxies:
            path = request.path_url
            if not path.startswith("//"):  # requests versions differ on "//" paths
                return path
        return super().request_url(request, proxies)

    def engine_for(self, pool: EnginePool) -> _core.Engine:
        """The engine for the TLS settings ``cert_verify`` gave ``pool`` and its proxy,
        made on first use."""
        key = pool.tls_key()
        engines = self._engines
        engine = engines.get(key)
        if engine is not None:
            return engine
        with self._engines_lock:  # sessions are shared by threads: one engine per key
            engine = engines.get(key)
            if engine is None:
                engine = _core.Engine(self._engine_options(pool))
                engines[key] = engine
                while len(engines) > MAX_ENGINES_PER_ADAPTER:
                    engines.popitem(last=False)[1].close()
            else:
                engines.move_to_end(key)
            return engine

    def _engine_options(self, pool: EnginePool) -> _core.EngineOptions:
        verify: bool | str = pool.cert_reqs == "CERT_REQUIRED"
        if verify and pool.ca_certs:
            verify = pool.ca_certs
        elif verify and pool.ca_cert_dir:
            verify = _directory_bundle(pool.ca_cert_dir)
        cert: str | tuple[str, str] | None = pool.cert_file
        if pool.cert_file and pool.key_file:
            cert = (pool.cert_file, pool.key_file)
        maxsize = self._pool_maxsize
        return engine_options(
            verify=verify,
            cert=cert,
            trust_env=False,  # requests read its environment (REQUESTS_CA_BUNDLE) already
            http2=self._http2,
            max_connections=maxsize if self._pool_block else None,
            max_keepalive=maxsize,
            proxy=pool.proxy,
        )

    def close(self) -> None:
        """Close every pooled connection (the engines' and urllib3's)."""
        super().close()
        self._pools.clear()
        with self._engines_lock:
            engines = list(self._engines.values())
            self._engines.clear()
        for engine in engines:
            engine.close()


class Session(requests.Session):
    """A ``requests.Session`` that sends through nodelay: ``Adapter()`` is mounted for
    ``http://`` and ``https://``."""

    def __init__(self) -> None:
        super().__init__()
        self.mount("https://", Adapter())
        self.mount("http://", Adapter())
