"""Smoke benchmark: sequential keep-alive 202-byte GETs (BENCHMARKS.md workload a).

A stopgap until the benchmark lab (`nodelay bench`) lands: the embedded server
runs in its own process (pinned to CPU 0 when there are >= 2 CPUs), each client
runs in a fresh subprocess (pinned to CPU 1) with a warm-up, and we report the
median req/s and CPU µs per request (user+sys of the client process) of
several repetitions. Figures that matter are ratios within one run.

Usage: python scripts/smoke_bench.py [--requests N] [--repeat R]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys

WARMUP_REQUESTS = 200
PAYLOAD_BYTES = 202

CLIENTS: dict[str, str] = {
    "nodelay": """
import nodelay
c = nodelay.Client()
def get():
    r = c.get(URL)
    assert r.status_code == 200 and len(r.content) == SIZE
""",
    "http.client": """
import http.client, urllib.parse
u = urllib.parse.urlsplit(URL)
conn = http.client.HTTPConnection(u.hostname, u.port)
def get():
    conn.request("GET", u.path)
    r = conn.getresponse()
    body = r.read()
    assert r.status == 200 and len(body) == SIZE
""",
    "pycurl": """
import pycurl, io
c = pycurl.Curl()
c.setopt(pycurl.URL, URL)
def get():
    buf = io.BytesIO()
    c.setopt(pycurl.WRITEDATA, buf)
    c.perform()
    assert c.getinfo(pycurl.RESPONSE_CODE) == 200 and len(buf.getvalue()) == SIZE
""",
}

RUNNER = """
import resource, sys, time, json
URL = sys.argv[1]; N = int(sys.argv[2]); SIZE = int(sys.argv[3]); WARM = int(sys.argv[4])
{setup}
for _ in range(WARM):
    get()
r0 = resource.getrusage(resource.RUSAGE_SELF); t0 = time.perf_counter()
for _ in range(N):
    get()
t1 = time.perf_counter(); r1 = resource.getrusage(resource.RUSAGE_SELF)
cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
print(json.dumps({{"rps": N / (t1 - t0), "cpu_us": cpu / N * 1e6}}))
"""


def pinned(cpu: int) -> list[str]:
    if (os.cpu_count() or 1) >= 2 and shutil.which("taskset"):
        return ["taskset", "-c", str(cpu)]
    return []


def importable(module: str) -> bool:
    probe = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True)
    return probe.returncode == 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    server = subprocess.Popen(
        [*pinned(0), sys.executable, "-c",
         "from nodelay import _core; _core.serve(port=0, on_ready=lambda u: print(u, flush=True))"],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert server.stdout is not None
        base = server.stdout.readline().strip()
        url = f"{base}/bytes/{PAYLOAD_BYTES}"
        print(f"server {base}; {args.requests} GETs of {PAYLOAD_BYTES} B, {args.repeat} repetitions")
        rows = []
        for name, setup in CLIENTS.items():
            if not importable(name.split(".")[0]):
                print(f"  {name}: skipped (not installed)")
                continue
            runs = []
            for _ in range(args.repeat):
                out = subprocess.run(
                    [*pinned(1), sys.executable, "-c", RUNNER.format(setup=setup), url,
                     str(args.requests), str(PAYLOAD_BYTES), str(WARMUP_REQUESTS)],
                    capture_output=True, text=True, check=True,
                )
                runs.append(json.loads(out.stdout))
            rps = [r["rps"] for r in runs]
            cpu = statistics.median(r["cpu_us"] for r in runs)
            rows.append((name, statistics.median(rps), min(rps), max(rps), cpu))
        best_peer = max((r[1] for r in rows if r[0] != "nodelay"), default=None)
        print(f"{'client':<12} {'req/s median':>13} {'min':>9} {'max':>9} {'CPU µs/req':>11} {'vs nodelay':>10}")
        nodelay_rps = next((r[1] for r in rows if r[0] == "nodelay"), None)
        for name, med, lo, hi, cpu in rows:
            ratio = f"{nodelay_rps / med:.2f}x" if nodelay_rps else "-"
            print(f"{name:<12} {med:>13,.0f} {lo:>9,.0f} {hi:>9,.0f} {cpu:>11.1f} {ratio:>10}")
        if best_peer and nodelay_rps:
            print(f"nodelay / fastest peer: {nodelay_rps / best_peer:.2f}x")
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
