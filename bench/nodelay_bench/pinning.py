"""CPU pinning: the server on CPU 0, clients on CPU 1, when there are at least 2 CPUs."""

from __future__ import annotations

import os
from collections.abc import Callable

__all__ = ["CLIENT_CPU", "SERVER_CPU", "can_pin", "pin_to"]

SERVER_CPU = 0
CLIENT_CPU = 1


def can_pin() -> bool:
    return hasattr(os, "sched_setaffinity") and len(os.sched_getaffinity(0)) >= 2


def pin_to(cpu: int | None) -> Callable[[], None] | None:
    """A ``preexec_fn`` pinning the child to ``cpu`` (None or one CPU: no pinning)."""
    if cpu is None or not can_pin():
        return None
    allowed = sorted(os.sched_getaffinity(0))
    target = allowed[cpu % len(allowed)]

    def pin() -> None:
        os.sched_setaffinity(0, {target})

    return pin
