"""Workers in other languages (``nodelay bench --lang perl|ruby``): one script per language.

A language's worker is a script run as ``INTERPRETER SCRIPT SPEC_JSON``; it measures one
client x one workload and prints one JSON line, the same object the Python worker prints
(``worker.py``: reps, protocol, peak_rss_kb, note, latency_ms, ... or ``{"skipped": why}``
or ``{"failed": why}``). Its spec is the Python worker's plus what the script needs to know
of the workload without the lab's Python code (``workload_spec``). Adding a language is one
more ``Lang`` entry and its script under ``bench/workers/<name>/``.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from . import LAB_PATH
from .workloads import COOKIE_POST_PATH, FORM, LOGIN_FORM, LOGIN_PATH, Workload, form_body

__all__ = ["LANGS", "RUBY_THREADS", "Lang", "lang_env", "workload_spec"]

REPO = LAB_PATH.parent
"""The checkout holding ``bench/`` (the workers load the fronts built in it)."""
RUBY_THREADS = 4
"""Threads of the Ruby worker's workload f, all on one client where it is thread-safe."""


@dataclass(frozen=True)
class Lang:
    """One language's worker: its interpreter, script and client rows."""

    name: str
    interpreter: str
    script: Path
    clients: tuple[str, ...]
    """Row names, in display order; the script knows each one."""
    workloads: frozenset[str]
    """Workloads the script runs; others are skipped with the reason."""
    env: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Path-list variables to prepend to (``PERL5LIB``: the front's build directory)."""
    variants: dict[str, str] = field(default_factory=dict)
    """Workload -> the variant every row of this language runs it as (its rows' label)."""
    threads: dict[str, int] = field(default_factory=dict)
    """Workload -> threads the worker runs it with, instead of the workload's in-flight
    count (the spec's ``concurrency``)."""

    def spec(self, w: Workload) -> dict[str, Any]:
        """``workload_spec(w)`` as this language's worker runs it."""
        spec = workload_spec(w)
        if w.id in self.threads:
            spec["concurrency"] = self.threads[w.id]
        return spec

    def argv(self, spec: dict[str, Any]) -> list[str]:
        return [self.interpreter, str(self.script), json.dumps(spec)]

    def probe(self) -> str | None:
        """None if the interpreter and script are there, else why the rows are skipped."""
        if shutil.which(self.interpreter) is None:
            return f"{self.interpreter} is not installed"
        if not self.script.exists():
            return f"{self.script} is missing"
        return None


LANGS: dict[str, Lang] = {
    "perl": Lang(
        name="perl",
        interpreter="perl",
        script=LAB_PATH / "workers" / "perl" / "worker.pl",
        clients=(
            "nodelay",
            "nodelay-tiny",
            "nodelay-lwp",
            "lwp",
            "lwp-cookies",
            "lwp-floor",
            "perl-socket",
            "http-tiny",
            "furl",
            "hijk",
            "www-curl",
            "mojo",
        ),
        workloads=frozenset("abceh"),
        # The Nodelay distribution as `make test-perl` (perl Makefile.PL && make) built it.
        env={
            "PERL5LIB": (str(REPO / "perl" / "blib" / "lib"), str(REPO / "perl" / "blib" / "arch"))
        },
    ),
    "ruby": Lang(
        name="ruby",
        interpreter="ruby",
        script=LAB_PATH / "workers" / "ruby" / "worker.rb",
        clients=(
            "nodelay",
            "nodelay-into",
            "nodelay-faraday",
            "net-http",
            "net-http-persistent",
            "curb",
            "excon",
            "typhoeus",
            "httpclient",
            "http.rb",
            "faraday",
            "ruby-socket",
        ),
        workloads=frozenset("abcdefh"),
        # The gem's Ruby files, and its extension as `make bench-ruby` built it (release,
        # RUBY_BENCH_BUILD/nodelay/nodelay_ext.so); the worker also takes NODELAY_EXT_DIR.
        env={"RUBYLIB": (str(REPO / "ruby" / "lib"), str(REPO / "build" / "ruby-release"))},
        # Seed C's 10 MiB download is streamed to a block.
        variants={"d": "stream"},
        # The gem's gate (issue #16): 4 threads on one client against one thread (row a)
        # shows the GVL released on a 2-core machine; 32 Ruby threads would measure the
        # scheduler.
        threads={"f": RUBY_THREADS},
    ),
}


def lang_env(lang: Lang, base: dict[str, str]) -> dict[str, str]:
    """``base`` with the language's path lists prepended."""
    env = dict(base)
    for name, parts in lang.env.items():
        old = [p for p in env.get(name, "").split(os.pathsep) if p]
        env[name] = os.pathsep.join(dict.fromkeys([*parts, *old]))
    return env


def workload_spec(w: Workload) -> dict[str, Any]:
    """What a language worker needs of ``w``: method, check and expected answer."""
    # The form's fields in FORM's order, or sorted by name (the Python worker's echo check
    # accepts both too), with spaces as "+" or as "%20" (Furl's form encoder): each is the
    # same form. The first is the body to send where a client takes bytes.
    ordered = form_body().decode()
    by_name = urlencode(sorted(FORM.items()))
    pct20 = urlencode(FORM, quote_via=quote)
    return {
        "method": w.method,
        "check": w.check,
        "expect_length": w.expect_length,
        "concurrency": w.concurrency,
        "fresh_client": w.fresh_client,
        "form": [[k, v] for k, v in FORM.items()],
        "form_bodies": [ordered, by_name, pct20],
        # Workload h (check "cookies"): the login, and where its POSTs go (worker.py's flow).
        "login_path": LOGIN_PATH,
        "login_form": [[k, v] for k, v in LOGIN_FORM.items()],
        "cookie_post_path": COOKIE_POST_PATH,
    }
