"""The benchmark lab (``nodelay bench``, ``python -m nodelay.bench``).

Heavy imports (rich, matplotlib, the peer clients) happen only when the lab runs, never at
``import nodelay``. The command-line entry points are ``add_parser`` and ``main``.
"""

from __future__ import annotations

import argparse

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TypeAlias

    Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"

__all__ = ["add_parser", "main"]


def add_parser(subparsers: Subparsers) -> None:
    """Register the ``bench`` subcommand on a ``nodelay`` command's subparsers."""
    from .cli import add_parser as _add

    _add(subparsers)


def main(args: argparse.Namespace) -> int:
    """Run the lab with parsed arguments; returns the exit status."""
    from .cli import main as _main

    return _main(args)
