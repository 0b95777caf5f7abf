"""The lab's language workers (``nodelay bench --lang perl|ruby``, bench/nodelay_bench/langs.py)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from bench_lab import check_reference_rows, run_lab
from nodelay import _core
from nodelay_bench import child_env, runner
from nodelay_bench.langs import LANGS, REPO, RUBY_THREADS, lang_env, workload_spec
from nodelay_bench.report import workload_table
from nodelay_bench.results import Row, add_ratios
from nodelay_bench.runner import Plan, RunOptions, plan_rows, run_row
from nodelay_bench.server import start
from nodelay_bench.stats import Rep
from nodelay_bench.workloads import WORKLOADS, form_body
from rich.console import Console

PERL_BUILT = (REPO / "perl" / "blib" / "arch" / "auto" / "Nodelay" / "Nodelay.so").exists()
RUBY_EXT_DIR = next(
    (
        d
        for d in (REPO / "build" / "ruby-release", REPO / "build" / "ruby")
        if (d / "nodelay" / "nodelay_ext.so").exists()
    ),
    None,
)
"""The gem's extension as make bench-ruby (release) or make test-ruby (debug) built it."""
needs_ruby_gem = pytest.mark.skipif(
    shutil.which("ruby") is None or RUBY_EXT_DIR is None,
    reason="ruby or the gem's extension is missing (make test-ruby)",
)


def rep(seconds: float, n: int = 1000) -> Rep:
    return Rep(seconds, n, 0, 0.01, 0.0)


def test_lang_rows_are_planned_with_the_language_as_their_kind() -> None:
    plans = plan_rows(["a", "e"], ["nodelay", "hijk", "floor"], "perl")
    assert [(p.workload.id, p.client, p.kind) for p in plans] == [
        ("a", "nodelay", "perl"),
        ("a", "hijk", "perl"),
        ("a", "floor", "floor"),
        ("e", "nodelay", "perl"),
        ("e", "hijk", "perl"),
        ("e", "floor", "floor"),
    ]
    # Python's rows are unchanged: the same names mean Python clients there.
    assert [p.kind for p in plan_rows(["a"], ["nodelay"])] == ["python"]


def test_ratios_compare_a_language_row_with_its_own_peers_only() -> None:
    rows = [
        Row("a", "nodelay", "python", "req/s", reps=[rep(0.1)]),
        Row("a", "pycurl", "python", "req/s", reps=[rep(0.05)]),
        Row("a", "nodelay", "perl", "req/s", reps=[rep(0.1)]),
        Row("a", "hijk", "perl", "req/s", reps=[rep(0.2)]),
        Row("a", "nodelay-lwp", "perl", "req/s", reps=[rep(0.01)]),
    ]
    add_ratios(rows)
    python, perl = rows[0], rows[2]
    assert python.fastest_peer == "pycurl" and python.ratio_fastest_peer == pytest.approx(0.5)
    # Not pycurl, and not the engine under LWP (a nodelay row is never a peer).
    assert perl.fastest_peer == "hijk" and perl.ratio_fastest_peer == pytest.approx(2.0)


def test_reference_rows_are_never_the_fastest_peer() -> None:
    rows = [
        Row("a", "nodelay-async", "python", "req/s", reps=[rep(0.1)]),
        Row("a", "asyncio-floor", "python", "req/s", reps=[rep(0.05)]),
        Row("a", "aiohttp", "python", "req/s", reps=[rep(0.2)]),
        Row("a", "nodelay-lwp", "perl", "req/s", reps=[rep(0.1)]),
        Row("a", "lwp-floor", "perl", "req/s", reps=[rep(0.05)]),
        Row("a", "lwp", "perl", "req/s", reps=[rep(0.2)]),
        Row("a", "perl-socket", "perl", "req/s", reps=[rep(0.02)]),
        Row("a", "nodelay", "ruby", "req/s", reps=[rep(0.1)]),
        Row("a", "ruby-socket", "ruby", "req/s", reps=[rep(0.02)]),
        Row("a", "net-http", "ruby", "req/s", reps=[rep(0.4)]),
    ]
    add_ratios(rows)
    assert rows[0].fastest_peer == "aiohttp" and rows[0].ratio_fastest_peer == pytest.approx(2.0)
    assert rows[3].fastest_peer == "lwp" and rows[3].ratio_fastest_peer == pytest.approx(2.0)
    assert not rows[1].is_peer and not rows[4].is_peer and rows[5].is_peer
    # The bare-socket rows bound every row of their language and compete with none.
    assert rows[7].fastest_peer == "net-http" and rows[7].ratio_fastest_peer == pytest.approx(4.0)
    assert not rows[6].is_peer and not rows[8].is_peer and rows[9].is_peer
    assert rows[6].ratio_fastest_peer is None and rows[8].ratio_fastest_peer is None


