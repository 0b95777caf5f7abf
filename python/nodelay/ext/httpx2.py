"""nodelay's engine under httpx2: keep httpx2, get the engine (docs/httpx-transport.md).

``Client`` / ``AsyncClient`` are httpx2's, with nodelay transports wherever the client
creates one; ``Transport`` / ``AsyncTransport`` are httpx2's ``HTTPTransport`` /
``AsyncHTTPTransport`` with the engine in place of httpcore2's pool::

    import nodelay.ext.httpx2

    with nodelay.ext.httpx2.Client() as client:
        client.get("https://example.org/")

Needs httpx2 (``pip install nodelay[httpx2]``); ``import nodelay`` does not import it.
"""

from __future__ import annotations

from . import missing_library

try:
    import httpcore2
    import httpx2
except ImportError as error:
    raise missing_library("httpx2", "httpx2") from error

from ._httpx_bridge import (
    AsyncClientMixin,
    AsyncTransportMixin,
    Binding,
    ClientMixin,
    TransportMixin,
)

__all__ = ["AsyncClient", "AsyncTransport", "Client", "Transport"]

_BINDING = Binding(httpx2, httpcore2)


class Transport(TransportMixin, httpx2.HTTPTransport):
    """``httpx2.HTTPTransport``'s options (``verify``, ``cert``, ``trust_env``, ``http1``,
    ``http2``, ``limits``, ``proxy``, ``uds``, ``local_address``, ``retries``), the engine
    below ``handle_request``."""

    _binding = _BINDING


class AsyncTransport(AsyncTransportMixin, httpx2.AsyncHTTPTransport):
    """``httpx2.AsyncHTTPTransport``'s options, the asyncio engine below
    ``handle_async_request``."""

    _binding = _BINDING


class Client(ClientMixin, httpx2.Client):
    """``httpx2.Client`` (same constructor) whose own transports are nodelay's."""

    _transport_class = Transport


class AsyncClient(AsyncClientMixin, httpx2.AsyncClient):
    """``httpx2.AsyncClient`` (same constructor) whose own transports are nodelay's."""

    _transport_class = AsyncTransport
