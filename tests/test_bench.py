"""The benchmark lab: statistics, parsers, ratios, the report, and one end-to-end run."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from nodelay import _core
from nodelay.bench import native, stats, syscalls, worker
from nodelay.bench.results import SCHEMA, Row, add_ratios
from nodelay.bench.server import json_document, pattern_bytes
from nodelay.bench.stats import Rep
from nodelay.bench.worker import CookieFlowError, run_cookie_flow
from nodelay.bench.workloads import (
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
    assert DEFAULT_WORKLOADS == tuple("abcdefghij")
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
    from nodelay.bench.report import render
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
    from nodelay.bench.clients.nodelay_sync import Adapter

    result = run_cookie_flow(Adapter, _cookie_spec(server))
    assert [(r["requests"], r["errors"]) for r in result["reps"]] == [(20, 0), (20, 0)]
    assert result["protocol"] == "HTTP/1.1"
    if shutil.which("curl"):
        assert result["note"] == "cookie file reloaded; curl -b sends it"
    else:
        assert result["note"] == "cookie file reloaded; curl not found"


def test_cookie_flow_fails_a_client_that_drops_the_cookie(server: _core.TestServer) -> None:
    from nodelay.bench.clients.nodelay_sync import Adapter

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
        assert worker._run_seq(op, 10) == (10, 0)
    finally:
        a.close()
    # The whole row fails: its saved file has no cookie either.
    with pytest.raises(CookieFlowError, match="reloaded cookie file not sent"):
        run_cookie_flow(Forgetful, spec)


def test_cookie_flow_fails_a_client_whose_cookie_file_is_empty(
    server: _core.TestServer,
) -> None:
    import nodelay
    from nodelay.bench.clients.nodelay_sync import Adapter

    class NoFile(Adapter):
        def save_cookies(self, path: str) -> None:
            nodelay.CookieJar().save(path)

    with pytest.raises(CookieFlowError, match="reloaded cookie file not sent"):
        run_cookie_flow(NoFile, _cookie_spec(server))


# -- end to end -----------------------------------------------------------------------------


@pytest.mark.timeout(60)
def test_lab_end_to_end_writes_json_and_png(tmp_path: Path) -> None:
    pytest.importorskip("rich")
    pytest.importorskip("matplotlib")
    out_json, out_png = tmp_path / "r.json", tmp_path / "r.png"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "nodelay.bench",
            "--quick",
            "--scale",
            "0.05",
            "--workloads",
            "a",
            "--clients",
            "nodelay,http.client",
            "--json",
            str(out_json),
            "--plot",
            str(out_png),
        ],
        capture_output=True,
        text=True,
        timeout=50,
    )
    assert proc.returncode == 0, proc.stderr
    assert "nodelay" in proc.stdout and "http.client" in proc.stdout
    doc = json.loads(out_json.read_text())
    assert doc["schema"] == SCHEMA
    assert doc["command"][1:3] == ["-m", "nodelay.bench"]
    assert doc["environment"]["cpu_model"] and "nodelay" in doc["environment"]["packages"]
    assert doc["options"]["repeat"] == 1 and doc["options"]["workloads"] == ["a"]
    rows = {r["client"]: r for r in doc["rows"]}
    assert set(rows) == {"nodelay", "http.client"}
    for row in rows.values():
        assert row["status"] == "ok" and row["errors"] == 0
        assert len(row["reps"]) == 1 and row["reps"][0]["requests"] == 250
        assert row["summary"]["median"] > 0 and row["cpu_us_per_request"] > 0
        assert row["protocol"] == "HTTP/1.1" and row["peak_rss_kb"] > 0
    assert rows["nodelay"]["ratio_fastest_peer"] > 0
    assert out_png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.timeout(60)
def test_lab_runs_the_cookie_workload(tmp_path: Path) -> None:
    pytest.importorskip("rich")
    out_json = tmp_path / "h.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "nodelay.bench",
            "--quick",
            "--scale",
            "0.05",
            "--workloads",
            "h",
            "--clients",
            "nodelay,nodelay-async",
            "--json",
            str(out_json),
        ],
        capture_output=True,
        text=True,
        timeout=50,
    )
    assert proc.returncode == 0, proc.stderr
    rows = {r["client"]: r for r in json.loads(out_json.read_text())["rows"]}
    ok = rows["nodelay"]
    assert ok["status"] == "ok" and ok["errors"] == 0, ok
    assert ok["reps"][0]["requests"] == 50 and ok["cpu_us_per_request"] > 0
    assert rows["nodelay-async"]["status"] == "skipped"


# -- charts of the HTTP/2 lab -----------------------------------------------------------------


def _h2_row(workload: str, transport: str, client: str, seconds: float) -> dict[str, object]:
    return {
        "workload": workload,
        "transport": transport,
        "client": client,
        "seconds": seconds,
        "requests": 1000,
        "bytes_out": 13601,
    }


def test_h2_lab_rows_become_one_panel_per_workload_and_transport() -> None:
    from nodelay.bench.plot import NATIVE, NODELAY, _h2_panels

    rows = [
        _h2_row("g", "h2c", "nodelay-batch", 0.02),
        _h2_row("g", "h2c", "h2load", 0.01),
        {"workload": "g", "transport": "h2c", "client": "rnet", "error": "not installed"},
        _h2_row("i", "cleartext", "nodelay h2, 1 connection", 0.034),
        _h2_row("g", "h2+TLS", "pycurl", 0.05),
        _h2_row("i", "cleartext", "nodelay h1, 6 connections", 0.020),
    ]
    panels = _h2_panels(rows)
    assert [p.title.split(" - ")[0] for p in panels] == ["g", "g", "i"]
    h2c = panels[0]
    assert "h2c" in h2c.title and [b.label for b in h2c.bars] == [
        "nodelay-batch",
        "h2load [native]",
    ]  # sorted by value; the skipped client has no bar
    assert [round(b.median) for b in h2c.bars] == [50_000, 100_000]
    assert h2c.bars[0].color == NODELAY and h2c.bars[1].color == NATIVE
    crawl = panels[2]
    assert [round(b.median) for b in crawl.bars] == [20, 34]  # milliseconds
    assert "13,601 B sent" in crawl.bars[0].label


def test_chart_of_h2_rows_alone_is_a_png(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from nodelay.bench.plot import plot

    out = tmp_path / "h2.png"
    plot([], out, title="h2", h2_rows=[_h2_row("g", "h2c", "nodelay-batch", 0.02)])
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ValueError, match="nothing was measured"):
        plot([], out, h2_rows=[{"workload": "g", "transport": "h2c", "error": "x"}])
