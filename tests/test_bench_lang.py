"""The lab's language workers (``nodelay bench --lang perl``, bench/nodelay_bench/langs.py)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from nodelay_bench import child_env
from nodelay_bench.langs import LANGS, REPO, lang_env, workload_spec
from nodelay_bench.results import Row, add_ratios
from nodelay_bench.runner import plan_rows
from nodelay_bench.stats import Rep
from nodelay_bench.workloads import WORKLOADS, form_body

PERL_BUILT = (REPO / "perl" / "blib" / "arch" / "auto" / "Nodelay" / "Nodelay.so").exists()


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
    out_json = tmp_path / "r.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "nodelay_bench",
            "--lang",
            "perl",
            "--quick",
            "--scale",
            "0.05",
            "--workloads",
            "a,e,h,d",
            "--clients",
            "nodelay,http-tiny",
            "--json",
            str(out_json),
        ],
        capture_output=True,
        text=True,
        timeout=110,
        env=child_env(),
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out_json.read_text())
    assert doc["options"]["lang"] == "perl"
    rows = {(r["workload"], r["client"]): r for r in doc["rows"]}
    assert set(rows) == {(w, c) for w in "aehd" for c in ("nodelay", "http-tiny")}
    for wid in "ae":
        for client in ("nodelay", "http-tiny"):
            row = rows[(wid, client)]
            assert row["kind"] == "perl"
            assert row["status"] == "ok" and row["errors"] == 0, row
            n = 250 if wid == "a" else 150
            assert row["reps"][0]["requests"] == n
            assert row["latency_ms"]["n"] == n and row["peak_rss_kb"] > 0
            assert row["protocol"] == "HTTP/1.1"
    assert rows[("a", "nodelay")]["fastest_peer"] == "http-tiny"
    # d is not one of the Perl worker's workloads: skipped, saying why.
    assert rows[("d", "nodelay")]["status"] == "skipped"
    assert "runs workloads a, b, c, e, h" in rows[("d", "nodelay")]["reason"]
    # h: the cookie flow, its file reloaded by a fresh client (and read by curl if there).
    cookie_row = rows[("h", "nodelay")]
    assert cookie_row["status"] == "ok" and cookie_row["errors"] == 0, cookie_row
    assert cookie_row["note"].startswith("cookie file reloaded")
    assert rows[("h", "http-tiny")]["status"] == "skipped"


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
