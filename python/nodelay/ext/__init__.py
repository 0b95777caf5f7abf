"""nodelay's engine under the HTTP libraries people already use.

Each module here binds the engine to one library and imports that library only when the
module itself is imported (``import nodelay`` imports none of them):

- ``nodelay.ext.httpx`` / ``nodelay.ext.httpx2``: transports and clients for httpx and
  its fork httpx2 (``pip install nodelay[httpx]`` / ``nodelay[httpx2]``).
- ``nodelay.ext.requests``: an ``HTTPAdapter`` and a ``Session`` for requests
  (``nodelay[requests]``).
- ``nodelay.ext.dask`` / ``nodelay.ext.ray``: fetch jobs on a Dask or Ray cluster
  (``nodelay[dask]`` / ``nodelay[ray]``).

``_engine`` holds what every bridge shares: engine settings, sending a request, reading
its body, and sorting nodelay's exceptions so a bridge can raise its library's classes.
"""

from __future__ import annotations

__all__: list[str] = []


def missing_library(module: str, extra: str) -> ImportError:
    """The ``ImportError`` a bridge raises when its library is not installed."""
    return ImportError(
        f"nodelay.ext.{extra} needs the {module!r} package: pip install nodelay[{extra}]"
    )
