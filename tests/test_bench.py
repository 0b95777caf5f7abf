"""The benchmark lab (bench/nodelay_bench, imported from the checkout): statistics and
percentiles, parsers, ratios, the report, --compare, the HTML report, and end-to-end runs
of the one runner against the embedded servers."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from bench_lab import check_reference_rows, run_lab
from nodelay import _core
from nodelay_bench import child_env, native, stats, syscalls, worker
from nodelay_bench import server as server_module
from nodelay_bench.results import SCHEMA, Row, add_ratios
from nodelay_bench.server import json_document, pattern_bytes
from nodelay_bench.stats import Rep
from nodelay_bench.worker import CookieFlowError, run_cookie_flow
from nodelay_bench.workloads import (
    COOKIE_POST_PATH,
    DEFAULT_WORKLOADS,
    H2LAB,
    WORKLOADS,
    parse_ids,
)


def rep(seconds: float, requests: int = 1000, nbytes: int = 0, cpu: float = 0.05) -> Rep:
    return Rep(seconds, requests, nbytes, cpu, 0.0)


# -- statistics ---------------------------------------------------------------------------


def test_summarize_median_min_max() -> None:
    s = stats.summarize([3.0, 1.0, 2.0, 10.0])
    assert (s.median, s.min, s.max, s.n) == (2.5, 1.0, 10.0, 4)
    assert s.mean == pytest.approx(4.0)
    with pytest.raises(ValueError):
        stats.summarize([])


def test_rate_and_cpu_per_request() -> None:
    r = Rep(seconds=2.0, requests=1000, bytes=4_000_000, cpu_user=0.03, cpu_sys=0.01)
    assert stats.rate(r, "req/s") == 500.0
    assert stats.rate(r, "MB/s") == 2.0
    assert stats.rate(Rep(0.0, 1, 1, 0, 0), "req/s") == 0.0
    assert stats.cpu_us_per_request([r]) == pytest.approx(40.0)
    assert stats.cpu_us_per_request([]) is None


def test_percentiles_by_nearest_rank_on_known_samples() -> None:
    hundred = [float(x) for x in range(1, 101)]
    assert [stats.percentile(hundred, q) for q in (50, 90, 99, 100)] == [50, 90, 99, 100]
    # Always a measured value, never an interpolation: 3 samples, p50 is the middle one and
    # p90 and p99 the largest.
    assert [stats.percentile([1.0, 3.0, 5.0], q) for q in (50, 90, 99)] == [3.0, 5.0, 5.0]
    assert stats.percentile([7.0], 99) == 7.0
    with pytest.raises(ValueError):
        stats.percentile([], 50)
    with pytest.raises(ValueError):
        stats.percentile([1.0], 0)


def test_timing_summary_sorts_and_counts() -> None:
    samples = [float(x) for x in range(1000, 0, -1)]  # unsorted on purpose
    t = stats.timing_summary(samples)
    assert t == {"p50": 500, "p90": 900, "p99": 990, "max": 1000, "mean": 500.5, "n": 1000}
    assert stats.timing_summary([]) is None


def test_ratio_handles_missing_values() -> None:
    assert stats.ratio(3.0, 2.0) == 1.5
    assert stats.ratio(None, 2.0) is None
    assert stats.ratio(1.0, 0.0) is None


# -- workloads ----------------------------------------------------------------------------


def test_workload_ids() -> None:
    runnable, pending = parse_ids("a, b,g,a")
    assert runnable == ["a", "b", "g"]  # g is the HTTP/2 lab's, handed over by the CLI
    assert pending == []
    assert set(H2LAB) == {"g", "i"} and not set(H2LAB) & set(WORKLOADS)
    assert DEFAULT_WORKLOADS == tuple("abcdefghijk")
    with pytest.raises(ValueError, match="unknown workload"):
        parse_ids("z")


def test_workload_counts_scale() -> None:
    a, f = WORKLOADS["a"], WORKLOADS["f"]
    assert a.count(1.0) == 5000 and a.count(0.05) == 250
    assert f.count(0.001) == 32  # never fewer requests than in flight
    assert 2 <= a.warmup(0.05) <= 200


def test_lab_payloads_match_the_embedded_server(server: _core.TestServer) -> None:
    import nodelay

    assert nodelay.get(f"{server.url}/json/16384").content == json_document(16384).encode()
    assert nodelay.get(f"{server.url}/bytes/1000").content == pattern_bytes(1000)


@pytest.mark.timeout(60)
def test_nginx_starts_for_a_workload_that_serves_no_file() -> None:
    # Workload e posts to /echo: no /bytes or /json file, yet the document root exists.
    try:
        srv = server_module.start_nginx([WORKLOADS["e"]], pin=False)
    except RuntimeError as exc:  # nginx missing or refusing to start here
        pytest.skip(str(exc))
    try:
        import nodelay

        if srv.echo:
            answer = nodelay.post(f"{srv.url}/echo", content=b"x=1")
            assert answer.status_code == 200 and answer.content == b"x=1"
        else:
            assert nodelay.get(f"{srv.url}/bytes/1").status_code == 404
    finally:
        srv.close()


# -- ratios and the report ------------------------------------------------------------------


def _rows() -> list[Row]:
    return [
        Row("a", "nodelay", "python", "req/s", reps=[rep(0.1), rep(0.12)]),
        Row("a", "pycurl", "python", "req/s", reps=[rep(0.2)]),
        Row("a", "broken", "python", "req/s", reps=[Rep(0.01, 900, 0, 0.0, 0.0, errors=100)]),
        Row("a", "floor", "floor", "req/s", reps=[rep(0.08)]),
        Row("a", "nodelay", "python", "req/s", variant="json()", reps=[rep(0.05)]),
        Row("a", "httpx", "python", "req/s", status="skipped", reason="not installed"),
    ]


def test_ratios_use_the_fastest_correct_peer_and_the_floor() -> None:
    rows = _rows()
    add_ratios(rows)
    nodelay_row, json_row = rows[0], rows[4]
    # nodelay median of 10,000 and 8,333 req/s; pycurl 5,000; the broken row never counts.
    assert nodelay_row.fastest_peer == "pycurl"
    assert nodelay_row.ratio_fastest_peer == pytest.approx(9166.67 / 5000, rel=1e-3)
    assert nodelay_row.ratio_floor == pytest.approx(9166.67 / 12500, rel=1e-3)
    assert json_row.ratio_fastest_peer == pytest.approx(4.0)  # compared with plain rows
    assert rows[1].ratio_fastest_peer is None


def test_report_renders_ratios_and_skips() -> None:
    pytest.importorskip("rich")
    from nodelay_bench.report import render
    from rich.console import Console

    rows = _rows()
    add_ratios(rows)
    console = Console(record=True, width=220)
    render(rows, [("k", "a reason")], console, syscalls=True)
    text = console.export_text()
    assert "1.83x (pycurl)" in text
    assert "0.73x" in text
    assert "not installed" in text and "pending" in text
    assert "nodelay json()" in text


# -- parsers of native tools ---------------------------------------------------------------


def test_parse_wrk() -> None:
    out = (
        "Running 3s test @ http://127.0.0.1:1/bytes/202\n"
        "  40215 requests in 3.00s, 14.42MB read\n"
        "  Non-2xx or 3xx responses: 15\nRequests/sec:  13404.12\n"
    )
    done, seconds, nbytes, errors = native._wrk_parse(out, WORKLOADS["a"], 0)
    assert (done, seconds, errors) == (40200, 3.0, 15)
    assert nbytes == 40200 * 202


def test_parse_ab() -> None:
    out = (
        "Complete requests:      5000\nFailed requests:        2\n"
        "Time taken for tests:   0.348 seconds\nNon-2xx responses:      1\n"
    )
    assert native._ab_parse(out, WORKLOADS["a"], 5000) == (4997, 0.348, 4997 * 202, 3)


def test_parse_h2load_and_curl() -> None:
    out = (
        "finished in 20.50ms, 48780.49 req/s, 13.12MB/s\n"
        "requests: 1000 total, 1000 started, 1000 done, 999 succeeded, 1 failed, 0 errored, "
        "0 timeout\n"
    )
    assert native._h2load_parse(out, WORKLOADS["f"], 1000) == (999, 0.0205, 999 * 202, 1)
    d = WORKLOADS["d"]
    size = d.expect_length
    curl = f"200 {size} 0.005\n200 {size} 0.004\n404 0 0.001\n"
    assert native._curl_parse(curl, d, 3) == (2, pytest.approx(0.010), 2 * size, 1)


AB_OUTPUT = """\
Complete requests:      5000
Failed requests:        0
Time taken for tests:   0.348 seconds

