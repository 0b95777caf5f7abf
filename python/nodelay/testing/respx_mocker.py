"""respx for nodelay's own API: ``respx.mock(using="nodelay")``.

respx keeps a registry of its ``Mocker`` subclasses by ``name``; defining
``NodelayMocker`` adds ``"nodelay"`` to it (the pytest plugin imports this module when
respx is installed; elsewhere, import it once). While a router using it is started,
every nodelay client sends through respx's routes: each ``nodelay.Request`` is handed
to the routers as an ``httpx.Request`` and the ``httpx.Response`` a route gives comes
back as a ``nodelay.Response``. A route's ``pass_through()`` sends the request over the
network as the client would have; an httpx exception a route raises
(``side_effect=httpx.ConnectError``) is raised as nodelay's class of the same name.
"""

from __future__ import annotations

from typing import ClassVar
from unittest import mock

import httpx
from respx.mocks import Mocker
from respx.models import PassThrough

from .. import _exceptions
from .._models import _DetachedRaw, _response_from_raw
from ._seam import Interceptor, patches

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .._models import Request, Response

__all__ = ["NodelayMocker"]


def _to_httpx(request: Request, content: bytes) -> httpx.Request:
    return httpx.Request(
        request.method,
        str(request.url),
        headers=request.headers.multi_items(),
        content=content,
        extensions=dict(request.extensions),
    )


def _from_httpx(response: httpx.Response, request: Request) -> Response:
    """The ``httpx.Response`` a route gave, its body read and decoded (a
    ``Content-Encoding`` it was decoded from is dropped, with the length it had)."""
    content = response.read()
    pairs = list(response.headers.multi_items())
    if "content-encoding" in response.headers:
        pairs = [
            (n, v) for n, v in pairs if n.lower() not in ("content-encoding", "content-length")
        ]
        pairs.append(("Content-Length", str(len(content))))
    raw = _DetachedRaw(
        response.status_code,
        pairs,
        content,
        version=response.http_version,
        reason=response.reason_phrase,
    )
    return _response_from_raw(raw, request)


def _nodelay_error(error: httpx.HTTPError, request: Request) -> BaseException:
    """nodelay's exception of the same name as ``error``'s class (or of its nearest
    base class nodelay has), with the nodelay request."""
    for cls in type(error).__mro__:
        ours = getattr(_exceptions, cls.__name__, None)
        if isinstance(ours, type) and issubclass(ours, _exceptions.RequestError):
            return ours(str(error), request=request)
    return _exceptions.RequestError(str(error), request=request)


class _RespxRoute(Interceptor):
    """Every client's transport while a ``NodelayMocker`` router is started."""

    def handle_request(self, request: Request) -> Response:
        httpx_request = _to_httpx(request, request.read())
        try:
            response = NodelayMocker.handler(httpx_request)  # type: ignore[no-untyped-call]
        except PassThrough:
            return self.send_real(request)
        except httpx.RequestError as error:
            raise _nodelay_error(error, request) from error
        return _from_httpx(response, request)

    async def handle_async_request(self, request: Request) -> Response:
        httpx_request = _to_httpx(request, await request.aread())
        try:
            response = await NodelayMocker.async_handler(httpx_request)  # type: ignore[no-untyped-call]
        except PassThrough:
            return await self.asend_real(request)
        except httpx.RequestError as error:
            raise _nodelay_error(error, request) from error
        return _from_httpx(response, request)


class NodelayMocker(Mocker):
    """respx's mocker for nodelay clients (``respx.mock(using="nodelay")``). It patches
    nodelay's own seam (``nodelay/testing/_seam.py``) rather than named targets."""

    name = "nodelay"
    targets: ClassVar[list[str]] = []
    target_methods: ClassVar[list[str]] = []

    @classmethod
    def start(cls) -> None:
        if cls._patches:  # started already (another router uses it)
            return
        for owner, attribute, value in patches(_RespxRoute):
            patch = mock.patch.object(owner, attribute, value)
            patch.start()
            cls._patches.append(patch)
