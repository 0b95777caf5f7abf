"""Run an HTTP library's own test suite, as released, with nodelay's classes swapped in.

    python tests/suites/run_library_suite.py SUITE_DIR --library httpx --swap nodelay [pytest args]

``SUITE_DIR`` is the unpacked sdist (its ``tests/`` and ``pyproject.toml``). With
``--swap nodelay`` the library's ``Client``, ``AsyncClient``, ``HTTPTransport`` and
``AsyncHTTPTransport`` are replaced by ``nodelay.ext.<library>``'s before the suite is
imported (as httpx-aiohttp runs httpx's suite over its transport), and so is the
``Client`` its top-level functions (``httpx.get``...) create; ``--swap none`` runs the
suite as it is, for the counts to compare with. The outcome of every test goes to
``--junit`` and the counts are printed as one line:
``<library> <swap>: N passed, N failed, N skipped, N errors``. With ``--known-failures``
the run fails when a test fails that the file does not list (with its reason).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

SWAPPED = {
    "Client": "Client",
    "AsyncClient": "AsyncClient",
    "HTTPTransport": "Transport",
    "AsyncHTTPTransport": "AsyncTransport",
}
"""The library's names → nodelay.ext.<library>'s classes put in their place."""


def alias(suite_library: str, library: str) -> None:
    """Make ``import <suite_library>`` (and its submodules, and its httpcore) give
    ``library``'s modules: a fork with the same API runs its parent's suite."""
    import pkgutil

    for name, target in ((suite_library, library), (_CORE[suite_library], _CORE[library])):
        package = importlib.import_module(target)
        sys.modules[name] = package
        for info in pkgutil.walk_packages(package.__path__, f"{target}."):
            try:
                module = importlib.import_module(info.name)
            except ImportError:  # optional parts (trio, socks backends) not installed
                continue
            sys.modules[name + info.name[len(target) :]] = module


_CORE = {"httpx": "httpcore", "httpx2": "httpcore2"}
"""Each library's httpcore."""


class Setup:
    """A pytest plugin that prepares the run once pytest's own plugins are loaded and
    before the suite's conftest is imported (importing earlier would keep pytest from
    rewriting the asserts of its plugins): aliases, then the swap."""

    def __init__(self, library: str, suite_library: str, swap: bool) -> None:
        self.library = library
        self.suite_library = suite_library
        self.swap = swap

    @pytest.hookimpl(tryfirst=True)
    def pytest_load_initial_conftests(self) -> None:
        if self.suite_library != self.library:
            alias(self.suite_library, self.library)
        if self.swap:
            self.swap_classes()

    def swap_classes(self) -> None:
        lib = importlib.import_module(self.library)
        ext = importlib.import_module(f"nodelay.ext.{self.library}")
        for name, replacement in SWAPPED.items():
            setattr(lib, name, getattr(ext, replacement))
        api = importlib.import_module(f"{self.library}._api")
        api.Client = ext.Client  # httpx.get() & co. create one


def outcomes(junit: Path) -> dict[str, str]:
    """Each test's outcome (passed, failed, skipped, errors) from a JUnit XML report, by
    id ``module::test[params]``."""
    found = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        kinds = {child.tag for child in case}
        outcome = next((k for k in ("error", "failure", "skipped") if k in kinds), "passed")
        test_id = f"{case.get('classname')}::{case.get('name')}"
        found[test_id] = {"error": "errors", "failure": "failed"}.get(outcome, outcome)
    return found


def known_failures(path: Path) -> list[tuple[str, str]]:
    """``(pattern, reason)`` lines of a known-failures file: an fnmatch pattern of test ids,
    whitespace, the reason; ``#`` starts a comment."""
    known = []
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            pattern, _, reason = line.partition(" ")
            known.append((pattern, reason.strip()))
    return known


def unexpected(found: dict[str, str], known: list[tuple[str, str]]) -> list[str]:
    """The tests that failed (or errored) and match no known-failure pattern."""
    from fnmatch import fnmatchcase

    failed = [test for test, outcome in found.items() if outcome in ("failed", "errors")]
    return [test for test in failed if not any(fnmatchcase(test, p) for p, _ in known)]


def foreign_site_packages() -> list[str]:
    """The entries of ``sys.path`` that are another environment's site-packages: a suite
    run must see only its own venv's packages (and nodelay's source), or what is installed
    elsewhere changes what it tests (httptools in .venv makes uvicorn answer with other
    header case)."""
    own = (os.path.realpath(sys.prefix), os.path.realpath(sys.base_prefix))
    return [
        path
        for path in sys.path
        if "site-packages" in path and not os.path.realpath(path).startswith(own)
    ]


def main() -> int:
    foreign = foreign_site_packages()
    if foreign:
        print(f"the suite's venv sees other environments' packages: {foreign}", file=sys.stderr)
        return 2
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suite", type=Path, help="the unpacked sdist")
    parser.add_argument("--library", default="httpx")
    parser.add_argument("--swap", choices=("nodelay", "none"), default="nodelay")
    parser.add_argument("--junit", type=Path, default=None)
    parser.add_argument(
        "--known-failures",
        type=Path,
        default=None,
        help="fail (exit 1) when a test fails that this file does not list",
    )
    parser.add_argument(
        "--suite-library",
        default=None,
        help="the library the suite was written for, when it is not --library (httpx's suite "
        "run over httpx2: its imports of httpx and httpcore give httpx2 and httpcore2)",
    )
    options, pytest_args = parser.parse_known_args()  # the rest goes to pytest
    suite = options.suite.resolve()
    known = None if options.known_failures is None else known_failures(options.known_failures)
    junit = (options.junit or suite / f"junit-{options.library}-{options.swap}.xml").resolve()
    # Only the plugins the suite needs: nodelay's test environment has others (pytest-httpx,
    # nodelay's own) that the suite never asked for.
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    os.chdir(suite)
    sys.path.insert(0, str(suite))
    code = pytest.main(
        [
            "-c",
            "pyproject.toml",
            "--rootdir",
            str(suite),
            "-p",
            "no:cacheprovider",
            "-p",
            "anyio",  # the one plugin the suite needs (autoloading is off, see main)
            "-W",
            "ignore::ResourceWarning",
            "-q",
            "--tb=line",
            f"--junitxml={junit}",
            "tests",
            *pytest_args,
        ],
        plugins=[
            Setup(
                options.library,
                options.suite_library or options.library,
                options.swap == "nodelay",
            )
        ],
    )
    found = outcomes(junit)
    kinds = ("passed", "failed", "skipped", "errors")
    summary = ", ".join(f"{list(found.values()).count(kind)} {kind}" for kind in kinds)
    print(f"{options.library} {options.swap}: {summary}")
    if known is None:
        return int(code)
    surprises = unexpected(found, known)
    for test in surprises:
        print(f"unexpected failure: {test}")
    return 1 if surprises else 0


if __name__ == "__main__":
    sys.exit(main())