Connection Times (ms)
              min  mean[+/-sd] median   max
Connect:        0    1   0.4      1       3
Processing:     0    0   0.2      0       4
Waiting:        0    0   0.2      0       4
Total:          0    1   0.3      1       5

Percentage of the requests served within a certain time (ms)
  50%      1
  66%      1
  75%      1
  80%      1
  90%      2
  95%      2
  98%      3
  99%      4
 100%      5 (longest request)
"""


def test_ab_timings_give_percentiles_and_connect_times() -> None:
    t = native._ab_timings(AB_OUTPUT)
    assert t.latency is not None and t.connect is not None
    assert (t.latency["p50"], t.latency["p90"], t.latency["p99"], t.latency["max"]) == (1, 2, 4, 5)
    assert (t.connect["p50"], t.connect["max"], t.connect["mean"]) == (1, 3, 1)
    assert t.connect["p90"] is None  # ab does not print it: never made up


def test_wrk_and_curl_timings() -> None:
    wrk = (
        "  Thread Stats   Avg      Stdev     Max   +/- Stdev\n"
        "    Latency    74.00us   20.00us   1.20ms   90.00%\n"
        "  Latency Distribution\n     50%   70.00us\n     75%   80.00us\n"
        "     90%   95.00us\n     99%  250.00us\n"
    )
    t = native._wrk_timings(wrk)
    assert t.latency is not None
    assert t.latency["p50"] == pytest.approx(0.070) and t.latency["p99"] == pytest.approx(0.25)
    assert t.latency["max"] == pytest.approx(1.2) and t.latency["mean"] == pytest.approx(0.074)
    # curl -w: code, size, total, connect, connections opened by that transfer.
    curl = "200 202 0.002 0.001 1\n200 202 0.001 0.000 0\n200 202 0.003 0.000 0\n"
    c = native._curl_timings(curl)
    assert c.latency is not None and c.connect is not None
    assert (c.latency["p50"], c.latency["max"], c.latency["n"]) == (2.0, 3.0, 3)
    assert (c.connect["p50"], c.connect["n"]) == (1.0, 1)  # only the transfer that connected


def test_parse_strace_summary() -> None:
    text = (
        "% time     seconds  usecs/call     calls    errors syscall\n"
        "------ ----------- ----------- --------- --------- ----------------\n"
        " 90.00    0.000900           3       251           write\n"
        " 10.00    0.000100           2        50         1 sendto\n"
        "------ ----------- ----------- --------- --------- ----------------\n"
        "100.00    0.001000           3       301         1 total\n"
    )
    assert syscalls.parse_strace_summary(text) == 301


# -- workload h: the cookie flow --------------------------------------------------------------


def _cookie_spec(server: _core.TestServer, n: int = 20) -> dict[str, Any]:
    w = WORKLOADS["h"]
    return {
        "client": "nodelay",
        "workload": "h",
        "variant": "",
        "url": server.url + w.path,
        "n": n,
        "warmup": 2,
        "repeat": 2,
    }


def test_cookie_flow_passes_for_nodelay(server: _core.TestServer) -> None:
    from nodelay_bench.clients.nodelay_sync import Adapter

    result = run_cookie_flow(Adapter, _cookie_spec(server))
    assert [(r["requests"], r["errors"]) for r in result["reps"]] == [(20, 0), (20, 0)]
    assert result["protocol"] == "HTTP/1.1"
    if shutil.which("curl"):
        assert result["note"] == "cookie file reloaded; curl -b sends it"
    else:
        assert result["note"] == "cookie file reloaded; curl not found"


def test_cookie_flow_fails_a_client_that_drops_the_cookie(server: _core.TestServer) -> None:
    from nodelay_bench.clients.nodelay_sync import Adapter

    class Forgetful(Adapter):
        def get(self, url: str) -> tuple[int, bytes]:
            self.client.cookies.clear()
            return super().get(url)

    spec = _cookie_spec(server)
    a = Forgetful()
    try:
        a.start_cookies(None)
        session = worker._login(a, server.url)
        op = worker._cookie_op(a, spec["url"], server.url + COOKIE_POST_PATH, session)
        # Every GET goes without the cookie, and so does every POST after it.
        assert worker._run_seq(op, 10, worker.Samples()) == (10, 0)
    finally:
        a.close()
    # The whole row fails: its saved file has no cookie either.
    with pytest.raises(CookieFlowError, match="reloaded cookie file not sent"):
        run_cookie_flow(Forgetful, spec)


def test_cookie_flow_fails_a_client_whose_cookie_file_is_empty(
    server: _core.TestServer,
) -> None:
    import nodelay
    from nodelay_bench.clients.nodelay_sync import Adapter

    class NoFile(Adapter):
        def save_cookies(self, path: str) -> None:
            nodelay.CookieJar().save(path)

    with pytest.raises(CookieFlowError, match="reloaded cookie file not sent"):
        run_cookie_flow(NoFile, _cookie_spec(server))


# -- the asyncio floor ----------------------------------------------------------------------


def test_asyncio_floor_reads_content_length_answers_only() -> None:
    from nodelay_bench.clients.asyncio_floor import FramingError, _Connection

    conn = _Connection()
    conn.buffer += b"HTTP/1.1 200 OK\r\nX-Content-Length: 9\r\nContent-Length: 3\r\n\r\nab"
    assert conn._take_reply() is None  # one byte short
    conn.buffer += b"cHTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n"
    assert conn._take_reply() == (200, b"abc")
    assert conn._take_reply() == (404, b"")  # the next answer, kept in the buffer
    conn.buffer += b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    with pytest.raises(FramingError, match="without Content-Length"):
        conn._take_reply()
    endless = _Connection()
    endless.buffer += b"HTTP/1.1 200 OK\r\n" + b"X: y\r\n" * 20_000
    with pytest.raises(FramingError, match="no end of head"):
        endless._take_reply()


@pytest.mark.timeout(60)
def test_asyncio_floor_runs_beside_the_async_client_without_being_its_peer(
    tmp_path: Path,
) -> None:
    pytest.importorskip("rich")
    _, doc = run_lab(
        tmp_path / "r.json",
        *("--workloads", "a,e", "--clients", "nodelay-async,asyncio-floor"),
        timeout=50,
    )
    for row in check_reference_rows(doc, "asyncio-floor", "nodelay-async", peer=""):
        assert row["flavour"] == "async"


@pytest.mark.timeout(60)
def test_loop_option_runs_the_asyncio_rows_on_uvloop(tmp_path: Path) -> None:
    pytest.importorskip("rich")
    pytest.importorskip("uvloop")
    _, doc = run_lab(
        tmp_path / "r.json",
        *("--workloads", "a", "--clients", "nodelay,nodelay-async,asyncio-floor"),
        *("--loop", "uvloop"),
        timeout=50,
    )
    assert doc["options"]["loop"] == "uvloop"
    rows = {r["client"]: r for r in doc["rows"]}
    for client in ("nodelay-async", "asyncio-floor"):
        assert rows[client]["status"] == "ok" and rows[client]["errors"] == 0, rows[client]
        assert rows[client]["note"] == "on uvloop"
    assert rows["nodelay"]["note"] == ""  # a sync row has no event loop


# -- end to end -----------------------------------------------------------------------------


@pytest.mark.timeout(60)
def test_lab_end_to_end_writes_json_png_and_html(tmp_path: Path) -> None:
    pytest.importorskip("rich")
    pytest.importorskip("matplotlib")
    out_json, out_png = tmp_path / "r.json", tmp_path / "r.png"
    out_html = tmp_path / "r.html"
    proc, doc = run_lab(
        out_json,
        *("--workloads", "a,j", "--clients", "nodelay,http.client"),
        *("--plot", str(out_png), "--html", str(out_html)),
        timeout=50,
        module=("nodelay", "bench"),
    )
    assert "nodelay" in proc.stdout and "http.client" in proc.stdout
    assert doc["schema"] == SCHEMA
    assert doc["command"][1:4] == ["-m", "nodelay", "bench"]
    assert doc["environment"]["cpu_model"] and "nodelay" in doc["environment"]["packages"]
    assert doc["options"]["repeat"] == 1 and doc["options"]["workloads"] == ["a", "j"]
    rows = {(r["workload"], r["client"]): r for r in doc["rows"]}
    assert set(rows) == {(w, c) for w in "aj" for c in ("nodelay", "http.client")}
    for (wid, _), row in rows.items():
        assert row["status"] == "ok" and row["errors"] == 0
        n = 250 if wid == "a" else 25
        assert len(row["reps"]) == 1 and row["reps"][0]["requests"] == n
        assert row["summary"]["median"] > 0 and row["cpu_us_per_request"] > 0
        assert row["protocol"] == "HTTP/1.1" and row["peak_rss_kb"] > 0
        latency = row["latency_ms"]
        assert latency["n"] == n
        assert 0 < latency["p50"] <= latency["p90"] <= latency["p99"] <= latency["max"]
    assert rows[("a", "nodelay")]["ratio_fastest_peer"] > 0
    # j opens a connection per request: nodelay says how long each took; http.client cannot.
    connect = rows[("j", "nodelay")]["connect_ms"]
    assert connect["n"] == 25 and 0 < connect["p50"] <= connect["max"]
    assert rows[("j", "nodelay")]["tls_ms"] is None  # cleartext
    assert rows[("a", "nodelay")]["connect_ms"] is None  # its connection was opened in warm-up
    assert rows[("j", "http.client")]["connect_ms"] is None
    assert out_png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    html = out_html.read_text()
    assert "p99 ms" in html and "Connection times" in html and "data:image/png;base64," in html
    # The table on the terminal has the percentile columns too.
    assert all(column in proc.stdout for column in ("p50", "p90", "p99", "max"))


@pytest.mark.timeout(60)
def test_lab_runs_the_cookie_workload(tmp_path: Path) -> None:
    pytest.importorskip("rich")
    _, doc = run_lab(
        tmp_path / "h.json",
        *("--workloads", "h", "--clients", "nodelay,nodelay-async"),
        timeout=50,
    )
    rows = {r["client"]: r for r in doc["rows"]}
    ok = rows["nodelay"]
    assert ok["status"] == "ok" and ok["errors"] == 0, ok
    assert ok["reps"][0]["requests"] == 50 and ok["cpu_us_per_request"] > 0
    assert rows["nodelay-async"]["status"] == "skipped"


# -- the HTTP/2 workloads are rows of the one runner -------------------------------------------


def _g_run(seconds: float, latency: list[float]) -> dict[str, Any]:
    return {
        "seconds": seconds,
        "cpu": seconds / 2,
        "requests": 1000,
        "errors": 0,
        "bytes": 202_000,
        "versions": ["HTTP/2"],
        "connections": 1,
        "latency": latency,
    }


def test_h2_runs_become_a_row_with_repetitions_and_latency() -> None:
    from nodelay_bench.h2lab import _row

    row = _row("g", "nodelay", "h2c", [_g_run(0.02, [0.001, 0.003]), _g_run(0.04, [0.002])])
    assert row.status == "ok" and row.label == "nodelay h2c" and row.kind == "python"
    assert [r.seconds for r in row.reps] == [0.02, 0.04]
    assert row.median() == pytest.approx(37_500)  # of 50,000 and 25,000 req/s
    assert row.latency_ms is not None and row.latency_ms["n"] == 3
    assert row.latency_ms["p50"] == pytest.approx(2.0) and row.latency_ms["max"] == pytest.approx(3)
    assert row.protocol == "HTTP/2" and row.note == "1 conn"
    missing = _row("g", "rnet", "h2c", [{"error": "ModuleNotFoundError: No module named 'rnet'"}])
    assert missing.status == "skipped" and "rnet" in missing.reason
    native_row = _row("g", "h2load", "h2c", [{**_g_run(0.01, []), "latency_ms": None}])
    assert native_row.kind == "native"


def test_h2_rows_compare_with_peers_over_the_same_transport() -> None:
    from nodelay_bench.h2lab import _row

    rows = [
        _row("g", "nodelay", "h2c", [_g_run(0.02, [])]),
        _row("g", "pycurl", "h2c", [_g_run(0.04, [])]),
        _row("g", "pycurl", "h2+TLS", [_g_run(0.01, [])]),
    ]
    add_ratios(rows)
    assert rows[0].fastest_peer == "pycurl h2c" and rows[0].ratio_fastest_peer == 2.0


# -- results files: --from, --compare and the HTML report ------------------------------------


def _doc(rows: list[Row]) -> dict[str, Any]:
    from nodelay_bench.results import document

    return document(
        rows,
        command=["nodelay", "bench"],
        options={"workloads": ["a"], "syscalls": False},
        server={"kind": "embedded"},
        tools={},
        pending=[],
        started="2026-11-24T23:00:00+00:00",
        finished="2026-11-24T23:01:00+00:00",
    )


def _timed(row: Row, p99: float) -> Row:
    row.latency_ms = {"p50": p99 / 4, "p90": p99 / 2, "p99": p99, "max": p99 * 2, "mean": 1.0}
    return row


def test_rows_survive_the_json_round_trip() -> None:
    from nodelay_bench.results import rows_of

    rows = _rows()
    _timed(rows[0], 0.2)
    back = rows_of(json.loads(json.dumps(_doc(rows))))
    assert [r.to_dict() for r in back] == [r.to_dict() for r in rows]


def test_converted_rows_keep_their_summary_without_repetitions() -> None:
    # Records converted from the old text logs kept the median, spread and CPU, no reps.
    from nodelay_bench.results import rows_of

    data = {
        "workload": "c",
        "client": "nodelay",
        "kind": "python",
        "unit": "MB/s",
        "summary": {"median": 3219.0, "min": 3000.0, "max": 3300.0, "mean": None, "n": 5},
        "cpu_us_per_request": None,
        "cpu_s_per_gb": 0.31,
        "reps": [],
    }
    (row,) = rows_of({"rows": [data]})
    assert row.median() == 3219.0 and row.summary().n == 5  # type: ignore[union-attr]
    assert row.cpu_s_per_gb() == 0.31 and row.reps == []
    assert row.to_dict()["summary"]["median"] == 3219.0


def test_compare_reports_each_rows_change(tmp_path: Path) -> None:
    pytest.importorskip("rich")
    from nodelay_bench.compare import compare_rows

    old = [
        _timed(Row("a", "nodelay", "python", "req/s", reps=[rep(0.1, cpu=0.04)]), 0.2),
        Row("a", "pycurl", "python", "req/s", reps=[rep(0.2)]),
        Row("a", "gone", "python", "req/s", reps=[rep(0.2)]),
    ]
    new = [
        _timed(Row("a", "nodelay", "python", "req/s", reps=[rep(0.08, cpu=0.03)]), 0.1),
        Row("a", "pycurl", "python", "req/s", reps=[rep(0.2)]),
        Row("a", "fresh", "python", "req/s", reps=[rep(0.2)]),
    ]
    changes, only_old, only_new = compare_rows(old, new)
    by_label = {c.label: c for c in changes}
    c = by_label["nodelay"]
    assert c.rate == (pytest.approx(10_000), pytest.approx(12_500))
    assert c.cpu == (pytest.approx(40.0), pytest.approx(30.0))
    assert c.p99_ms == (0.2, 0.1)
    assert [r.client for r in only_old] == ["gone"] and [r.client for r in only_new] == ["fresh"]

    old_path, new_path = tmp_path / "old.json", tmp_path / "new.json"
    old_path.write_text(json.dumps(_doc(old)))
    new_path.write_text(json.dumps(_doc(new)))
    proc = subprocess.run(
        [sys.executable, "-m", "nodelay_bench", "--compare", str(old_path), str(new_path)],
        capture_output=True,
        text=True,
        timeout=30,
        env=child_env(),
    )
    assert proc.returncode == 0, proc.stderr
    line = next(x for x in proc.stdout.splitlines() if " nodelay " in x)
    # req/s +25 %, CPU per request -25 %, p99 -50 %.
    assert "10,000" in line and "12,500" in line and "+25.0%" in line
    assert "-25.0%" in line and "-50.0%" in line
    assert "only in OLD: a gone" in proc.stdout and "only in NEW: a fresh" in proc.stdout
    bad = tmp_path / "bad.json"
    bad.write_text("[]")
    proc = subprocess.run(
        [sys.executable, "-m", "nodelay_bench", "--compare", str(bad), str(new_path)],
        capture_output=True,
        text=True,
        timeout=30,
        env=child_env(),
    )
    assert proc.returncode == 2 and "not a nodelay bench results file" in proc.stdout


def test_html_report_is_self_contained(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    import re

    from nodelay_bench.html import write_html

    rows = _rows()
    _timed(rows[0], 0.25)
    rows[0].connect_ms = {"p50": 0.05, "p90": 0.06, "p99": 0.07, "max": 0.08, "mean": 0.05, "n": 9}
    rows[0].note = "<b>not markup</b>"
    add_ratios(rows)
    out = tmp_path / "report.html"
    write_html(_doc(rows), rows, out, title="sample")
    html = out.read_text()
    assert html.startswith("<!DOCTYPE html>") and html.rstrip().endswith("</html>")
    assert "<th>p99 ms</th>" in html and '<td class="n">0.250</td>' in html
    assert "Connection times" in html and "nodelay" in html
    assert "&lt;b&gt;not markup&lt;/b&gt;" in html  # text is escaped
    # Nothing to fetch: the chart is inline, no script, stylesheet or external address.
    assert "data:image/png;base64," in html
    refs = re.findall(r"""(?:src|href)\s*=\s*["']([^"']*)""", html)
    assert refs and all(ref.startswith("data:") for ref in refs)
    assert not re.search(r"<script|<link|url\(|https?://", html)


def test_from_redraws_the_outputs_of_a_results_file(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    rows = _rows()
    add_ratios(rows)
    src = tmp_path / "r.json"
    src.write_text(json.dumps(_doc(rows)))
    png, html = tmp_path / "r.png", tmp_path / "r.html"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "nodelay_bench",
            "--from",
            str(src),
            "--plot",
            str(png),
            "--html",
            str(html),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env=child_env(),
    )
    assert proc.returncode == 0, proc.stderr
    assert "1.83x (pycurl)" in proc.stdout  # the table, ratios included, from the file
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and html.read_text().count("<table>") >= 1


# -- `nodelay bench` outside a checkout ------------------------------------------------------------


def test_nodelay_bench_without_the_lab_says_how_to_get_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from nodelay import _cli

    assert _cli._find_lab("nodelay_bench_absent", tmp_path) is None
    assert _cli._find_lab("nodelay_bench") is not None
    monkeypatch.setattr(_cli, "_find_lab", lambda: None)
    assert _cli.main(["bench", "--workloads", "a"]) == 2
    err = capsys.readouterr().err
    assert "not part of the installed package" in err and "bench/" in err and "make dev" in err


@pytest.mark.timeout(120)
def test_runner_runs_the_http2_workloads_as_rows(tmp_path: Path) -> None:
    pytest.importorskip("rich")
    out_json = tmp_path / "g.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "nodelay_bench",
            "--quick",
            "--no-pin",
            "--workloads",
            "g",
            "--clients",
            "nodelay",
            "--json",
            str(out_json),
        ],
        capture_output=True,
        text=True,
        timeout=110,
        env=child_env(),
    )
    assert proc.returncode == 0, proc.stderr
    rows = {(r["client"], r["variant"]): r for r in json.loads(out_json.read_text())["rows"]}
    assert set(rows) == {(c, t) for c in ("nodelay", "nodelay-batch") for t in ("h2c", "h2+TLS")}
    for row in rows.values():
        assert row["status"] == "ok" and row["errors"] == 0 and row["protocol"] == "HTTP/2"
        assert row["reps"][0]["requests"] == 1000
    assert rows[("nodelay", "h2c")]["latency_ms"]["n"] == 1000
    assert (
        rows[("nodelay-batch", "h2c")]["latency_ms"] is None
    )  # one batch call: no per-request time
    assert "g - " in proc.stdout and "nodelay h2+TLS" in proc.stdout