def test_workload_spec_tells_a_worker_what_to_check() -> None:
    spec = workload_spec(WORKLOADS["e"])
    assert spec["method"] == "POST" and spec["check"] == "echo"
    assert spec["form_bodies"][0] == form_body().decode()
    assert "note=a%20small%20urlencoded" in spec["form_bodies"][2]
    assert workload_spec(WORKLOADS["a"])["expect_length"] == 202


def test_lang_env_prepends_the_front_build() -> None:
    env = lang_env(LANGS["perl"], {"PERL5LIB": "/elsewhere"})
    parts = env["PERL5LIB"].split(":")
    assert parts[0].endswith("perl/blib/lib") and parts[-1] == "/elsewhere"


@pytest.mark.timeout(120)
@pytest.mark.skipif(shutil.which("perl") is None, reason="perl is not installed")
@pytest.mark.skipif(not PERL_BUILT, reason="the Perl front is not built (make test-perl)")
def test_lab_runs_perl_rows_end_to_end(tmp_path: Path) -> None:
    pytest.importorskip("rich")
    _, doc = run_lab(
        tmp_path / "r.json",
        *("--lang", "perl", "--workloads", "a,b,e,h,d", "--clients", "nodelay,http-tiny"),
        timeout=110,
    )
    assert doc["options"]["lang"] == "perl"
    rows = {(r["workload"], r["client"]): r for r in doc["rows"]}
    assert set(rows) == {(w, c) for w in "abehd" for c in ("nodelay", "http-tiny")}
    for wid in "abe":
        for client in ("nodelay", "http-tiny"):
            row = rows[(wid, client)]
            assert row["kind"] == "perl"
            assert row["status"] == "ok" and row["errors"] == 0, row
            n = {"a": 250, "b": 150, "e": 150}[wid]
            assert row["reps"][0]["requests"] == n
            assert row["latency_ms"]["n"] == n and row["peak_rss_kb"] > 0
            assert row["protocol"] == "HTTP/1.1"
    assert rows[("a", "nodelay")]["fastest_peer"] == "http-tiny"
    # b: Nodelay parses with its own json method, the peer with the fastest parser there.
    assert "parsed with Nodelay::Response->json" in rows[("b", "nodelay")]["note"]
    assert "parsed with" in rows[("b", "http-tiny")]["note"]
    assert "Nodelay::Response" not in rows[("b", "http-tiny")]["note"]
    # d is not one of the Perl worker's workloads: skipped, saying why.
    assert rows[("d", "nodelay")]["status"] == "skipped"
    assert "runs workloads a, b, c, e, h" in rows[("d", "nodelay")]["reason"]
    # h: the cookie flow, its file reloaded by a fresh client (and read by curl if there).
    cookie_row = rows[("h", "nodelay")]
    assert cookie_row["status"] == "ok" and cookie_row["errors"] == 0, cookie_row
    assert cookie_row["note"].startswith("cookie file reloaded")
    assert rows[("h", "http-tiny")]["status"] == "skipped"


@pytest.mark.timeout(120)
@pytest.mark.skipif(shutil.which("perl") is None, reason="perl is not installed")
@pytest.mark.skipif(not PERL_BUILT, reason="the Perl front is not built (make test-perl)")
def test_lwp_floor_is_a_reference_row_beside_lwp(tmp_path: Path) -> None:
    pytest.importorskip("rich")
    _, doc = run_lab(
        tmp_path / "r.json",
        *("--lang", "perl", "--workloads", "a,e", "--clients", "nodelay-lwp,lwp-floor,lwp"),
        timeout=110,
    )
    # nodelay-lwp is compared with stock LWP, never with the reference row.
    for row in check_reference_rows(doc, "lwp-floor", "nodelay-lwp", peer="lwp"):
        assert row["note"].startswith("reference:")


