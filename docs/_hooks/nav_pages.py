"""mkdocs hook: the nav tolerates the pages other parts of the project add to docs/.

- An entry of the nav whose page is listed in ``OPTIONAL`` is dropped (with a log line)
  when that page does not exist, so the nav can name pages that land separately.
- A page that exists but is not in the nav is appended under ``UNLISTED_SECTION`` instead
  of failing the ``--strict`` build as an omitted file.

Broken links inside pages are still errors: this only concerns the nav.
"""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger("mkdocs.hooks.nav_pages")

OPTIONAL = frozenset(
    {"http1.md", "decoding.md", "binding.md", "ffi.md", "python-client.md", "migrate-requests.md"}
)
"""Pages written by other parts of the project, listed in the nav when present."""
UNLISTED_SECTION = "More"
IGNORED_PREFIXES = ("bench/",)
"""Pages kept beside the lab's results, reached through links rather than the nav."""


def _prune(items: list[Any], present: set[str], listed: set[str]) -> list[Any]:
    kept: list[Any] = []
    for item in items:
        if isinstance(item, dict):
            ((title, value),) = item.items()
            if isinstance(value, list):
                children = _prune(value, present, listed)
                if children:
                    kept.append({title: children})
                continue
            path = value
        else:
            title, path = None, item
        if isinstance(path, str) and path in OPTIONAL and path not in present:
            log.info("nav: %s is not in docs/ yet; its entry is left out", path)
            continue
        if isinstance(path, str):
            listed.add(path)
        kept.append(item if title is None else {title: path})
    return kept


def on_files(files: Any, config: Any) -> Any:
    present = {f.src_uri for f in files.documentation_pages()}
    listed: set[str] = set()
    nav = _prune(list(config["nav"] or []), present, listed)
    rest = sorted(p for p in present if p not in listed and not p.startswith(IGNORED_PREFIXES))
    if rest:
        nav.append({UNLISTED_SECTION: rest})
    config["nav"] = nav
    return files
