"""Plans the rows (client x workload x variant, then native references) and runs them.

Each Python row is one fresh worker subprocess pinned to the client CPU (warm-up, then
the repetitions); each native repetition is one run of the tool.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import child_env
from . import clients as client_registry
from .langs import LANGS, lang_env
from .native import NATIVES, locate, run_native
from .pinning import CLIENT_CPU
from .results import Row
from .server import Server
from .stats import Rep
from .syscalls import writes_per_request
from .workloads import WORKLOADS, Workload

__all__ = ["ROW_SECONDS", "Plan", "RunOptions", "pass_seconds", "plan_rows", "run_row"]

WORKER_TIMEOUT = 1800.0
ASYNC_ROWS = frozenset({"aiohttp", "asyncio-floor"})
"""Python rows on asyncio whose names do not end in ``-async``."""
SYSCALL_WORKLOADS = frozenset("abce")
ROW_SECONDS = 60.0
"""Seconds a language worker's row (``--lang``) may spend sending: its warm-up and timed
repetitions share them evenly, as ab's ``-t`` caps a run. Perl's HTTP::Tiny pays a 40 ms
delayed-ACK stall on every POST of workload e (head and body in two writes, no
TCP_NODELAY): about 8 minutes for that one row at scale 1. A pass that reaches its share
stops; its rate is over the requests it completed, and the row is marked ``capped``."""


def pass_seconds(repeat: int) -> float:
    """The time cap of each pass (the warm-up, each repetition) of a language worker's row."""
    return ROW_SECONDS / (repeat + 1)


@dataclass(frozen=True)
class RunOptions:
    repeat: int
    scale: float
    pin: bool
    syscalls: bool
    loop: str = "asyncio"
    """Event loop of the Python asyncio rows (``--loop``): "asyncio" or "uvloop"."""


@dataclass(frozen=True)
class Plan:
    workload: Workload
    client: str
    variant: str
    kind: str


def _variant_applies(w: Workload, variant: str, client: str) -> bool:
    only = w.variant_only.get(variant)
    return not only or client in only


def _workload_applies(w: Workload, client: str) -> bool:
    only = client_registry.WORKLOADS_OF.get(client)
    return w.id in only if only is not None else not w.listed_only


def plan_rows(workload_ids: list[str], clients: list[str], lang: str = "python") -> list[Plan]:
    """Every row to produce, in display order (natives after the clients). ``lang`` other
    than "python": ``clients`` name that language's worker rows (``langs.LANGS``)."""
    plans: list[Plan] = []
    for wid in workload_ids:
        w = WORKLOADS[wid]
        for client in clients:
            if lang != "python" and client in LANGS[lang].clients:
                plans.append(Plan(w, client, LANGS[lang].variants.get(wid, ""), lang))
            elif lang == "python" and client in client_registry.CLIENTS:
                if not _workload_applies(w, client):
                    continue
                for variant in ("", *w.variants):
                    if _variant_applies(w, variant, client):
                        plans.append(Plan(w, client, variant, "python"))
        for client in clients:
            if client in NATIVES and client in w.natives:
                plans.append(Plan(w, client, "", "floor" if client == "floor" else "native"))
    return plans


def _worker_argv(
    plan: Plan,
    url: str,
    n: int,
    warmup: int,
    repeat: int,
    capped: bool = True,
    loop: str = "asyncio",
) -> list[str]:
    """The worker's command; ``capped`` False for the strace runs, whose count of writes
    per request needs every request sent (they send a few hundred); ``loop`` the event
    loop of an asyncio row."""
    spec: dict[str, Any] = {
        "client": plan.client,
        "workload": plan.workload.id,
        "variant": plan.variant,
        "url": url,
        "n": n,
        "warmup": warmup,
        "repeat": repeat,
        "loop": loop,
    }
    if plan.kind in LANGS:
        lang = LANGS[plan.kind]
        cap = pass_seconds(repeat) if capped else None
        return lang.argv({**spec, **lang.spec(plan.workload), "pass_seconds": cap})
    return [sys.executable, "-m", "nodelay_bench.worker", json.dumps(spec)]


def _worker_env(plan: Plan) -> dict[str, str]:
    env = child_env()
    return lang_env(LANGS[plan.kind], env) if plan.kind in LANGS else env


