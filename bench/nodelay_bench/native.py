"""Native references: the Rust floor, wrk, ab, h2load (--h1) and the curl CLI.

Each repetition is one run of the tool, pinned like the Python clients. Its CPU time is
the child's user+sys from ``wait4`` (tool start-up included; the floor reports its own,
loop only). Outputs are parsed into the same repetition records as the Python rows.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .floor import find_or_build
from .pinning import pin_to
from .stats import Rep, timing_summary
from .workloads import Workload, form_body

__all__ = ["NATIVES", "Native", "NativeResult", "Timings", "run_native"]

Timing = dict[str, float | None]
"""A timing summary (p50, p90, p99, max, mean in ms; n), as ``stats.timing_summary``."""

RUN_TIMEOUT = 600.0
FORM_TYPE = "application/x-www-form-urlencoded"


@dataclass
class NativeResult:
    reps: list[Rep]
    protocol: str
    latency_ms: Timing | None = None
    """From the tool's own report of the last repetition (None where it gives none)."""
    connect_ms: Timing | None = None


@dataclass(frozen=True)
class Timings:
    """What a tool reports about its requests' times, in milliseconds."""

    latency: Timing | None = None
    connect: Timing | None = None


def _timing(
    p50: float | None,
    p90: float | None,
    p99: float | None,
    top: float | None,
    mean: float | None = None,
) -> Timing:
    """A timing summary from a tool's figures (a tool that lacks one leaves it None)."""
    return {"p50": p50, "p90": p90, "p99": p99, "max": top, "mean": mean, "n": None}


@dataclass(frozen=True)
class Native:
    name: str
    tool: str
    """Executable looked up on PATH ("" for the floor, which is built)."""
    build: Callable[[Workload, str, int, Path, str], list[str]]
    """(workload, url, requests, tmp dir, binary) → argv."""
    parse: Callable[[str, Workload, int], tuple[int, float, int, int]]
    """(stdout, workload, requests) → (requests done, seconds, body bytes, errors)."""
    protocol: str = "HTTP/1.1"
    timings: Callable[[str], Timings] | None = None
    """stdout → the latency and connect figures the tool prints (None: it prints none)."""


# -- the floor ---------------------------------------------------------------------------


def _floor_argv(w: Workload, url: str, n: int, tmp: Path, binary: str) -> list[str]:
    argv = [binary, "--url", url, "-n", str(n), "--warmup", str(w.warmup(n / w.requests))]
    if w.concurrency > 1:
        argv += ["--concurrency", str(w.concurrency)]
    if w.method == "POST":
        argv += ["--method", "POST", "--data", form_body().decode(), "--content-type", FORM_TYPE]
        argv += ["--expect-length", str(len(form_body()))]
    elif w.expect_length is not None:
        argv += ["--expect-length", str(w.expect_length)]
    if w.fresh_client:
        argv.append("--new-connection")
    return argv


def _floor_parse(out: str, w: Workload, n: int) -> tuple[int, float, int, int]:
    data = json.loads(out.strip().splitlines()[-1])
    return int(data["requests"]), float(data["seconds"]), int(data["bytes"]), int(data["errors"])


# -- wrk ---------------------------------------------------------------------------------

_WRK_DONE = re.compile(r"(\d+) requests in ([\d.]+)(us|ms|s|m)\b")
_UNIT = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0}


def _wrk_argv(w: Workload, url: str, n: int, tmp: Path, binary: str) -> list[str]:
    # wrk runs for a duration: aim at about the time the sequential floor needs for n.
    seconds = max(1, round(3 * n / w.requests))
    argv = [binary, "-t1", f"-c{w.concurrency}", f"-d{seconds}s", "--latency"]
    if w.method == "POST":
        script = tmp / "post.lua"
        body = form_body().decode()
        script.write_text(
            f'wrk.method = "POST"\nwrk.body = "{body}"\n'
            f'wrk.headers["Content-Type"] = "{FORM_TYPE}"\n'
        )
        argv += ["-s", str(script)]
    return [*argv, url]


def _wrk_parse(out: str, w: Workload, n: int) -> tuple[int, float, int, int]:
    m = _WRK_DONE.search(out)
    if m is None:
        raise ValueError(f"unexpected wrk output: {out[-300:]!r}")
    done, seconds = int(m.group(1)), float(m.group(2)) * _UNIT[m.group(3)]
    errors = 0
    if bad := re.search(r"Non-2xx or 3xx responses: (\d+)", out):
        errors += int(bad.group(1))
    if sock := re.search(
        r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out
    ):
        errors += sum(int(x) for x in sock.groups())
    size = w.expect_length or len(form_body())
    return done - errors, seconds, (done - errors) * size, errors


