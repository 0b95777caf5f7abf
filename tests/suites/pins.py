"""Print ``name==version`` for each distribution named on the command line that this
interpreter has installed (those it lacks are left out), as pip requirements.

    .venv/bin/python tests/suites/pins.py httpx httpx2 pytest

``make test-httpx-suites`` installs these in the suite's own venv, so the suite runs the
same library versions as nodelay's tests without seeing .venv's other packages.
"""

from __future__ import annotations

import sys
from importlib import metadata


def pins(names: list[str]) -> list[str]:
    found = []
    for name in names:
        try:
            found.append(f"{name}=={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            continue
    return found


if __name__ == "__main__":
    print(" ".join(pins(sys.argv[1:])))