@pytest.mark.timeout(120)
def test_crawl_rows_time_the_connections_they_open() -> None:
    from nodelay_bench.h2lab import count_rows, run_rows

    rows = {(r.client, r.variant): r for r in run_rows(["i"], [], 1)}
    modes = {"nodelay": ("h1 x6", "h2 x1"), "nodelay-async": ("h1 x6", "h2 x1", "h2 x1 m32")}
    assert set(rows) == {
        (c, f"{mode} {t}") for c, ms in modes.items() for mode in ms for t in ("cleartext", "TLS")
    }
    assert count_rows(["i"], []) == len(rows)
    for (_, variant), row in rows.items():
        assert row.status == "ok" and row.errors() == 0, row.reason
        assert row.reps[0].requests == 501  # the root and its 500 pages
        assert row.latency_ms is not None and row.latency_ms["n"] == 501
        assert row.connect_ms is not None and row.connect_ms["p50"] > 0
        if variant.endswith("TLS"):
            assert row.tls_ms is not None and row.tls_ms["p50"] > 0
        else:
            assert row.tls_ms is None
        h1 = variant.startswith("h1")
        assert row.protocol == ("HTTP/1.1" if h1 else "HTTP/2")
        assert "sent" in row.note and row.note.endswith(", 6 conn" if h1 else ", 1 conn"), row.note