_WRK_TIME = r"([\d.]+)(us|ms|s|m)"


def _wrk_ms(value: str, unit: str) -> float:
    return float(value) * _UNIT[unit] * 1000


def _wrk_timings(out: str) -> Timings:
    """``--latency``'s distribution (50/75/90/99 %) and the max of the thread stats."""
    dist = {
        int(m.group(1)): _wrk_ms(m.group(2), m.group(3))
        for m in re.finditer(rf"^\s+(\d+)%\s+{_WRK_TIME}", out, re.MULTILINE)
    }
    stats = re.search(rf"Latency\s+{_WRK_TIME}\s+{_WRK_TIME}\s+{_WRK_TIME}", out)
    if not dist and stats is None:
        return Timings()
    mean = _wrk_ms(stats.group(1), stats.group(2)) if stats else None
    top = _wrk_ms(stats.group(5), stats.group(6)) if stats else None
    return Timings(latency=_timing(dist.get(50), dist.get(90), dist.get(99), top, mean))


# -- ab ----------------------------------------------------------------------------------


def _ab_argv(w: Workload, url: str, n: int, tmp: Path, binary: str) -> list[str]:
    argv = [binary, "-q", "-k", "-n", str(n), "-c", str(w.concurrency)]
    if w.method == "POST":
        body = tmp / "post.body"
        body.write_bytes(form_body())
        argv += ["-p", str(body), "-T", FORM_TYPE]
    return [*argv, url]


def _ab_parse(out: str, w: Workload, n: int) -> tuple[int, float, int, int]:
    def field(name: str) -> str:
        m = re.search(rf"^{name}:\s+([\d.]+)", out, re.MULTILINE)
        if m is None:
            raise ValueError(f"ab output has no {name!r}: {out[-300:]!r}")
        return m.group(1)

    complete, failed = int(field("Complete requests")), int(field("Failed requests"))
    non2xx = re.search(r"^Non-2xx responses:\s+(\d+)", out, re.MULTILINE)
    errors = failed + (int(non2xx.group(1)) if non2xx else 0)
    size = w.expect_length or len(form_body())
    ok = complete - errors
    return ok, float(field("Time taken for tests")), ok * size, errors


def _ab_timings(out: str) -> Timings:
    """The "Percentage of the requests served within a certain time (ms)" table and the
    Connect row of "Connection Times (ms)" (min, mean, [+/-sd], median, max)."""
    pct = {
        int(m.group(1)): float(m.group(2))
        for m in re.finditer(r"^\s+(\d+)%\s+(\d+)", out, re.MULTILINE)
    }
    latency = _timing(pct.get(50), pct.get(90), pct.get(99), pct.get(100)) if pct else None
    connect = None
    row = re.search(r"^Connect:\s+(\d+)\s+(\d+)\s+([\d.]+)\s+(\d+)\s+(\d+)", out, re.MULTILINE)
    if row is not None:
        _min, mean, _sd, median, top = (float(x) for x in row.groups())
        connect = _timing(median, None, None, top, mean)
    return Timings(latency=latency, connect=connect)


# -- h2load (HTTP/1.1 mode for f; h2 for g once it lands) ---------------------------------


def _h2load_argv(w: Workload, url: str, n: int, tmp: Path, binary: str) -> list[str]:
    return [binary, "--h1", "-n", str(n), "-c", str(w.concurrency), "-m", "1", url]


def _h2load_parse(out: str, w: Workload, n: int) -> tuple[int, float, int, int]:
    fin = re.search(r"finished in ([\d.]+)(us|ms|s|m)", out)
    req = re.search(
        r"requests: \d+ total, \d+ started, \d+ done, (\d+) succeeded, (\d+) failed, (\d+) errored",
        out,
    )
    if fin is None or req is None:
        raise ValueError(f"unexpected h2load output: {out[-300:]!r}")
    ok, failed, errored = (int(x) for x in req.groups())
    size = w.expect_length or 0
    return ok, float(fin.group(1)) * _UNIT[fin.group(2)], ok * size, failed + errored


def _h2load_timings(out: str) -> Timings:
    """h2load prints min, max, mean and sd per phase, no percentiles."""

    def phase(name: str) -> Timing | None:
        m = re.search(rf"time for {name}:\s+{_WRK_TIME}\s+{_WRK_TIME}\s+{_WRK_TIME}", out)
        if m is None:
            return None
        return _timing(
            None, None, None, _wrk_ms(m.group(3), m.group(4)), _wrk_ms(m.group(5), m.group(6))
        )

    return Timings(latency=phase("request"), connect=phase("connect"))


