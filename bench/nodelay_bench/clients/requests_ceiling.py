"""requests' ``Session`` over an adapter that answers at once with no I/O: what requests
itself costs per request (preparing it, merging the environment's settings, hooks,
cookies, redirects, building the ``Response``), so a target above it for
``nodelay-under-requests`` is out of reach whatever the adapter.

The adapter builds each answer as requests' ``HTTPAdapter`` must (a ``Response`` from
``build_response`` over a urllib3 ``HTTPResponse``), from a body it fetched from the server
once per URL in the warm-up with urllib; the body is preloaded, so reading it costs no
urllib3 read.
"""

from __future__ import annotations

import urllib.request
from typing import Any

import requests  # type: ignore[import-untyped,import-not-found,unused-ignore]
import requests.adapters  # type: ignore[import-untyped,import-not-found,unused-ignore]
from urllib3 import HTTPResponse

from . import requests_
from .base import TIMEOUT


class CeilingAdapter(requests.adapters.HTTPAdapter):
    """``send()`` answers from memory: status, headers and body of the URL's first answer."""

    def __init__(self) -> None:
        super().__init__()
        self.answers: dict[str, tuple[int, dict[str, str], bytes]] = {}

    def send(self, request: Any, *args: Any, **kwargs: Any) -> Any:
        url = request.url
        if url not in self.answers:
            with urllib.request.urlopen(url, data=request.body, timeout=TIMEOUT) as reply:
                body = reply.read()
                self.answers[url] = (reply.status, {"Content-Length": str(len(body))}, body)
        status, headers, body = self.answers[url]
        raw = HTTPResponse(
            body=body, headers=headers, status=status, version=11, preload_content=False
        )
        response = self.build_response(request, raw)
        response._content = body  # preloaded: `content` reads no stream
        return response


class Adapter(requests_.Adapter):
    name = "ceiling-requests"
    concurrency_note = "threads sharing one Session, over an adapter answering at once, no I/O"

    def __init__(self) -> None:
        super().__init__()
        self.session.mount("http://", CeilingAdapter())