def _run_python(plan: Plan, row: Row, url: str, opts: RunOptions) -> None:
    """One worker subprocess (Python's, or a language worker's: the same JSON line)."""
    w = plan.workload
    from .pinning import pin_to

    proc = subprocess.run(
        _worker_argv(
            plan, url, w.count(opts.scale), w.warmup(opts.scale), opts.repeat, loop=opts.loop
        ),
        capture_output=True,
        text=True,
        timeout=WORKER_TIMEOUT,
        preexec_fn=pin_to(CLIENT_CPU if opts.pin else None),
        env=_worker_env(plan),
    )
    lines = proc.stdout.strip().splitlines()
    try:
        data = json.loads(lines[-1]) if lines else None
    except ValueError:
        data = None
    if not isinstance(data, dict):
        last = (proc.stderr.strip().splitlines() or [""])[-1][:160]
        row.status, row.reason = "failed", f"worker exited with {proc.returncode}: {last}"
        return
    if proc.returncode != 0:
        # The result line was written, then the interpreter died on the way out (seen with
        # a peer's runtime at shutdown): the measurements stand; say so.
        row.reason = f"worker exited with {proc.returncode} after reporting"
    if "skipped" in data:
        row.status, row.reason = "skipped", data["skipped"]
        return
    if "failed" in data:
        row.status, row.reason = "failed", data["failed"]
        return
    row.reps = [Rep.from_dict(r) for r in data["reps"]]
    row.protocol = data.get("protocol", "?")
    row.peak_rss_kb = data.get("peak_rss_kb")
    row.chunks = data.get("chunks")
    row.note = data.get("note", "")
    row.latency_ms = data.get("latency_ms")
    row.connect_ms = data.get("connect_ms")
    row.tls_ms = data.get("tls_ms")
    if data.get("capped"):
        row.capped = True
        cap = f"capped at {pass_seconds(opts.repeat):.3g} s per pass (rate over the requests sent)"
        row.note = f"{row.note}; {cap}" if row.note else cap
    if opts.syscalls and w.id in SYSCALL_WORKLOADS and not plan.variant:
        with tempfile.TemporaryDirectory(prefix="nodelay-bench-strace-") as tmp:
            row.writes_per_request = writes_per_request(
                lambda n: _worker_argv(plan, url, n, 0, 1, capped=False, loop=opts.loop),
                Path(tmp),
                _worker_env(plan),
            )


def _run_native(plan: Plan, row: Row, url: str, opts: RunOptions) -> None:
    native = NATIVES[plan.client]
    w = plan.workload
    if native.name not in w.natives:
        row.status, row.reason = "skipped", f"{native.name} does not run workload {w.id}"
        return
    binary, reason = locate(native)
    if binary is None:
        row.status, row.reason = "skipped", reason
        return
    with tempfile.TemporaryDirectory(prefix="nodelay-bench-native-") as tmp:
        n = w.count(opts.scale)
        result = run_native(
            native, binary, w, url, n, opts.repeat, Path(tmp), CLIENT_CPU if opts.pin else None
        )
        row.reps, row.protocol = result.reps, result.protocol
        row.latency_ms, row.connect_ms = result.latency_ms, result.connect_ms
        if opts.syscalls and native.name == "floor" and w.id in SYSCALL_WORKLOADS:
            row.writes_per_request = writes_per_request(
                lambda k: native.build(w, url, k, Path(tmp), binary), Path(tmp)
            )


def run_row(plan: Plan, server: Server, opts: RunOptions) -> Row:
    """Measure one planned row; never raises for a client's failure (the row says it)."""
    w = plan.workload
    flavour = "sync" if plan.kind in LANGS else "native" if plan.kind != "python" else "sync"
    if plan.kind == "python":
        flavour = "async" if plan.client.endswith("-async") or plan.client in ASYNC_ROWS else "sync"
    row = Row(w.id, plan.client, plan.kind, w.unit, variant=plan.variant, flavour=flavour)
    if plan.kind == "python" and (reason := client_registry.probe(plan.client)):
        row.status, row.reason = "skipped", reason
        return row
    if plan.kind in LANGS:
        lang = LANGS[plan.kind]
        reason = lang.probe()
        if reason is None and w.id not in lang.workloads:
            reason = f"the {lang.name} worker runs workloads {', '.join(sorted(lang.workloads))}"
        if reason is not None:
            row.status, row.reason = "skipped", reason
            return row
    if reason := server.unsupported(w):
        row.status, row.reason = "skipped", reason
        return row
    url = server.url + w.path
    try:
        if plan.kind == "python" or plan.kind in LANGS:
            _run_python(plan, row, url, opts)
        else:
            _run_native(plan, row, url, opts)
    except Exception as exc:  # a broken peer must not end the whole lab
        row.status, row.reason = "failed", f"{type(exc).__name__}: {exc}"[:200]
    if row.status == "ok" and row.errors():
        errors = f"{row.errors()} wrong or failed responses"
        row.reason = f"{row.reason}; {errors}" if row.reason else errors
    return row


ProgressFn = Callable[[Plan, Row], None]
