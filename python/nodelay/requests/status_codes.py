"""``requests.codes``: status codes by name (``codes.ok``, ``codes["not_found"]``,
``codes.NOT_FOUND``); nodelay's ``codes`` enum, which answers to requests' names."""

from __future__ import annotations

from .. import codes

__all__ = ["codes"]
