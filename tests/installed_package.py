"""pytest plugin for `make test-wheel`: the suite must exercise the installed wheel.

Loaded with `-p installed_package` (tests/ on PYTHONPATH). It fails the session before any
test runs unless `nodelay` and its extension module `nodelay._core` are imported from the
interpreter's site-packages, so a checkout on sys.path cannot be tested by mistake.
"""

from __future__ import annotations

import sysconfig
from pathlib import Path

import pytest


def _installed_files() -> tuple[Path, Path, Path]:
    import nodelay
    from nodelay import _core

    site = Path(sysconfig.get_paths()["purelib"]).resolve()
    return site, Path(nodelay.__file__).resolve(), Path(_core.__file__ or "").resolve()


def pytest_report_header() -> str:
    _, package, core = _installed_files()
    return f"nodelay under test: {package} (extension {core.name})"


def pytest_sessionstart(session: pytest.Session) -> None:
    site, package, core = _installed_files()
    for path in (package, core):
        if site not in path.parents:
            raise pytest.UsageError(f"{path} is not under {site}: not the installed package")
