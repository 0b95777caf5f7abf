"""The ``nodelay`` command (``python -m nodelay``).

Each subcommand is one ``_add_<name>`` function that registers its parser and sets
``handler``; ``main`` dispatches. Add a subcommand by adding a function to ``_COMMANDS``.
"""

from __future__ import annotations

import argparse
import sys

from . import _get, bench

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import TypeAlias

    Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"

__all__ = ["main"]


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


_COMMANDS: list[Callable[[Subparsers], None]] = [_add_serve, _get.add_parser, bench.add_parser]


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


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``nodelay`` command; returns the exit status."""
    args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
    handler: Callable[[argparse.Namespace], int] = args.handler
    try:
        return handler(args)
    except KeyboardInterrupt:
        return 0
