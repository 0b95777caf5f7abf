"""requests' ``Session`` with nodelay's engine under it (``nodelay.ext.requests.Adapter``):
the ``requests`` row's code, another adapter mounted."""

from __future__ import annotations

from nodelay.ext.requests import Adapter as NodelayAdapter

from . import requests_


class Adapter(requests_.Adapter):
    name = "nodelay-under-requests"
    concurrency_note = "threads sharing one Session (nodelay.ext.requests.Adapter, pool 32)"

    def __init__(self) -> None:
        super().__init__()
        self.session.mount("http://", NodelayAdapter(pool_maxsize=32))
