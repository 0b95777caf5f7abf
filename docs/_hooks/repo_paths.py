"""mkdocs hook: every repository file a page names in backticks exists.

The docs cite the code by path (`crates/nodelay-core/src/pool/state.rs`) or, inside a crate's
own section, by a shorter tail (`pool/state.rs`, `exchange.rs`). A rename that leaves such a
name behind is a broken citation that no link checker sees, so the build fails on it (an error
in the log, which `--strict` turns into a failed build).

A span counts as a file name when it is one word ending in a source or document extension
(`FILE_NAME`); anything else in backticks (code, commands, URLs) is left alone. A name with a
folder must be the tail of a path in the repository; a bare file name must be some file's
name. `python -m docs._hooks.repo_paths` (or running this file) checks without mkdocs.
"""

from __future__ import annotations

import logging
import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

FILE_NAME = re.compile(
    r"^(?:[\w.-]+/)*[\w.-]+\.(?:rs|py|pyi|pm|pl|PL|t|rb|xs|c|h|md|toml|yml|yaml|json|txt|cfg)$"
)
"""A backticked span that names a file: no spaces, no URL scheme, a known extension."""

CODE_SPAN = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
"""An inline code span (not a fence)."""

FENCE = re.compile(r"^\s*(```|~~~)")

NOT_REPOSITORY_FILES = {
    "cookies.txt": "a user's cookie file",
    "pyproject.toml": "a user's project file",
    "conftest.py": "a user's pytest file",
    "setup.py": "a user's project file",
    "Cargo.toml": "any crate's manifest",
    "requirements.txt": "a user's project file",
    "client/legacy/pool.rs": "hyper-util's pool (docs/pool.md compares)",
    "scripts/unasync.py": "httpx's code generator (docs/python-client.md compares)",
    "http.rb": "a Ruby gem's name (docs/ruby.md lists peers)",
    "_name.py": "the naming pattern of private modules (docs/design.md)",
    "DIR/include/nodelay.h": "a placeholder for an install prefix (docs/ruby.md)",
    "test_requests.py": "requests' own suite (docs/requests-adapter.md runs it)",
    "test_lowlevel.py": "requests' own suite (docs/requests-adapter.md runs it)",
    "test_adapters.py": "requests' own suite (docs/requests-adapter.md runs it)",
    "test_testserver.py": "requests' own suite (docs/requests-adapter.md runs it)",
    "tests/cassettes/users.yaml": "a user's vcrpy cassette (docs/testing.md)",
    "net_http_spec.rb": "Faraday's own spec (docs/ruby.md runs it)",
    "spec_helper.rb": "Faraday's own spec helper (docs/ruby.md runs it)",
}
"""Names the pages use on purpose for files that are not this repository's, with why."""

GENERATED = ("bench-results/", "site/", "target/", "build/")
"""Where the builds and the lab write: named by the docs, absent from a clean clone."""

NOT_CHECKED_PAGES = ("bench/archive/",)
"""Pages kept as records of past measurements, which cite the code of their day."""

log = logging.getLogger("mkdocs.plugins.repo_paths")


def repository_files() -> list[str]:
    """The repository's files (tracked and new, not ignored), relative to its root."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [line for line in listed.splitlines() if line]


def missing_names(markdown: str, files: list[str]) -> list[str]:
    """The file names cited in ``markdown`` that no repository file answers."""
    names = {Path(f).name for f in files}
    missing = []
    in_fence = False
    for line in markdown.splitlines():
        if FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        for span in CODE_SPAN.findall(line):
            cited = span.strip().rstrip(":")
            if not FILE_NAME.match(cited) or cited in NOT_REPOSITORY_FILES:
                continue
            if cited.startswith(GENERATED):
                continue
            if cited.startswith(("./", "../")):
                cited = cited.lstrip("./")
            if "/" in cited:
                found = any(f == cited or f.endswith("/" + cited) for f in files)
            else:
                found = cited in names
            if not found and cited not in missing:
                missing.append(cited)
    return missing


_FILES: list[str] | None = None


def on_page_markdown(markdown: str, page: object, **_: object) -> str:
    global _FILES
    if _FILES is None:
        _FILES = repository_files()
    source = getattr(getattr(page, "file", None), "src_path", "?")
    if source.startswith(NOT_CHECKED_PAGES):
        return markdown
    for name in missing_names(markdown, _FILES):
        log.error("docs/%s names `%s`, which is not a file of the repository", source, name)
    return markdown


def main() -> int:
    files = repository_files()
    bad = 0
    for page in sorted((REPO / "docs").rglob("*.md")):
        if str(page.relative_to(REPO / "docs")).startswith(NOT_CHECKED_PAGES):
            continue
        for name in missing_names(page.read_text(encoding="utf-8"), files):
            print(f"{page.relative_to(REPO)}: `{name}` is not a file of the repository")
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
