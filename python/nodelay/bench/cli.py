"""``nodelay bench`` / ``python -m nodelay.bench``: options, the run, the outputs."""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from pathlib import Path
from typing import Any

from . import clients as client_registry
from .native import NATIVES
from .workloads import DEFAULT_WORKLOADS, H2LAB, WORKLOADS, parse_ids

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TypeAlias

    from rich.console import Console

    from .results import Row
    from .runner import Plan, RunOptions

    Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"

__all__ = ["add_arguments", "add_parser", "main"]

DEFAULT_REPEAT = 5
ALL_CLIENTS = (*client_registry.DEFAULT_CLIENTS, *NATIVES)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    workloads = ",".join(DEFAULT_WORKLOADS)
    parser.add_argument(
        "--workloads",
        default=workloads,
        metavar="IDS",
        help=f"comma-separated workload ids from BENCHMARKS.md (default: {workloads})",
    )
    parser.add_argument(
        "--clients",
        default=",".join(ALL_CLIENTS),
        metavar="NAMES",
        help="comma-separated clients and native references (default: all; "
        f"known: {', '.join(ALL_CLIENTS)})",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=DEFAULT_REPEAT,
        metavar="N",
        help="timed repetitions per row after the warm-up (default: %(default)s)",
    )
    parser.add_argument("--quick", action="store_true", help="one repetition per row")
    parser.add_argument(
        "--scale",
        type=float,
        default=1.0,
        metavar="F",
        help="multiply every workload's request count (default: %(default)s)",
    )
    parser.add_argument("--json", type=Path, metavar="FILE", help="write the results as JSON")
    parser.add_argument("--plot", type=Path, metavar="FILE", help="write the charts as PNG")
    parser.add_argument(
        "--syscalls",
        action="store_true",
        help="count write syscalls per request with strace (workloads a, b, c, e)",
    )
    parser.add_argument(
        "--server",
        choices=("embedded", "nginx"),
        default="embedded",
        help="server under the benchmark (default: %(default)s)",
    )
    parser.add_argument(
        "--no-pin", action="store_true", help="do not pin server and clients to CPUs"
    )


def add_parser(subparsers: Subparsers) -> None:
    """Register ``nodelay bench`` (``handler`` is this module's ``main``)."""
    parser = subparsers.add_parser(
        "bench",
        help="run the benchmark lab (nodelay against every installed peer)",
        description="Run the benchmark lab: workloads of BENCHMARKS.md over nodelay, every "
        "installed peer client and the native references, against a local server.",
    )
    add_arguments(parser)
    parser.set_defaults(handler=main)


def _split(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def main(args: argparse.Namespace) -> int:
    """Run the lab with parsed ``args``; returns the exit status."""
    from rich.console import Console

    from .pinning import can_pin
    from .plot import plot
    from .report import render
    from .results import add_ratios, document
    from .runner import RunOptions, plan_rows

    # Wide enough for the tables when the output is a file or a pipe (make bench | tee).
    console = Console() if sys.stdout.isatty() else Console(width=180)
    try:
        workload_ids, pending = parse_ids(args.workloads)
    except ValueError as exc:
        console.print(f"[red]nodelay bench: {exc}")
        return 2
    h2_ids = [w for w in workload_ids if w in H2LAB]
    workload_ids = [w for w in workload_ids if w in WORKLOADS]
    clients = _split(args.clients)
    unknown = [c for c in clients if c not in ALL_CLIENTS]
    if unknown:
        console.print(f"[red]nodelay bench: unknown clients {unknown} (known: {list(ALL_CLIENTS)})")
        return 2
    repeat = 1 if args.quick else args.repeat
    if repeat < 1 or args.scale <= 0:
        console.print("[red]nodelay bench: --repeat must be >= 1 and --scale > 0")
        return 2
    pin = not args.no_pin and can_pin()
    opts = RunOptions(repeat=repeat, scale=args.scale, pin=pin, syscalls=args.syscalls)
    plans = plan_rows(workload_ids, clients)
    started = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    rows = []
    if plans:
        rows = _run_plans(plans, args, opts, console)
    h2_rows = _run_h2lab(h2_ids, clients, repeat, args.server, console)
    finished = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    add_ratios(rows)
    if plans:
        render(rows, pending, console, syscalls=args.syscalls)
    server_kind = args.server if plans else "embedded h2"
    if args.json:
        from .native import environment_tools

        options: dict[str, Any] = {
            "workloads": workload_ids + h2_ids,
            "clients": clients,
            "repeat": repeat,
            "scale": args.scale,
            "server": args.server,
            "pinned": pin,
            "syscalls": args.syscalls,
        }
        doc = document(
            rows,
            command=list(sys.orig_argv),  # the exact command line, interpreter included
            options=options,
            server={"kind": server_kind},
            tools=environment_tools(),
            pending=pending,
            started=started,
            finished=finished,
        )
        doc["h2lab"] = h2_rows
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(doc, indent=2) + "\n")
        console.print(f"results: {args.json}")
    if args.plot and (rows or h2_rows):
        args.plot.parent.mkdir(parents=True, exist_ok=True)
        plot(
            rows,
            args.plot,
            title=f"nodelay bench ({server_kind} server, {started})",
            h2_rows=h2_rows,
        )
        console.print(f"chart: {args.plot}")
    return 0


def _run_plans(
    plans: list[Plan], args: argparse.Namespace, opts: RunOptions, console: Console
) -> list[Row]:
    """Run the HTTP/1.1 rows against one server (embedded or nginx) with a progress bar."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from .runner import run_row
    from .server import start

    server = start(args.server, list({p.workload.id: p.workload for p in plans}.values()), opts.pin)
    rows = []
    try:
        console.print(
            f"nodelay bench: {server.kind} server at {server.url}; {len(plans)} rows, "
            f"{opts.repeat} repetition(s) each, scale {opts.scale}; "
            + ("server on CPU 0, clients on CPU 1" if opts.pin else "no CPU pinning")
        )
        with Progress(
            TextColumn("[progress.description]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=True,
        ) as progress:
            task = progress.add_task("starting", total=len(plans))
            for plan in plans:
                label = f"{plan.workload.id}: {plan.client} {plan.variant}".rstrip()
                progress.update(task, description=label)
                rows.append(run_row(plan, server, opts))
                progress.advance(task)
    finally:
        server.close()
    return rows


def _run_h2lab(
    h2_ids: list[str], clients: list[str], repeat: int, server: str, console: Console
) -> list[dict[str, Any]]:
    """Hand workloads g/i to the HTTP/2 lab (its own embedded h2c and TLS servers)."""
    if not h2_ids:
        return []
    from .h2lab import G_CLIENTS, run_rows

    if server != "embedded":
        console.print(f"g/i run against the embedded h2 servers (not {server})")
    # The h2 lab's rows: the clients asked for that it knows, its nodelay variants with nodelay.
    h2_clients = [
        c for c in G_CLIENTS if c in clients or ("nodelay" in clients and c.startswith("nodelay"))
    ]
    console.print(f"HTTP/2 lab: workloads {','.join(h2_ids)}, clients {','.join(h2_clients)}")
    return run_rows(h2_ids, h2_clients, repeat)


def run(argv: list[str] | None = None) -> int:
    """``python -m nodelay.bench [options]``."""
    parser = argparse.ArgumentParser(prog="python -m nodelay.bench", description=__doc__)
    add_arguments(parser)
    return main(parser.parse_args(argv))