def test_the_readme_lab_table_is_generated_from_the_record_it_names() -> None:
    from nodelay_bench import readme

    assert readme.main(["--check"]) == 0
    # The check can fail: a hand edit inside the block is caught.
    text = readme.README.read_text()
    edited = text.replace("| a: ", "| a (edited): ", 1)
    assert edited != text
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp, "README.md")
        copy.write_text(edited)
        (Path(tmp) / "docs").symlink_to(readme.README.parent / "docs")
        assert readme.main(["--check", "--readme", str(copy)]) == 1


def _save_run(path: Path, rows: list[Row], lang: str) -> None:
    """``rows`` as a results file, written as the lab writes one (ratios, document, save)."""
    from nodelay_bench.results import document, save

    add_ratios(rows)
    doc = document(
        rows,
        command=["nodelay", "bench", "--lang", lang],
        options={"lang": lang},
        server={"kind": "embedded"},
        tools={},
        pending=[],
        started="2026-01-02T03:04:05+00:00",
        finished="2026-01-02T03:14:05+00:00",
    )
    save(doc, path)


def _front_files(bench: Path, perl_peer_seconds: float = 0.06) -> None:
    mib10 = WORKLOADS["d"].expect_length
    _save_run(
        bench / "py.json",
        [
            Row("a", "nodelay", "python", "req/s", reps=[rep(0.1, cpu=0.02)]),
            Row("a", "pycurl", "python", "req/s", reps=[rep(0.2, cpu=0.03)]),
        ],
        "python",
    )
    hijk = Row("a", "hijk", "perl", "req/s", reps=[rep(perl_peer_seconds, 600, cpu=0.012)])
    hijk.capped = True
    _save_run(
        bench / "perl.json",
        [
            Row("a", "nodelay", "perl", "req/s", reps=[rep(0.05, cpu=0.01)]),
            Row("a", "nodelay-lwp", "perl", "req/s", reps=[rep(0.08, cpu=0.03)]),
            Row("a", "furl", "perl", "req/s", reps=[rep(0.125, cpu=0.03)]),
            hijk,
            # Native and floor rows share a front's file: never its peers.
            Row("a", "wrk", "native", "req/s", reps=[rep(0.01)]),
            Row("a", "floor", "floor", "req/s", reps=[rep(0.01)]),
            # No Perl peer measured e: no line.
            Row("e", "nodelay", "perl", "req/s", reps=[rep(0.1)]),
            Row("e", "furl", "perl", "req/s", status="skipped", reason="not installed"),
        ],
        "perl",
    )
    _save_run(
        bench / "ruby.json",
        [
            Row("d", "nodelay", "ruby", "MB/s", "stream", reps=[rep(0.01, 1, mib10, 0.002)]),
            Row("d", "curb", "ruby", "MB/s", "stream", reps=[rep(0.02, 1, mib10, 0.004)]),
            Row("f", "nodelay", "ruby", "req/s", reps=[rep(0.05, cpu=0.01)]),
            Row("f", "net-http", "ruby", "req/s", reps=[rep(0.1, cpu=0.04)]),
        ],
        "ruby",
    )