@pytest.mark.timeout(120)
@pytest.mark.skipif(shutil.which("perl") is None, reason="perl is not installed")
@pytest.mark.skipif(not PERL_BUILT, reason="the Perl front is not built (make test-perl)")
def test_perl_socket_is_a_reference_row_beside_the_perl_clients(tmp_path: Path) -> None:
    pytest.importorskip("rich")
    _, doc = run_lab(
        tmp_path / "r.json",
        *("--lang", "perl", "--workloads", "a,b,c,e", "--clients", "nodelay,perl-socket,lwp"),
        timeout=110,
    )
    # nodelay is compared with LWP, never with the bare socket below every Perl client.
    for row in check_reference_rows(doc, "perl-socket", "nodelay", peer="lwp", workloads="abce"):
        assert row["note"].startswith("reference:") and row["protocol"] == "HTTP/1.1"


@pytest.mark.timeout(180)
@needs_ruby_gem
def test_ruby_socket_is_a_reference_row_beside_the_ruby_clients(tmp_path: Path) -> None:
    pytest.importorskip("rich")
    env = child_env()
    env["RUBYLIB"] = str(RUBY_EXT_DIR)  # after the release build the Lang names
    _, doc = run_lab(
        tmp_path / "r.json",
        *("--lang", "ruby", "--workloads", "a,b,c,d,e,f"),
        *("--clients", "nodelay,ruby-socket,net-http"),
        timeout=170,
        env=env,
    )
    # nodelay is compared with Net::HTTP, never with the bare socket below every Ruby client.
    for row in check_reference_rows(
        doc, "ruby-socket", "nodelay", peer="net-http", workloads="abcef"
    ):
        assert row["note"].startswith("reference:") and row["protocol"] == "HTTP/1.1"
    rows = {(r["workload"], r["client"]): r for r in doc["rows"]}
    # It has no streaming API: d is skipped, saying so.
    assert rows[("d", "ruby-socket")]["status"] == "skipped"
    assert "no streaming API" in rows[("d", "ruby-socket")]["reason"]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("lang", ["perl", "ruby"])
