"""The Debian web servers of the interop matrix: each serves ``/static/`` from the site and
reverse-proxies ``/app/`` to the httpbin backend (nghttpd, which can only serve files, says
so in its endpoints' ``lacks``)."""

from __future__ import annotations

from .apache import Apache
from .base import Launcher
from .caddy import Caddy
from .h2o import H2o
from .nghttpd import Nghttpd
from .nginx import Nginx

WEB_LAUNCHERS: list[Launcher] = [Nginx(), Apache(), H2o(), Nghttpd(), Caddy()]