def test_the_readme_lab_table_adds_the_perl_and_ruby_fronts(tmp_path: Path) -> None:
    from nodelay_bench import readme
    from nodelay_bench.results import load

    _front_files(tmp_path / "docs" / "bench")
    copy = tmp_path / "README.md"
    copy.write_text(f"# nodelay\n\n{readme.BEGIN}\n{readme.END}\n\nAfter.\n")
    assert (
        readme.main(
            [
                "docs/bench/py.json",
                *("--perl", "docs/bench/perl.json", "--ruby", "docs/bench/ruby.json"),
                *("--readme", str(copy)),
            ]
        )
        == 0
    )
    text = copy.read_text()
    python_only = readme.render_block(load(tmp_path / "docs/bench/py.json"), "docs/bench/py.json")
    # The Python part is the block it was without fronts; then Perl's table, then Ruby's.
    assert text.startswith(f"# nodelay\n\n{python_only.removesuffix(readme.END)}\n")
    assert text.endswith(f"{readme.END}\n\nAfter.\n")
    when = "2026-01-02T03:14:05+00:00, server: embedded"
    perl = (
        f"Perl front: from [docs/bench/perl.json](docs/bench/perl.json) ({when}).\n\n"
        "| workload | nodelay | fastest Perl peer | ratio "
        "| CPU per request or GB, nodelay / peer |\n"
        "|---|---|---|---|---|\n"
        "| a: 202 B GET, sequential keep-alive | nodelay 20,000 req/s "
        "| hijk 10,000 (capped) | 2.00x | 10.0 µs / 20.0 µs |\n\n"
        "(capped): the row reached the lab's time cap and sent fewer requests than asked; "
        "its rate is over the requests it sent.\n\n"
    )
    ruby = (
        f"Ruby front: from [docs/bench/ruby.json](docs/bench/ruby.json) ({when}).\n\n"
        "| workload | nodelay | fastest Ruby peer | ratio "
        "| CPU per request or GB, nodelay / peer |\n"
        "|---|---|---|---|---|\n"
        "| d: 10 MiB GET, whole body | nodelay stream 1,049 MB/s | curb stream 524 | 2.00x "
        "| 0.19 s/GB / 0.38 s/GB |\n"
        "| f: 202 B GET, 32 in flight (4 threads here) | nodelay 20,000 req/s "
        "| net-http 10,000 | 2.00x | 10.0 µs / 40.0 µs |\n"
        f"{readme.END}"
    )
    assert f"\n\n{perl}{ruby}" in text
    # --check re-derives the whole block from the three files it names...
    assert readme.main(["--check", "--readme", str(copy)]) == 0
    # ...so a front file that changed makes it stale, and regenerating follows the file.
    _front_files(tmp_path / "docs" / "bench", perl_peer_seconds=0.03)
    assert readme.main(["--check", "--readme", str(copy)]) == 1
    assert readme.main(["--readme", str(copy)]) == 0
    assert "| hijk 20,000 (capped) | 1.00x |" in copy.read_text()
    assert readme.main(["--check", "--readme", str(copy)]) == 0