def test_socket_reference_rows_count_an_answer_they_cannot_read_as_an_error(
    server: _core.TestServer, lang: str
) -> None:
    # The bare-socket rows read Content-Length framed answers only: a chunked answer must
    # be an error, never a request that passed.
    if shutil.which(lang) is None:
        pytest.skip(f"{lang} is not installed")
    spec = {"client": f"{lang}-socket", "workload": "a", "variant": ""}
    spec |= {"url": f"{server.url}/chunked/202", "n": 3, "warmup": 0, "repeat": 1}
    spec |= workload_spec(WORKLOADS["a"])
    out = subprocess.run(
        LANGS[lang].argv(spec),
        capture_output=True,
        text=True,
        timeout=50,
        env={"PATH": "/usr/bin:/bin"},
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["reps"][0] == pytest.approx(result["reps"][0] | {"requests": 0, "errors": 3})
    # The same client reads the Content-Length answer of the same size.
    spec["url"] = f"{server.url}/bytes/202"
    out = subprocess.run(
        LANGS[lang].argv(spec),
        capture_output=True,
        text=True,
        timeout=50,
        env={"PATH": "/usr/bin:/bin"},
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["reps"][0] == pytest.approx(result["reps"][0] | {"requests": 3, "errors": 0})


@pytest.mark.skipif(shutil.which("perl") is None, reason="perl is not installed")
def test_perl_worker_skips_a_client_that_is_not_there() -> None:
    spec = {"client": "nodelay", "workload": "a", "variant": "", "url": "http://127.0.0.1:9/x"}
    spec |= {"n": 1, "warmup": 0, "repeat": 1, **workload_spec(WORKLOADS["a"])}
    # No PERL5LIB: the Perl front cannot be found.
    argv = LANGS["perl"].argv(spec)
    out = subprocess.run(
        argv, capture_output=True, text=True, timeout=30, env={"PATH": "/usr/bin:/bin"}
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert list(result) == ["skipped"]
    assert result["skipped"].startswith("Nodelay is not installed or not built")


def test_ruby_rows_stream_d_and_run_f_on_four_threads() -> None:
    plans = plan_rows(["a", "d", "f"], ["nodelay", "curb"], "ruby")
    assert [(p.workload.id, p.client, p.variant, p.kind) for p in plans] == [
        ("a", "nodelay", "", "ruby"),
        ("a", "curb", "", "ruby"),
        ("d", "nodelay", "stream", "ruby"),
        ("d", "curb", "stream", "ruby"),
        ("f", "nodelay", "", "ruby"),
        ("f", "curb", "", "ruby"),
    ]
    ruby = LANGS["ruby"]
    assert ruby.spec(WORKLOADS["f"])["concurrency"] == RUBY_THREADS == 4
    assert ruby.spec(WORKLOADS["a"])["concurrency"] == 1
    # Python's f keeps its 32 in flight.
    assert workload_spec(WORKLOADS["f"])["concurrency"] == 32


@pytest.mark.timeout(240)
@needs_ruby_gem
def test_lab_runs_ruby_rows_end_to_end(tmp_path: Path) -> None:
    pytest.importorskip("rich")
    assert RUBY_EXT_DIR is not None
    env = child_env()
    env["RUBYLIB"] = str(RUBY_EXT_DIR)  # after the release build the Lang names
    proc, doc = run_lab(
        tmp_path / "r.json",
        *("--lang", "ruby", "--workloads", "a,b,d,e,f,h,j", "--clients", "nodelay,net-http"),
        "--syscalls",
        timeout=230,
        env=env,
    )
    assert doc["options"]["lang"] == "ruby"
    rows = {(r["workload"], r["client"]): r for r in doc["rows"]}
    assert set(rows) == {(w, c) for w in "abdefhj" for c in ("nodelay", "net-http")}
    counts = {"a": 250, "b": 150, "d": 1, "e": 150, "f": 50, "h": 50}
    for wid, n in counts.items():
        for client in ("nodelay", "net-http"):
            row = rows[(wid, client)]
            if wid == "h" and client == "net-http":
                continue
            assert row["kind"] == "ruby" and row["capped"] is False
            assert row["status"] == "ok" and row["errors"] == 0, row
            assert row["reps"][0]["requests"] == n
            assert row["latency_ms"]["n"] == n and row["peak_rss_kb"] > 0
            assert row["protocol"] == "HTTP/1.1" and row["cpu_us_per_request"] > 0
    assert rows[("a", "nodelay")]["fastest_peer"] == "net-http"
    # b: nodelay parses with Response#json, Net::HTTP's bodies with the fastest parser there.
    assert "parsed with Response#json" in rows[("b", "nodelay")]["note"]
    assert "parsed with" in rows[("b", "net-http")]["note"]
    assert "Response#json" not in rows[("b", "net-http")]["note"]
    # d: streamed to a block, its pieces counted, MB/s and CPU s/GB.
    for client in ("nodelay", "net-http"):
        d = rows[("d", client)]
        assert d["variant"] == "stream" and d["unit"] == "MB/s" and d["cpu_s_per_gb"] > 0
        assert d["chunks"]["chunks_per_response"] >= 1
        assert d["reps"][0]["bytes"] == WORKLOADS["d"].expect_length
    # f: four threads, on one nodelay client; one Net::HTTP each (it is not thread-safe).
    assert "4 threads sharing one client" in rows[("f", "nodelay")]["note"]
    assert "4 threads, one client each" in rows[("f", "net-http")]["note"]
    # h: the cookie file, reloaded by a fresh client and sent by the real curl.
    cookie_row = rows[("h", "nodelay")]
    assert cookie_row["status"] == "ok" and cookie_row["errors"] == 0, cookie_row
    if shutil.which("curl"):
        assert cookie_row["note"] == "cookie file reloaded; curl -b sends it"
    assert rows[("h", "net-http")]["status"] == "skipped"
    assert "no cookie file support" in rows[("h", "net-http")]["reason"]
    assert rows[("j", "nodelay")]["status"] == "skipped"
    # --syscalls: one write per small POST from nodelay, where strace can trace.
    writes = rows[("e", "nodelay")]["writes_per_request"]
    if writes is not None:
        assert writes == pytest.approx(1.0, abs=0.05)
    assert "writes/req" in proc.stdout


@pytest.mark.skipif(shutil.which("ruby") is None, reason="ruby is not installed")
def test_ruby_worker_skips_a_client_that_is_not_there() -> None:
    spec = {"client": "nodelay", "workload": "a", "variant": "", "url": "http://127.0.0.1:9/x"}
    spec |= {"n": 1, "warmup": 0, "repeat": 1, **workload_spec(WORKLOADS["a"])}
    # No RUBYLIB: the gem cannot be found.
    out = subprocess.run(
        LANGS["ruby"].argv(spec),
        capture_output=True,
        text=True,
        timeout=30,
        env={"PATH": "/usr/bin:/bin"},
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert list(result) == ["skipped"]
    assert "make bench-ruby" in result["skipped"]


def _capped_row(plan: Plan, scale: float) -> Row:
    """``plan`` run by the lab's runner against the embedded server, one repetition of far
    more requests than its time cap lets through."""
    server = start("embedded", [plan.workload], pin=False)
    try:
        return run_row(plan, server, RunOptions(repeat=1, scale=scale, pin=False, syscalls=False))
    finally:
        server.close()


def _assert_capped(row: Row, asked: int) -> None:
    assert row.status == "ok" and row.errors() == 0, row
    assert row.capped and row.to_dict()["capped"] is True
    assert 0 < row.reps[0].requests < asked
    assert "capped at" in row.note
    assert Row.from_dict(row.to_dict()).capped
    console = Console(record=True, width=300)
    console.print(workload_table(row.workload, [row]))
    assert "capped at" in console.export_text()


@pytest.mark.timeout(60)
@needs_ruby_gem
def test_a_ruby_row_stops_at_the_time_cap_and_says_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(runner, "ROW_SECONDS", 0.6)
    monkeypatch.setenv("RUBYLIB", str(RUBY_EXT_DIR))
    w = WORKLOADS["a"]
    _assert_capped(_capped_row(Plan(w, "nodelay", "", "ruby"), 40.0), w.count(40.0))


@pytest.mark.timeout(60)
@pytest.mark.skipif(shutil.which("perl") is None, reason="perl is not installed")
def test_http_tiny_posts_stop_at_the_time_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    # HTTP::Tiny (core Perl) writes a POST's head and body apart: each request can wait
    # out a delayed ACK. Uncapped, 30,000 of them would take minutes.
    monkeypatch.setattr(runner, "ROW_SECONDS", 2.0)
    w = WORKLOADS["e"]
    _assert_capped(_capped_row(Plan(w, "http-tiny", "", "perl"), 10.0), w.count(10.0))


@pytest.mark.timeout(60)
@needs_ruby_gem
@pytest.mark.parametrize("layout", ["build directory", "nodelay/ below it"])
def test_ruby_worker_loads_the_extension_from_either_layout(
    server: _core.TestServer, layout: str
) -> None:
    # `extconf.rb && make` leaves nodelay_ext.so at the top of the directory it ran in;
    # make test-ruby's NODELAY_EXT_DIR holds nodelay/nodelay_ext.so.
    assert RUBY_EXT_DIR is not None
    ext_dir = RUBY_EXT_DIR / "nodelay" if layout == "build directory" else RUBY_EXT_DIR
    spec = {"client": "nodelay", "workload": "a", "variant": "", "url": f"{server.url}/bytes/202"}
    spec |= {"n": 5, "warmup": 1, "repeat": 1, **workload_spec(WORKLOADS["a"])}
    env = {"PATH": "/usr/bin:/bin", "RUBYLIB": str(REPO / "ruby" / "lib")}
    out = subprocess.run(
        LANGS["ruby"].argv(spec),
        capture_output=True,
        text=True,
        timeout=50,
        env={**env, "NODELAY_EXT_DIR": str(ext_dir)},
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["reps"][0] == pytest.approx(result["reps"][0] | {"requests": 5, "errors": 0})
    assert result["protocol"] == "HTTP/1.1" and result["capped"] is False
