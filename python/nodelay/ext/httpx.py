"""nodelay's engine under httpx: keep httpx, get the engine (docs/httpx-transport.md).

``Client`` / ``AsyncClient`` are httpx's, with nodelay transports wherever the client
creates one; ``Transport`` / ``AsyncTransport`` are httpx's ``HTTPTransport`` /
``AsyncHTTPTransport`` with the engine in place of httpcore's pool::

    import nodelay.ext.httpx

    with nodelay.ext.httpx.Client() as client:
        client.get("https://example.org/")

Needs httpx (``pip install nodelay[httpx]``); ``import nodelay`` does not import it.
"""

from __future__ import annotations

from . import missing_library

try:
    import httpcore
    import httpx
except ImportError as error:
    raise missing_library("httpx", "httpx") from error

from ._httpx_bridge import (
    AsyncClientMixin,
    AsyncTransportMixin,
    Binding,
    ClientMixin,
    TransportMixin,
)

__all__ = ["AsyncClient", "AsyncTransport", "Client", "Transport"]

_BINDING = Binding(httpx, httpcore)


class Transport(TransportMixin, httpx.HTTPTransport):
    """``httpx.HTTPTransport``'s options (``verify``, ``cert``, ``trust_env``, ``http1``,
    ``http2``, ``limits``, ``proxy``, ``uds``, ``local_address``, ``retries``), the engine
    below ``handle_request``."""

    _binding = _BINDING


class AsyncTransport(AsyncTransportMixin, httpx.AsyncHTTPTransport):
    """``httpx.AsyncHTTPTransport``'s options, the asyncio engine below
    ``handle_async_request``."""

    _binding = _BINDING


class Client(ClientMixin, httpx.Client):
    """``httpx.Client`` (same constructor) whose own transports are nodelay's."""

    _transport_class = Transport


class AsyncClient(AsyncClientMixin, httpx.AsyncClient):
    """``httpx.AsyncClient`` (same constructor) whose own transports are nodelay's."""

    _transport_class = AsyncTransport
