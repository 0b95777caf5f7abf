"""Every server the matrix runs, in the order it runs them."""

from __future__ import annotations

from .apps import APP_LAUNCHERS
from .base import Launcher
from .web import WEB_LAUNCHERS

LAUNCHERS: list[Launcher] = [*APP_LAUNCHERS, *WEB_LAUNCHERS]
