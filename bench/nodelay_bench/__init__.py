"""The benchmark lab of nodelay (``nodelay bench`` from a checkout, ``python -m nodelay_bench``).

It lives in the repository's ``bench/`` directory, outside the wheel: users of the package do
not carry the lab, its peer adapters or its chart code. ``make dev`` puts ``bench/`` on the
development venv's path; ``nodelay bench`` finds it next to a checkout by itself.

Heavy imports (rich, matplotlib, the peer clients) happen only when the lab runs. The entry
point is ``run(argv)``.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["LAB_PATH", "child_env", "run"]

LAB_PATH = Path(__file__).resolve().parent.parent
"""The directory holding this package (``bench/``): what a child process needs on its path."""


def child_env() -> dict[str, str]:
    """The environment for the lab's subprocesses (workers, the HTTP/2 rows' children): this
    one with ``bench/`` first on ``PYTHONPATH``, so ``python -m nodelay_bench.…`` works
    whether or not the lab was installed into the interpreter."""
    env = dict(os.environ)
    parts = [str(LAB_PATH), *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(parts))
    return env


def run(argv: list[str] | None = None, prog: str = "python -m nodelay_bench") -> int:
    """Parse ``argv`` (the lab's options) and run; returns the exit status."""
    from .cli import run as _run

    return _run(argv, prog)
