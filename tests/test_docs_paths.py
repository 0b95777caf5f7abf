"""The docs' check that every repository file a page names exists (docs/_hooks/repo_paths.py)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HOOK = REPO / "docs" / "_hooks" / "repo_paths.py"


def _hook():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("repo_paths", HOOK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


FILES = ["crates/nodelay-core/src/pool/state.rs", "python/nodelay/_flow.py", "docs/pool.md"]


def test_a_name_that_no_file_answers_is_reported() -> None:
    hook = _hook()
    page = "The decoder (`decode.rs`) and the pool (`crates/nodelay-core/src/pool.rs`)."
    assert hook.missing_names(page, FILES) == ["decode.rs", "crates/nodelay-core/src/pool.rs"]


def test_full_paths_tails_and_bare_names_of_real_files_pass() -> None:
    hook = _hook()
    page = "`crates/nodelay-core/src/pool/state.rs`, `pool/state.rs`, `state.rs`, `_flow.py`"
    assert hook.missing_names(page, FILES) == []


def test_code_commands_fences_and_generated_files_are_not_file_names() -> None:
    hook = _hook()
    page = "\n".join(
        [
            "`nodelay get URL`, `client.get(url)`, `x = 1`, `bench-results/perl.json`",
            "```",
            "`gone.rs` inside a fence",
            "```",
        ]
    )
    assert hook.missing_names(page, FILES) == []


def test_the_docs_of_this_checkout_name_only_files_it_has() -> None:
    run = subprocess.run([sys.executable, str(HOOK)], capture_output=True, text=True, cwd=REPO)
    assert run.returncode == 0, run.stdout
