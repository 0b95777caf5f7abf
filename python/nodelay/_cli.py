"""The ``nodelay`` command (``python -m nodelay``).

Each subcommand is one ``_add_<name>`` function that registers its parser and sets
``handler``; ``main`` dispatches. Add a subcommand by adding a function to ``_COMMANDS``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from . import _get

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import TypeAlias

    Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"

__all__ = ["main", "with_command"]


def _serve(args: argparse.Namespace) -> int:
    from . import _core

    def on_ready(url: str) -> None:
        print(f"nodelay server listening on {url}", flush=True)

    try:
        _core.serve(
            args.host,
            args.port,
            args.workers,
            on_ready=on_ready,
            http2=args.h2,
            tls=args.tls,
            cert_file=args.cert,
            key_file=args.key,
        )
    except KeyboardInterrupt:
        pass
    return 0


def _add_serve(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "serve",
        help="run the embedded test server until Ctrl-C",
        description="Run the embedded test server (the one the tests and benchmarks use).",
    )
    parser.add_argument(
        "--host", default="127.0.0.1", help="address to bind (default: %(default)s)"
    )
    parser.add_argument(
        "--port",
        type=int,
        default=0,
        help="port to bind; 0 picks a free one (default: %(default)s)",
    )
    parser.add_argument(
        "--workers", type=int, default=1, help="server worker threads (%(default)s)"
    )
    parser.add_argument(
        "--h2",
        action="store_true",
        help="serve HTTP/2 too: h2c (prior knowledge) next to HTTP/1.1, or h2 by ALPN with --tls",
    )
    parser.add_argument(
        "--tls",
        action="store_true",
        help="serve HTTPS; without --cert, with the built-in localhost test certificate "
        "(its CA: nodelay._core.test_ca_pem())",
    )
    parser.add_argument("--cert", help="PEM certificate chain for --tls (implies --tls)")
    parser.add_argument("--key", help="PEM private key for --cert (default: in the --cert file)")
    parser.set_defaults(handler=_serve)


LAB_MISSING = """nodelay bench: the benchmark lab is not part of the installed package.
It lives in the source repository's bench/ directory. From a checkout:
    make dev && .venv/bin/nodelay bench --help    (or: make bench)
or, with any interpreter that has nodelay installed:
    PYTHONPATH=bench python -m nodelay_bench --help
"""


def _find_lab(name: str = "nodelay_bench", checkout: Path | None = None) -> Any:
    """The lab package: importable already (``make dev`` puts ``bench/`` on the venv's
    path), or in the ``bench/`` directory of the checkout this ``nodelay`` was installed
    from in development mode; ``None`` for an installed wheel."""
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError:
        pass
    if checkout is None:
        checkout = Path(__file__).resolve().parents[2] / "bench"
    if not (checkout / name / "__init__.py").is_file():
        return None
    sys.path.insert(0, str(checkout))
    return importlib.import_module(name)


def _bench(args: argparse.Namespace) -> int:
    lab = _find_lab()
    if lab is None:
        sys.stderr.write(LAB_MISSING)
        return 2
    status: int = lab.run(list(args.lab_args), prog="nodelay bench")
    return status


def _add_bench(subparsers: Subparsers) -> None:
    # Every argument, --help included, goes to the lab's own parser: the lab is found (and
    # imported) only when the command runs, so `import nodelay` and the other commands
    # never pay for it.
    parser = subparsers.add_parser(
        "bench",
        help="run the benchmark lab (from a source checkout; see docs/performance.md)",
        add_help=False,
        prefix_chars="\0",
    )
    parser.add_argument("lab_args", nargs=argparse.REMAINDER)
    parser.set_defaults(handler=_bench)


_COMMANDS: list[Callable[[Subparsers], None]] = [_add_serve, _get.add_parser, _add_bench]


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with every subcommand registered."""
    from . import __version__

    parser = argparse.ArgumentParser(
        prog="nodelay", description="nodelay: the fastest HTTP client for Python."
    )
    parser.add_argument("--version", action="version", version=f"nodelay {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for add in _COMMANDS:
        add(subparsers)
    return parser


_TOP_LEVEL_OPTIONS = frozenset({"-h", "--help", "--version"})
"""The options of ``nodelay`` itself; any other first argument starts ``nodelay get``."""


def with_command(parser: argparse.ArgumentParser, argv: Sequence[str]) -> list[str]:
    """``argv`` with ``get`` put first unless it is empty or starts with one of
    ``parser``'s subcommands or ``_TOP_LEVEL_OPTIONS``: ``nodelay -fsSL URL`` is ``nodelay
    get -fsSL URL``, as a curl user types it. A URL spelled like a subcommand (``serve``)
    needs ``get``."""
    commands: set[str] = set()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            commands.update(action.choices)
    if not argv or argv[0] in commands or argv[0] in _TOP_LEVEL_OPTIONS:
        return list(argv)
    return ["get", *argv]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``nodelay`` command; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(with_command(parser, sys.argv[1:] if argv is None else argv))
    handler: Callable[[argparse.Namespace], int] = args.handler
    try:
        return handler(args)
    except KeyboardInterrupt:
        return 0
