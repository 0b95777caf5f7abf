"""Locating (and building, once) the Rust floor client ``nodelay-floor``."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

__all__ = ["find_or_build"]

BUILD_TIMEOUT = 900.0
_cache: dict[str, tuple[str | None, str]] = {}


def _workspace() -> Path | None:
    """The source tree holding crates/nodelay-floor (nodelay installed from a checkout)."""
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "crates" / "nodelay-floor" / "Cargo.toml").exists():
            return parent
    return None


def find_or_build() -> tuple[str | None, str]:
    """(path to the binary, "") or (None, reason it is skipped). Cached per process.

    ``NODELAY_FLOOR`` may name a prebuilt binary. Otherwise, from a source checkout and
    with cargo on PATH, ``cargo build --release -p nodelay-floor`` (a no-op when fresh).
    """
    if "floor" in _cache:
        return _cache["floor"]
    result = _find_or_build()
    _cache["floor"] = result
    return result


def _find_or_build() -> tuple[str | None, str]:
    env = os.environ.get("NODELAY_FLOOR")
    if env:
        return (
            (env, "")
            if os.access(env, os.X_OK)
            else (None, f"NODELAY_FLOOR={env} is not executable")
        )
    root = _workspace()
    if root is None:
        return None, "crates/nodelay-floor not found (nodelay is not installed from a checkout)"
    cargo = shutil.which("cargo")
    if cargo is None:
        return None, "cargo is not installed"
    target = Path(os.environ.get("CARGO_TARGET_DIR") or root / "target")
    if not target.is_absolute():
        target = root / target
    proc = subprocess.run(
        [cargo, "build", "--release", "--quiet", "-p", "nodelay-floor"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT,
    )
    binary = target / "release" / "nodelay-floor"
    if proc.returncode != 0 or not binary.exists():
        return None, f"cargo build failed: {proc.stderr.strip()[-300:]}"
    return str(binary), ""
