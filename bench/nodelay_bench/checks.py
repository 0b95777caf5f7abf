"""Response checks: a row only counts answers that are right (status, length, content)."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

from .workloads import FORM, Workload, form_body

__all__ = ["body_check", "json_ok"]


def json_ok(document: Any) -> bool:
    """The embedded server's (and the lab's nginx files') JSON documents say ``"ok": true``."""
    return isinstance(document, dict) and document.get("ok") is True


def body_check(workload: Workload) -> Any:
    """``check(status, body) -> bool`` for ``workload``'s whole-body rows.

    For "json" the body is parsed with the standard library's ``json.loads``: that parse is
    part of workload b (docs/benchmarks.md), so it happens inside the timed loop.
    """
    if workload.check == "bytes":
        size = workload.expect_length

        def check_bytes(status: int, body: bytes) -> bool:
            return status == 200 and len(body) == size

        return check_bytes
    if workload.check == "json":
        loads = json.loads

        def check_json(status: int, body: bytes) -> bool:
            return status == 200 and json_ok(loads(body))

        return check_json
    # The form's fields in our order, or sorted by name (primp sorts them): either is
    # the same form; anything else is wrong.
    expected = frozenset((form_body(), urlencode(sorted(FORM.items())).encode("ascii")))

    def check_echo(status: int, body: bytes) -> bool:
        return status == 200 and body in expected

    return check_echo
