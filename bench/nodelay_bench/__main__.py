"""``python -m nodelay_bench`` (with ``bench/`` on the path, as ``make dev`` sets it up)."""

from __future__ import annotations

from . import run

raise SystemExit(run())
