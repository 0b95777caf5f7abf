"""The application servers of the matrix (the web servers are in ``web.py``)."""

from __future__ import annotations

from .base import Launcher
from .go_server import GoLauncher
from .node_server import NodeLauncher
from .python_servers import GunicornLauncher, HypercornLauncher, UvicornLauncher, WaitressLauncher

APP_LAUNCHERS: list[Launcher] = [
    GoLauncher(),
    NodeLauncher(),
    HypercornLauncher(),
    UvicornLauncher("h11"),
    UvicornLauncher("httptools"),
    GunicornLauncher("sync"),
    GunicornLauncher("gthread"),
    WaitressLauncher(),
]
