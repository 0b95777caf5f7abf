"""``nodelay bench`` / ``python -m nodelay_bench``: options, the run, the outputs.

One runner for every workload: the HTTP/1.1 rows against the embedded server or nginx,
then the HTTP/2 rows (g, i) against their own h2c and h2+TLS servers, under one progress
bar; one table per workload, one JSON document, one PNG and one HTML report for them all.
``--from FILE`` redraws the outputs of a results file without running anything, and
``--compare OLD NEW`` prints each row's change between two results files.
"""

from __future__ import annotations

import argparse
import datetime
import sys
import time
from pathlib import Path
from typing import IO, Any

from . import clients as client_registry
from .langs import LANGS
from .native import NATIVES
from .short import (
    SHORT_NODELAY,
    SHORT_PEER_COUNT,
    SHORT_PEERS,
    SHORT_REFERENCES,
    SHORT_REPEAT,
    SHORT_WORKLOADS,
    short_clients,
)
from .workloads import DEFAULT_WORKLOADS, H2LAB, WORKLOADS, parse_ids

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rich.console import Console

    from .results import Row
    from .runner import RunOptions

__all__ = ["RowLog", "add_arguments", "chart_title", "main", "run"]

DEFAULT_REPEAT = 5
ALL_CLIENTS = (*client_registry.DEFAULT_CLIENTS, *NATIVES)
KNOWN_CLIENTS = (*client_registry.CLIENTS, *NATIVES)
"""``ALL_CLIENTS`` plus the opt-in rows (``client_registry.OPT_IN``)."""
CONSOLE_WIDTH = 200
"""Columns of the tables when the output is a file or a pipe (make bench | tee)."""
LOOPS = ("asyncio", "uvloop")
"""``--loop``: the event loops the Python worker runs asyncio rows on."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    workloads = ",".join(DEFAULT_WORKLOADS)
    parser.add_argument(
        "--lang",
        choices=("python", *LANGS),
        default="python",
        help="language of the client rows: python (this interpreter's clients) or a "
        "language worker's (bench/workers/LANG/); default: %(default)s",
    )
    parser.add_argument(
        "--workloads",
        default=None,
        metavar="IDS",
        help=f"comma-separated workload ids (default: {workloads}; with --lang, the "
        "workloads its worker runs)",
    )
    parser.add_argument(
        "--clients",
        default=None,
        metavar="NAMES",
        help="comma-separated clients and native references (default: all; "
        f"known: {', '.join(KNOWN_CLIENTS)}; "
        + "; ".join(
            f"with --lang {name}: {', '.join(lang.clients)}" for name, lang in LANGS.items()
        )
        + ")",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=None,
        metavar="N",
        help=f"timed repetitions per row after the warm-up (default: {DEFAULT_REPEAT}; "
        f"{SHORT_REPEAT} with --short)",
    )
    parser.add_argument(
        "--short",
        action="store_true",
        help=f"the short lab (make bench): workloads {','.join(SHORT_WORKLOADS)} over "
        f"{', '.join((*SHORT_NODELAY, *SHORT_REFERENCES))} and the {SHORT_PEER_COUNT} "
        f"fastest installed of {', '.join(SHORT_PEERS)}, {SHORT_REPEAT} repetitions; "
        "--workloads, --clients and --repeat still win",
    )
    parser.add_argument("--quick", action="store_true", help="one repetition per row")
    parser.add_argument(
        "--scale",
        type=float,
        default=1.0,
        metavar="F",
        help="multiply every HTTP/1.1 workload's request count (default: %(default)s)",
    )
    parser.add_argument("--json", type=Path, metavar="FILE", help="write the results as JSON")
    parser.add_argument("--plot", type=Path, metavar="FILE", help="write the charts as PNG")
    parser.add_argument(
        "--html",
        type=Path,
        metavar="FILE",
        help="write one self-contained HTML report (tables and charts inline)",
    )
    parser.add_argument(
        "--from",
        dest="from_json",
        type=Path,
        metavar="FILE",
        help="run nothing: print the tables of a results file (and write --plot/--html from it)",
    )
    parser.add_argument(
        "--compare",
        nargs=2,
        type=Path,
        metavar=("OLD", "NEW"),
        help="run nothing: print each row's change from OLD to NEW (req/s, CPU/req, p99)",
    )
    parser.add_argument(
        "--syscalls",
        action="store_true",
        help="count write syscalls per request with strace (workloads a, b, c, e)",
    )
    parser.add_argument(
        "--server",
        choices=("embedded", "nginx"),
        default="embedded",
        help="server of the HTTP/1.1 workloads (default: %(default)s)",
    )
    parser.add_argument(
        "--no-pin", action="store_true", help="do not pin server and clients to CPUs"
    )
    parser.add_argument(
        "--loop",
        choices=LOOPS,
        default="asyncio",
        help="event loop of the Python asyncio rows of workloads a-f and j "
        "(default: %(default)s; uvloop: its rows say so in their notes)",
    )


def _split(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def main(args: argparse.Namespace) -> int:
    """Run the lab with parsed ``args``; returns the exit status."""
    from rich.console import Console

    console = Console() if sys.stdout.isatty() else Console(width=CONSOLE_WIDTH)
    if args.compare:
        from .compare import compare_files

        return compare_files(args.compare[0], args.compare[1], console)
    if args.from_json:
        return _render_file(args, console)
    lang = LANGS.get(args.lang)
    known = (*lang.clients, *NATIVES) if lang else KNOWN_CLIENTS
    default_workloads = ",".join(sorted(lang.workloads)) if lang else ",".join(DEFAULT_WORKLOADS)
    if args.short and not lang:
        default_workloads = ",".join(SHORT_WORKLOADS)
    try:
        workload_ids, pending = parse_ids(args.workloads or default_workloads)
    except ValueError as exc:
        console.print(f"[red]nodelay bench: {exc}")
        return 2
    default = lang.clients if lang else ALL_CLIENTS
    if args.short and not lang:
        default = tuple(short_clients(client_registry.probe))
    clients = _split(args.clients) if args.clients else list(default)
    unknown = [c for c in clients if c not in known]
    if unknown:
        console.print(f"[red]nodelay bench: unknown clients {unknown} (known: {list(known)})")
        return 2
    repeat = 1 if args.quick else args.repeat or (SHORT_REPEAT if args.short else DEFAULT_REPEAT)
    if repeat < 1 or args.scale <= 0:
        console.print("[red]nodelay bench: --repeat must be >= 1 and --scale > 0")
        return 2
    from .native import environment_tools
    from .pinning import can_pin
    from .results import add_ratios, document
    from .runner import RunOptions

    pin = not args.no_pin and can_pin()
    opts = RunOptions(
        repeat=repeat, scale=args.scale, pin=pin, syscalls=args.syscalls, loop=args.loop
    )
    started = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    rows = _run_all(workload_ids, clients, args, opts, console)
    finished = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    add_ratios(rows)
    options: dict[str, Any] = {
        "workloads": workload_ids,
        "clients": clients,
        "lang": args.lang,
        "repeat": repeat,
        "short": args.short,
        "scale": args.scale,
        "server": args.server,
        "pinned": pin,
        "syscalls": args.syscalls,
        "loop": args.loop,
    }
    doc = document(
        rows,
        command=list(sys.orig_argv),  # the exact command line, interpreter included
        options=options,
        server={"kind": args.server, "h2": "embedded h2c and h2+TLS (workloads g, i)"},
        tools=environment_tools(),
        pending=pending,
        started=started,
        finished=finished,
    )
    return _outputs(doc, rows, args, console)


def _render_file(args: argparse.Namespace, console: Console) -> int:
    from .results import load, rows_of

    try:
        doc = load(args.from_json)
    except (OSError, ValueError) as exc:
        console.print(f"[red]nodelay bench: {exc}")
        return 2
    return _outputs(doc, rows_of(doc), args, console, write_json=False)


def _outputs(
    doc: dict[str, Any],
    rows: list[Row],
    args: argparse.Namespace,
    console: Console,
    write_json: bool = True,
) -> int:
    """The tables on the terminal, then the files asked for."""
    from .report import render

    pending = [(p["workload"], p["reason"]) for p in doc.get("pending_workloads", [])]
    render(rows, pending, console, syscalls=bool(doc.get("options", {}).get("syscalls")))
    if write_json and args.json:
        from .results import save

        save(doc, args.json)
        console.print(f"results: {args.json}")
    title = chart_title(doc)
    if args.plot and any(r.status == "ok" for r in rows):
        from .plot import plot

        args.plot.parent.mkdir(parents=True, exist_ok=True)
        plot(rows, args.plot, title=title)
        console.print(f"chart: {args.plot}")
    if args.html:
        from .html import write_html

        args.html.parent.mkdir(parents=True, exist_ok=True)
        write_html(doc, rows, args.html, title=title)
        console.print(f"report: {args.html}")
    return 0


def chart_title(doc: dict[str, Any]) -> str:
    """What every chart and report of a results document is titled."""
    server = doc.get("server", {}).get("kind", "?")
    return f"nodelay bench ({server} server, {doc.get('started', '?')})"


class RowLog:
    """One line on ``stream`` per finished row when it is not a terminal (``make bench |
    tee``, CI), where the progress bar draws nothing: the row, its median and CPU per
    request, or why it was skipped or failed (the HTTP/2 rows, measured together, say
    "done"; their figures come in the tables)."""

    def __init__(self, total: int, stream: IO[str]) -> None:
        self.total = total
        self.done = 0
        self.stream = stream
        self.enabled = not stream.isatty()
        self.started = time.monotonic()

    def finished(self, label: str, row: Row | None = None) -> None:
        self.done += 1
        if not self.enabled:
            return
        elapsed = time.monotonic() - self.started
        self.stream.write(
            f"nodelay bench: [{self.done}/{self.total}] {label}: {_outcome(row)} "
            f"({elapsed:.0f} s)\n"
        )
        self.stream.flush()


def _outcome(row: Row | None) -> str:
    from .report import fmt_num

    if row is None:
        return "done"
    if row.status != "ok":
        return f"{row.status}: {row.reason}"
    median, cpu = row.median(), row.cpu_us()
    figure = f"{fmt_num(median)} {row.unit}" if median is not None else "no figure"
    cpu_text = f", {fmt_num(cpu, 1)} µs CPU/req" if cpu is not None else ""
    errors = f", {row.errors()} errors" if row.errors() else ""
    return figure + cpu_text + errors


def _run_all(
    workload_ids: list[str],
    clients: list[str],
    args: argparse.Namespace,
    opts: RunOptions,
    console: Console,
) -> list[Row]:
    """Every row, HTTP/1.1 then HTTP/2, under one progress bar."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from .h2lab import G_CLIENTS, count_rows
    from .h2lab import run_rows as run_h2_rows
    from .runner import plan_rows, run_row
    from .server import start

    plans = plan_rows([w for w in workload_ids if w in WORKLOADS], clients, args.lang)
    # The HTTP/2 rows (g, i) run Python clients only.
    h2_ids = [w for w in workload_ids if w in H2LAB] if args.lang == "python" else []
    # g's rows: the clients asked for that it knows, and nodelay's batch row with nodelay.
    h2_clients = [
        c for c in G_CLIENTS if c in clients or (c == "nodelay-batch" and "nodelay" in clients)
    ]
    total = len(plans) + (count_rows(h2_ids, h2_clients) if h2_ids else 0)
    console.print(
        f"nodelay bench: {total} rows, {opts.repeat} repetition(s) each, scale {opts.scale}; "
        + ("server on CPU 0, clients on CPU 1" if opts.pin else "no CPU pinning")
    )
    rows: list[Row] = []
    log = RowLog(total, sys.stderr)
    with Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as progress:
        task = progress.add_task("starting", total=total)
        if plans:
            workloads = list({p.workload.id: p.workload for p in plans}.values())
            server = start(args.server, workloads, opts.pin)
            try:
                console.print(f"HTTP/1.1 rows: {server.kind} server at {server.url}")
                for plan in plans:
                    label = f"{plan.workload.id}: {plan.client} {plan.variant}".rstrip()
                    progress.update(task, description=label)
                    rows.append(run_row(plan, server, opts))
                    progress.advance(task)
                    log.finished(label, rows[-1])
            finally:
                server.close()
        if h2_ids:
            if args.server != "embedded":
                console.print(f"g and i run against the embedded h2 servers (not {args.server})")
            running: list[str] = []

            def advance(label: str) -> None:
                if running:
                    progress.advance(task)
                    log.finished(running.pop())
                running.append(label)
                progress.update(task, description=label)

            rows += run_h2_rows(h2_ids, h2_clients, opts.repeat, advance)
            progress.advance(task)
            if running:
                log.finished(running.pop())
    return rows


def run(argv: list[str] | None = None, prog: str = "python -m nodelay_bench") -> int:
    """Parse the lab's options from ``argv`` (default: the command line) and run."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description="The benchmark lab: the workloads of docs/performance.md over nodelay, "
        "every installed peer client and the native references, against local servers.",
    )
    add_arguments(parser)
    return main(parser.parse_args(argv))
