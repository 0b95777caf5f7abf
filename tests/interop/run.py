"""``python -m tests.interop``: start every server, run every check on every endpoint
under nodelay and httpx, write the matrix, print a summary.

Exit status: 1 if any check fails under nodelay while passing under httpx (ours), else 0.
A check failing under both is reported as the server's. A server that cannot run here is
skipped with its reason. Everything runs one thing at a time: on a 2-core machine,
parallel checks would make timings (and so timeouts) flaky.
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from . import checks, report, site
from .clients import Library, libraries
from .servers import go_server
from .servers.base import PROTOCOLS, Endpoint, LaunchEnv, Launcher
from .servers.paths import REPO

#: A check still running after this long is recorded as failed and abandoned (its
#: thread is left behind; every request also has its own timeout, so it ends later).
CHECK_DEADLINE_S = 120.0
#: Longest error text kept per cell.
ERROR_CHARS = 400

DOC = REPO / "docs" / "interop.md"
JSON = REPO / "docs" / "interop.json"


class CheckRun:
    """One check under one library, in a thread of its own so that a hung check is
    abandoned at its deadline instead of stopping the matrix."""

    def __init__(self, check: checks.Check, lib: Library, ep: Endpoint) -> None:
        self.check, self.lib, self.ep = check, lib, ep
        self.result: list[report.Outcome] = []
        lacking = [ep.lacks[t] for t in (check.name, *check.tags) if t in ep.lacks]
        if lacking:
            self.result.append(report.Outcome("n/a", lacking[0], 0.0))
            self.thread = None
        else:
            name = f"{check.name}-{lib.name}"
            self.thread = threading.Thread(target=self._body, daemon=True, name=name)
            self.thread.start()
        self.deadline = time.monotonic() + CHECK_DEADLINE_S

    def _body(self) -> None:
        started = time.monotonic()
        try:
            self.check.run(self.lib, self.ep)
        except checks.NotApplicable as exc:
            self.result.append(report.Outcome("n/a", str(exc), time.monotonic() - started))
        except BaseException as exc:  # every failure is a cell of the matrix
            text = f"{type(exc).__name__}: {exc}"[:ERROR_CHARS]
            self.result.append(report.Outcome("fail", text, time.monotonic() - started))
        else:
            self.result.append(report.Outcome("pass", "", time.monotonic() - started))

    def outcome(self) -> report.Outcome:
        if self.thread is not None:
            self.thread.join(max(0.0, self.deadline - time.monotonic()))
        if not self.result:
            text = f"did not finish within {CHECK_DEADLINE_S:.0f} s"
            return report.Outcome("fail", text, CHECK_DEADLINE_S)
        return self.result[0]


def run_once(
    check: checks.Check, libs: Sequence[Library], ep: Endpoint
) -> list[tuple[Library, report.Outcome]]:
    if check.libs_together:
        runs = [CheckRun(check, lib, ep) for lib in libs]
    else:  # one after the other: each run starts once the previous one has ended
        runs = []
        for lib in libs:
            runs.append(CheckRun(check, lib, ep))
            runs[-1].outcome()
    return [(run.lib, run.outcome()) for run in runs]


def run_repeated(
    check: checks.Check, libs: Sequence[Library], ep: Endpoint, repeat: int
) -> list[tuple[Library, report.Outcome]]:
    """The check ``repeat`` times per library (``--repeat``, for intermittent failures):
    a library's first failure is its outcome, else its last run's."""
    final: dict[str, tuple[Library, report.Outcome]] = {}
    for attempt in range(1, repeat + 1):
        for lib, outcome in run_once(check, libs, ep):
            if lib.name in final and final[lib.name][1].status == "fail":
                continue
            if outcome.status == "fail" and repeat > 1:
                detail = f"run {attempt} of {repeat}: {outcome.detail}"
                outcome = report.Outcome("fail", detail, outcome.seconds)
            final[lib.name] = (lib, outcome)
    return list(final.values())


def run_endpoint(
    ep: Endpoint,
    selected: Sequence[checks.Check],
    libs: Sequence[Library],
    results: report.Results,
    verbose: bool = False,
    repeat: int = 1,
) -> None:
    started = time.monotonic()
    for check in selected:
        for lib, outcome in run_repeated(check, libs, ep, repeat):
            results.add(ep, check.name, lib.name, outcome)
            if verbose:
                print(
                    f"    {check.name:<14} {lib.name:<8} {outcome.status:<4} "
                    f"{outcome.seconds:5.1f} s {outcome.detail[:120]}",
                    flush=True,
                )
    line = results.endpoint_line(ep, [lib.name for lib in libs])
    print(
        f"  {ep.server:<18} {ep.protocol:<6} {line}  ({time.monotonic() - started:.0f} s)",
        flush=True,
    )


@contextlib.contextmanager
def launch_env() -> Iterator[LaunchEnv]:
    work = Path(tempfile.mkdtemp(prefix="nodelay-interop-"))
    work.chmod(0o755)
    try:
        built = site.build(work / "site")
        scratch = work / "work"
        scratch.mkdir()
        scratch.chmod(0o777)
        backend_url = ""
        with contextlib.ExitStack() as stack:
            if go_server.GoLauncher().unavailable() is None:
                backend_url = stack.enter_context(go_server.backend(built.root, scratch))
            else:
                print("interop: no Go server built: web servers get no /app/ backend")
            yield LaunchEnv(
                built.root, built.cert_pem, built.key_pem, built.ca_pem, backend_url, scratch
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m tests.interop", description=__doc__)
    p.add_argument("--servers", help="comma-separated server names (default: all)")
    p.add_argument("--protocols", help=f"comma-separated, of {','.join(PROTOCOLS)}")
    p.add_argument("--checks", help="comma-separated check names (default: all)")
    p.add_argument("--libs", default="nodelay,httpx", help="default: nodelay,httpx")
    p.add_argument("--list", action="store_true", help="list servers and checks, then exit")
    p.add_argument(
        "--write-docs",
        choices=("auto", "yes", "no"),
        default="auto",
        help="rewrite docs/interop.md + docs/interop.json (auto: only for a full run)",
    )
    p.add_argument("--json", type=Path, help="also write the results here")
    p.add_argument("-v", "--verbose", action="store_true", help="print every check's outcome")
    p.add_argument(
        "--repeat", type=int, default=1, help="run each check N times (intermittent failures)"
    )
    return p.parse_args(argv)


def _pick(value: str | None, known: Sequence[str], what: str) -> list[str]:
    if not value:
        return list(known)
    picked = [v.strip() for v in value.split(",") if v.strip()]
    unknown = [v for v in picked if v not in known]
    if unknown:
        raise SystemExit(f"unknown {what}: {', '.join(unknown)} (known: {', '.join(known)})")
    return picked


def main(argv: Sequence[str] | None = None) -> int:
    from .servers.registry import LAUNCHERS

    args = parse(argv)
    names = [launcher.name for launcher in LAUNCHERS]
    if args.list:
        print("servers:", " ".join(names))
        for c in checks.CHECKS:
            print(f"  {c.name:<14} {c.doc}")
        return 0
    servers = _pick(args.servers, names, "servers")
    protocols = _pick(args.protocols, PROTOCOLS, "protocols")
    wanted = _pick(args.checks, [c.name for c in checks.CHECKS], "checks")
    selected = [c for c in checks.CHECKS if c.name in wanted]
    libs = libraries(_pick(args.libs, ("nodelay", "httpx"), "libraries"))
    full = not (args.servers or args.protocols or args.checks) and len(libs) == 2
    full = full and args.repeat == 1
    results = report.Results([c.name for c in selected], [lib.name for lib in libs])
    started = time.monotonic()
    with launch_env() as env:
        for launcher in LAUNCHERS:
            if launcher.name in servers:
                run_server(
                    launcher, env, protocols, selected, libs, results, args.verbose, args.repeat
                )
    results.wall_s = time.monotonic() - started
    print(results.summary())
    write = args.write_docs == "yes" or (args.write_docs == "auto" and full)
    if write:
        report.write_doc(DOC, JSON, results)
        print(f"interop: wrote {DOC.relative_to(REPO)} and {JSON.relative_to(REPO)}")
    if args.json:
        report.write_json(args.json, results)
    return 1 if results.ours() else 0


def run_server(
    launcher: Launcher,
    env: LaunchEnv,
    protocols: Sequence[str],
    selected: Sequence[checks.Check],
    libs: Sequence[Library],
    results: report.Results,
    verbose: bool,
    repeat: int,
) -> None:
    reason = launcher.unavailable()
    if reason is not None:
        print(f"interop: skipping {launcher.name}: {reason}", flush=True)
        results.skip(launcher.name, reason)
        return
    print(f"interop: {launcher.name}", flush=True)
    # A fresh server process for each protocol it offers: a server that crashes during
    # one protocol's checks (Node 20's HTTP/2 server over TLS has aborted with a heap
    # corruption in many_1000) fails the rest of that protocol's checks, not every later
    # protocol's too.
    pending = list(protocols)
    while pending:
        with contextlib.ExitStack() as stack:
            try:
                endpoints = stack.enter_context(launcher.start(env))
            except Exception as exc:
                reason = f"could not start: {type(exc).__name__}: {exc}"[:ERROR_CHARS]
                print(f"interop: skipping {launcher.name}: {reason}", flush=True)
                results.skip(launcher.name, reason)
                return
            offered = {ep.protocol for ep in endpoints}
            pending = [p for p in pending if p in offered]
            if not pending:
                return
            protocol = pending.pop(0)
            for ep in endpoints:
                if ep.protocol == protocol:
                    run_endpoint(ep, selected, libs, results, verbose, repeat)


if __name__ == "__main__":
    sys.exit(main())
