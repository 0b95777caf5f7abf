"""The Debian web servers of the interop matrix: each serves ``/static/`` from the site and
reverse-proxies ``/app/`` to the httpbin backend (nghttpd, which can only serve files, says
so in its endpoints' ``lacks``)."""

from __future__ import annotations

from typing import Protocol

from .apache import Apache
from .base import Launcher
from .caddy import Caddy
from .h2o import H2o
from .nghttpd import Nghttpd
from .nginx import Nginx


class WebLauncher(Launcher, Protocol):
    """A web-server launcher also says what its configuration makes the server do, so its
    own test (``tests/interop/test_web_launchers.py``) can hold it to that."""

    #: Content codings the server compresses text responses with when asked.
    encodings: frozenset[str]
    #: Protocols on which the server closes a connection after
    #: ``base.RECYCLE_AFTER_REQUESTS`` requests (HTTP/1.1 close, HTTP/2 GOAWAY).
    recycles: frozenset[str]
    #: Protocols on which the server closes a connection idle for
    #: ``base.SERVER_IDLE_TIMEOUT_S``.
    idle_closes: frozenset[str]


WEB_SERVERS: list[WebLauncher] = [Nginx(), Apache(), H2o(), Nghttpd(), Caddy()]

WEB_LAUNCHERS: list[Launcher] = list(WEB_SERVERS)
