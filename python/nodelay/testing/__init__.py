"""Test doubles for code that uses nodelay (docs/testing.md).

- The pytest plugin (entry point ``pytest11``: ``nodelay``) gives the ``nodelay_mock``
  fixture, a ``NodelayMock``: register responses, get the requests back.
- ``respx.mock(using="nodelay")`` (``nodelay.testing.respx_mocker``).
- ``vcr.VCR(custom_patches=nodelay.testing.VCR_PATCHES)``: vcrpy cassettes record and
  replay what nodelay clients send (``nodelay.testing._vcr``).

All of them go through one seam (``_seam.py``): every client's engine is replaced by an
``Interceptor`` while they are active; nothing changes for clients otherwise.
"""

from __future__ import annotations

from ._matching import MockOptions
from ._mock import NodelayMock
from ._seam import Interceptor, patches
from ._vcr import VCR_PATCHES, CassetteRoute

__all__ = ["VCR_PATCHES", "CassetteRoute", "Interceptor", "MockOptions", "NodelayMock", "patches"]
