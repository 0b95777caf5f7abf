"""vcrpy for nodelay's own API: ``vcr.VCR(custom_patches=nodelay.testing.VCR_PATCHES)``.

vcrpy patches a fixed list of classes (``vcr/patch.py``) and applies each
``(owner, attribute, replacement)`` of ``custom_patches`` while a cassette is in use; a
replacement class with a ``cassette`` attribute is replaced by a subclass bound to that
cassette. ``VCR_PATCHES`` is nodelay's seam (``_seam.py``) with ``CassetteRoute`` as the
interceptor: a request the cassette has is answered from it, any other is sent over the
network and recorded (when the record mode allows; otherwise vcrpy's
``CannotOverwriteExistingCassetteException``).

The engine decodes bodies (gzip, br, zstd) as it reads them, so a cassette holds the
decoded body, and the ``Content-Encoding`` it was sent with is left out of the recorded
headers (the ``Content-Length`` is the decoded one): the cassette describes a response
that needs no decoding, and replays as the response the code saw.

vcrpy is imported when a request is made under a cassette, not with this module.
"""

from __future__ import annotations

from collections import defaultdict

from .._models import _DetachedRaw, _response_from_raw
from ._seam import Interceptor, patches

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, ClassVar

    from .._models import Request, Response

__all__ = ["VCR_PATCHES", "CassetteRoute"]


def _vcr_request(request: Request, body: bytes) -> Any:
    from vcr.request import Request as VcrRequest  # type: ignore[import-untyped]

    return VcrRequest(request.method, str(request.url), body, request.headers.multi_items())


def _recorded(response: Response) -> dict[str, Any]:
    """``response`` in vcrpy's cassette format, its body decoded (see the module)."""
    content = response.content
    headers: defaultdict[str, list[str]] = defaultdict(list)
    decoded = "content-encoding" in response.headers
    for name, value in response.headers.multi_items():
        if decoded and name.lower() in ("content-encoding", "content-length"):
            continue
        headers[name].append(value)
    if decoded:
        headers["Content-Length"].append(str(len(content)))
    return {
        "status": {"code": response.status_code, "message": response.reason_phrase},
        "headers": dict(headers),
        "body": {"string": content},
    }


def _replayed(recorded: dict[str, Any], request: Request) -> Response:
    pairs = [(name, value) for name, values in recorded["headers"].items() for value in values]
    body = recorded["body"]["string"]
    if isinstance(body, str):  # a cassette written by hand, or by an older serializer
        body = body.encode("utf-8")
    status = recorded["status"]
    raw = _DetachedRaw(status["code"], pairs, body, reason=status.get("message") or "")
    return _response_from_raw(raw, request)


class CassetteRoute(Interceptor):
    """Every client's transport while a cassette made with ``VCR_PATCHES`` is in use
    (vcrpy subclasses it with ``cassette`` set)."""

    cassette: ClassVar[Any] = None

    def _play(self, request: Request, body: bytes) -> tuple[Any, Response | None]:
        """The cassette's vcr request for ``request``, and its recorded response (None:
        send it, then record it)."""
        cassette = self.cassette
        vcr_request = _vcr_request(request, body)
        if cassette.can_play_response_for(vcr_request):
            return vcr_request, _replayed(cassette.play_response(vcr_request), request)
        if cassette.write_protected and cassette.filter_request(vcr_request):
            from vcr.errors import (  # type: ignore[import-untyped]
                CannotOverwriteExistingCassetteException,
            )

            raise CannotOverwriteExistingCassetteException(
                cassette=cassette, failed_request=vcr_request
            )
        return vcr_request, None

    def handle_request(self, request: Request) -> Response:
        vcr_request, response = self._play(request, request.read())
        if response is None:
            response = self.send_real(request)
            self.cassette.append(vcr_request, _recorded(response))
        return response

    async def handle_async_request(self, request: Request) -> Response:
        vcr_request, response = self._play(request, await request.aread())
        if response is None:
            response = await self.asend_real(request)
            self.cassette.append(vcr_request, _recorded(response))
        return response


VCR_PATCHES: tuple[tuple[object, str, object], ...] = tuple(patches(CassetteRoute))
"""``vcr.VCR(custom_patches=VCR_PATCHES)`` (or ``use_cassette(..., custom_patches=)``):
nodelay clients record to and replay from the cassette in use."""