IMPORTTIME_SAMPLE = """\
import time: self [us] | cumulative | imported package
import time:       120 |        120 |   _io
import time:       300 |        900 |     nodelay._core
import time:        40 |         40 |       nodelay
import time:       700 |       2500 | nodelay
"""


def test_import_time_is_the_top_level_line_of_the_module() -> None:
    from nodelay_bench.imports import import_us

    # The indented "nodelay" (a module of that name imported deeper) is not the answer.
    assert import_us(IMPORTTIME_SAMPLE, "nodelay") == 2500
    with pytest.raises(ValueError, match="no top-level import time for 'httpx'"):
        import_us(IMPORTTIME_SAMPLE, "httpx")


def test_import_probe_times_fresh_interpreters(tmp_path: Path) -> None:
    out = tmp_path / "imports.json"
    proc = subprocess.run(
        [
            *(sys.executable, "-m", "nodelay_bench.imports", "--modules", "json,nodelay"),
            *("--runs", "2", "--json", str(out)),
        ],
        capture_output=True,
        text=True,
        env=child_env(),
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "import nodelay < 30 ms" in proc.stdout
    doc = json.loads(out.read_text())
    rows = {r["module"]: r for r in doc["imports"]}
    assert set(rows) == {"json", "nodelay"}
    for r in rows.values():
        assert r["runs"] == 2 and 0 < r["min_ms"] <= r["median_ms"] <= r["max_ms"]
    # The rows come fastest first. Which module that is stays unasserted: two runs of a
    # ~10 ms import on a loaded machine order either way.
    medians = [r["median_ms"] for r in doc["imports"]]
    assert medians == sorted(medians)


def test_import_probe_reports_a_module_that_does_not_import() -> None:
    from nodelay_bench.imports import measure

    with pytest.raises(RuntimeError, match="import no_such_module_here failed"):
        measure(["no_such_module_here"], 1)