# -- curl CLI (one process, many URLs on one connection, per-transfer times summed) -------


def _curl_argv(w: Workload, url: str, n: int, tmp: Path, binary: str) -> list[str]:
    config = tmp / "curl.cfg"
    config.write_text(f'url = "{url}"\noutput = "/dev/null"\n' * n)
    fmt = "%{http_code} %{size_download} %{time_total} %{time_connect} %{num_connects}\\n"
    return [binary, "-s", "-K", str(config), "-w", fmt]


def _curl_parse(out: str, w: Workload, n: int) -> tuple[int, float, int, int]:
    ok = errors = nbytes = 0
    seconds = 0.0
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 3:
            continue
        status, size, total = int(parts[0]), int(parts[1]), float(parts[2])
        seconds += total
        if status == 200 and size == w.expect_length:
            ok += 1
            nbytes += size
        else:
            errors += 1
    return ok, seconds, nbytes, errors + max(0, n - ok - errors)


def _curl_timings(out: str) -> Timings:
    """Every transfer's total time; the connect time of the transfers that opened one."""
    totals: list[float] = []
    connects: list[float] = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) != 5:
            continue
        totals.append(float(parts[2]) * 1000)
        if int(parts[4]) > 0:
            connects.append(float(parts[3]) * 1000)
    return Timings(latency=timing_summary(totals), connect=timing_summary(connects))


NATIVES: dict[str, Native] = {
    n.name: n
    for n in (
        Native("floor", "", _floor_argv, _floor_parse),
        Native("wrk", "wrk", _wrk_argv, _wrk_parse, timings=_wrk_timings),
        Native("ab", "ab", _ab_argv, _ab_parse, protocol="HTTP/1.0", timings=_ab_timings),
        Native("h2load", "h2load", _h2load_argv, _h2load_parse, timings=_h2load_timings),
        Native("curl", "curl", _curl_argv, _curl_parse, timings=_curl_timings),
    )
}


def locate(native: Native) -> tuple[str | None, str]:
    """(binary, "") or (None, why the reference is skipped)."""
    if native.name == "floor":
        return find_or_build()
    path = shutil.which(native.tool)
    return (path, "") if path else (None, f"{native.tool} is not on PATH")


def _run_once(argv: list[str], cpu: int | None) -> tuple[str, float, float, float]:
    """(stdout, wall seconds, child user CPU, child system CPU)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=pin_to(cpu),
    )
    try:
        out, err = proc.communicate(timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise
    wall = time.perf_counter() - t0
    # communicate() reaped the child; its rusage is in RUSAGE_CHILDREN deltas, which the
    # caller takes around this call.
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"{argv[0]} exited {proc.returncode}: {err.strip()[-300:]}")
    return out, wall, 0.0, 0.0


def run_native(
    native: Native,
    binary: str,
    w: Workload,
    url: str,
    n: int,
    repeat: int,
    tmp: Path,
    cpu: int | None,
) -> NativeResult:
    import resource

    argv = native.build(w, url, n, tmp, binary)
    reps: list[Rep] = []
    for _ in range(repeat):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        out, _wall, _, _ = _run_once(argv, cpu)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        done, seconds, nbytes, errors = native.parse(out, w, n)
        user, system = r1.ru_utime - r0.ru_utime, r1.ru_stime - r0.ru_stime
        if native.name == "floor":
            data = json.loads(out.strip().splitlines()[-1])
            user, system = float(data["cpu_user"]), float(data["cpu_sys"])
        reps.append(Rep(seconds, done, nbytes, user, system, errors))
    protocol = native.protocol
    if native.name == "floor" and reps:
        protocol = json.loads(out.strip().splitlines()[-1]).get("protocol", protocol)
    timings = native.timings(out) if native.timings and reps else Timings()
    return NativeResult(reps, protocol, timings.latency, timings.connect)


def environment_tools() -> dict[str, str]:
    """Versions of the native tools present (for the results file)."""
    found: dict[str, str] = {}
    for name, args in (
        ("wrk", ["-v"]),
        ("ab", ["-V"]),
        ("h2load", ["--version"]),
        ("curl", ["--version"]),
        ("nginx", ["-v"]),
        ("strace", ["-V"]),
    ):
        path = shutil.which(name) or (
            f"/usr/sbin/{name}" if os.path.exists(f"/usr/sbin/{name}") else None
        )
        if path is None:
            continue
        try:
            p = subprocess.run([path, *args], capture_output=True, text=True, timeout=10)
            text = (p.stdout + p.stderr).strip().splitlines()
            found[name] = text[0] if text else "?"
        except (OSError, subprocess.TimeoutExpired):
            found[name] = "?"
    return found
