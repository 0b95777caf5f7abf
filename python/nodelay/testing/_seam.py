"""The one seam every test double of ``nodelay.testing`` goes through.

Every request a nodelay client sends reaches the network in one of two ways: the hot
path of ``Client.get``/``post``... and ``AsyncClient.get`` (one engine call, no request
flow), or an exchange of the request flow (``_flow._exchange``), which asks
``BaseClient._transport_for`` for a transport when the client is ``_routed``. Batches
(``get_many``, ``map``) send every request of a ``_routed`` client through the flow too
(``_batch._per_request_only``), module-level calls use a ``Client``, and
``nodelay.requests`` sends through ``Client.request``.

``patches(interceptor)`` lists the class attributes that, set together, route all of it
through ``interceptor``: the class default of ``_routed`` (so clients made before, as
well as after, take the flow), ``_intercept`` (the transport ``_transport_for``
answers), and request methods without the hot path. Nothing is added to the hot path:
while nothing is patched, clients run exactly the code they run without this module.
Three consumers apply the list: the ``nodelay_mock`` fixture (``monkeypatch``), the
respx mocker (``unittest.mock.patch.object``) and vcrpy (``custom_patches``).
"""

from __future__ import annotations

from .._async_client import AsyncClient, _check_keywords
from .._base import BaseClient
from .._client import _BODY_ARGS, _NO_BODY_ARGS, Client
from .._models import _response_from_raw
from .._transports import AsyncHTTPTransport, HTTPTransport

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from .._models import Request, Response

__all__ = ["Interceptor", "patches"]

_ENGINE_TRANSPORTS = (HTTPTransport, AsyncHTTPTransport)
"""The transports that are the engine: intercepted like a client's own engine."""


class Interceptor:
    """The transport a client uses, while patched, wherever it would have used the
    engine (its own, or an ``HTTPTransport``'s): ``Interceptor(client, chosen)`` with the
    transport ``_transport_for`` chose (``None``: the client's engine). Any other
    transport (``MockTransport``, ``WSGITransport``...) is returned as it is: a test
    double replaces the network, not what the test put there itself.

    Subclasses answer ``handle_request`` (``Client``) and ``handle_async_request``
    (``AsyncClient``); ``send_real`` / ``asend_real`` perform the exchange as the client
    would have (a pass-through, a recording)."""

    def __new__(cls, client: BaseClient, chosen: Any) -> Any:
        if chosen is not None and not isinstance(chosen, _ENGINE_TRANSPORTS):
            return chosen
        return super().__new__(cls)

    def __init__(self, client: BaseClient, chosen: Any) -> None:
        self.client = client
        self.chosen: HTTPTransport | AsyncHTTPTransport | None = chosen

    def handle_request(self, request: Request) -> Response:
        raise NotImplementedError

    async def handle_async_request(self, request: Request) -> Response:
        raise NotImplementedError

    def send_real(self, request: Request) -> Response:
        """The exchange the ``Client`` would have performed, over the network."""
        if isinstance(self.chosen, HTTPTransport):
            return self.chosen.handle_request(request)
        raw = self.client._engine.request(*HTTPTransport._arguments(request))
        return _response_from_raw(raw, request)

    async def asend_real(self, request: Request) -> Response:
        """``send_real`` for ``AsyncClient``."""
        if isinstance(self.chosen, AsyncHTTPTransport):
            return await self.chosen.handle_async_request(request)
        raw = await self.client._engine.request(*AsyncHTTPTransport._arguments(request))
        return _response_from_raw(raw, request)


def _flow_method(method: str, allowed: frozenset[str], name: str) -> Callable[..., Response]:
    """``Client.get`` ... ``Client.patch`` without the hot path: every call builds the
    request flow (``Client._request``)."""

    def call(client: Client, url: str, **kwargs: Any) -> Response:
        _check_keywords(name, kwargs, allowed)
        return client._request(method, url, **kwargs)

    call.__name__ = name
    call.__qualname__ = f"Client.{name}"
    return call


def _flow_request(client: Client, method: str, url: str, **kwargs: Any) -> Response:
    """``Client.request`` without the hot path."""
    _check_keywords("request", kwargs, _BODY_ARGS)
    return client._request(method, url, **kwargs)


async def _flow_async_get(client: AsyncClient, url: str, **kwargs: Any) -> Response:
    """``AsyncClient.get`` without the hot path (as ``AsyncClient.head`` is)."""
    _check_keywords("get", kwargs, _NO_BODY_ARGS)
    return await client.request("GET", url, **kwargs)


_FLOW_METHODS: list[tuple[object, str, object]] = [
    (Client, "request", _flow_request),
    (AsyncClient, "get", _flow_async_get),
    *(
        (Client, name.lower(), _flow_method(name, allowed, name.lower()))
        for name, allowed in (
            ("GET", _NO_BODY_ARGS),
            ("HEAD", _NO_BODY_ARGS),
            ("OPTIONS", _NO_BODY_ARGS),
            ("DELETE", _NO_BODY_ARGS),
            ("POST", _BODY_ARGS),
            ("PUT", _BODY_ARGS),
            ("PATCH", _BODY_ARGS),
        )
    ),
]


def patches(interceptor: type[Interceptor]) -> list[tuple[object, str, object]]:
    """``(owner, attribute, value)`` for each class attribute to set so that every
    nodelay client sends through ``interceptor`` (see the module's docstring); setting
    them back to what they were undoes it."""
    return [
        (BaseClient, "_routed", True),
        (BaseClient, "_intercept", interceptor),
        *_FLOW_METHODS,
    ]
