"""Test doubles for code that uses nodelay (docs/testing.md).

- The pytest plugin (entry point ``pytest11``: ``nodelay``, ``_plugin.py``) gives the
  ``nodelay_mock`` fixture, a ``NodelayMock``: register responses, get the requests back.
- ``respx.mock(using="nodelay")`` (``nodelay.testing.respx_mocker``).
- ``vcr.VCR(custom_patches=nodelay.testing.VCR_PATCHES)``: vcrpy cassettes record and
  replay what nodelay clients send (``_vcr.py``).

All of them go through one seam (``_seam.py``): while one is active, every client sends
through its ``Interceptor`` where it would have used the engine; nothing changes for
clients otherwise.
"""

from __future__ import annotations

from ._mock import NodelayMock
from ._vcr import VCR_PATCHES

__all__ = ["VCR_PATCHES", "NodelayMock"]
