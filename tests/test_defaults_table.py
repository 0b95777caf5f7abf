"""The client defaults are one table, ``crates/nodelay-front/src/defaults.rs``: the Python
package reads it from ``nodelay._core.DEFAULTS`` (the very objects, not copies of their
values), the pyo3 signatures and the C ABI name its constants, and no other source file
writes one of its values again as a literal."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from nodelay import _batch, _config, _core, _prepare
from nodelay.ext import _jobs

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "crates" / "nodelay-front" / "src" / "defaults.rs"

_CONFIG_NAMES = (
    "connect_timeout",
    "read_timeout",
    "write_timeout",
    "pool_timeout",
    "max_redirects",
    "max_connections",
    "max_keepalive",
    "keepalive_expiry",
)


@pytest.mark.parametrize("name", _CONFIG_NAMES)
def test_config_reads_the_table(name: str) -> None:
    assert getattr(_config, f"DEFAULT_{name.upper()}") is _core.DEFAULTS[name]


def test_the_other_python_defaults_read_the_table() -> None:
    assert _batch.DEFAULT_CONCURRENCY is _core.DEFAULTS["batch_concurrency"]
    assert _jobs.DEFAULT_JOB_CONCURRENCY is _core.DEFAULTS["batch_concurrency"]
    assert _prepare.ACCEPT_ENCODING is _core.DEFAULTS["accept_encoding"]
    assert _prepare.default_headers() == [
        ("User-Agent", _core.DEFAULTS["user_agent"]),
        ("Accept", _core.DEFAULTS["accept"]),
        ("Accept-Encoding", _core.DEFAULTS["accept_encoding"]),
    ]


def test_the_table_holds_what_the_rust_source_says() -> None:
    """``DEFAULTS`` is built from the Rust table, names and values (read from the source
    here, so a Python-side table could not pass)."""
    source = TABLE.read_text()
    consts = dict(re.findall(r"pub const (\w+): \w+ = ([0-9.]+);", source))
    rows = re.findall(r'\("(\w+)", Value::\w+\((\w+)(?: as u64)?\)\)', source)
    assert {name for name, _ in rows} == set(_core.DEFAULTS)
    for name, const in rows:
        if const in consts:
            assert float(consts[const]) == _core.DEFAULTS[name], name


def _numeric_defaults() -> dict[str, str]:
    """The table's numeric defaults: name → the literal the table writes."""
    source = TABLE.read_text()
    consts = dict(re.findall(r"pub const (\w+): (?:f64|u32|u64) = ([0-9.]+);", source))
    assert consts, "no numeric default found in defaults.rs"
    return consts


# A default assigned or passed by a name that says what it is: ``connect_timeout=10.0``,
# ``DEFAULT_MAX_REDIRECTS = 20``, ``max_connections=Some(100)``, ``Duration::from_secs(5)``
# for a keep-alive expiry, ``concurrency: int = 32``, a struct field ``max_keepalive: 20``.
_NAMED_DEFAULT = re.compile(
    r"(?i)\b\w*(timeout|redirects|connections|keepalive|expiry|concurrency)\w*"
    r"\s*(?::\s*[\w\[\]| .]+?\s*=|=|:)\s*(?:Some\()?(?:Duration::from_secs(?:_f64)?\()?"
    r"(?P<number>[0-9][0-9_.]*)\b"
)
# A Rust enum's discriminant (``ReadTimeout = 5,``) names a code, not a default.
_DISCRIMINANT = re.compile(r"^\s*[A-Z]\w* = \d+,$")

_SOURCES = (
    ("python/nodelay", "*.py"),
    ("python/nodelay", "*.pyi"),
    ("crates/nodelay-py/src", "*.rs"),
    ("crates/nodelay-ffi/src", "*.rs"),
    ("crates/nodelay-front/src", "*.rs"),
    ("perl/lib", "*.pm"),
    ("ruby/lib", "*.rb"),
    ("ruby/ext", "*.c"),
)


def _code_lines(path: Path) -> list[tuple[int, str]]:
    """The lines of `path` outside its tests (a Rust file's ``#[cfg(test)]`` module)."""
    text = path.read_text()
    if path.suffix == ".rs":
        text = text.split("#[cfg(test)]")[0]
    return list(enumerate(text.splitlines(), 1))


def test_no_default_is_written_twice() -> None:
    numbers = {float(value) for value in _numeric_defaults().values()}
    found = []
    for folder, pattern in _SOURCES:
        for path in sorted((ROOT / folder).rglob(pattern)):
            if path == TABLE:
                continue
            for number, line in _code_lines(path):
                if path.suffix == ".rs" and _DISCRIMINANT.match(line):
                    continue
                for match in _NAMED_DEFAULT.finditer(line):
                    if float(match["number"].replace("_", "").rstrip(".")) in numbers:
                        found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not found, "defaults written outside defaults.rs:\n" + "\n".join(found)


def test_the_check_finds_a_copied_default() -> None:
    """The pattern above catches the forms a copy would take."""
    for line in (
        "DEFAULT_CONNECT_TIMEOUT = 10.0",
        "        max_connections=Some(100),",
        "const KEEPALIVE_EXPIRY: Duration = Duration::from_secs(5);",
        "pub const NODELAY_DEFAULT_POOL_TIMEOUT: f64 = 30.0;",
        "    concurrency: int = 32,",
        "max_keepalive: int | None = 20,",
        "                max_keepalive: Some(20),",
    ):
        assert _NAMED_DEFAULT.search(line), line
