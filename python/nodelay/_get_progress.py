"""The download progress meter of ``nodelay get``, in curl's shape.

Two heading lines, then one row redrawn in place (``\\r``) at most every
``PROGRESS_INTERVAL`` seconds and once at the end: percent and size of the total,
percent and size received, the upload columns (zero: the meter follows downloads),
the average download speed, then the expected total time, the time spent, the time
left (the ETA) and the current speed. Sizes use curl's five-character units (``335k``,
``10.0M``); times are ``H:MM:SS``, ``--:--:--`` while unknown or under a second. The
caller shows it only when stderr is a terminal (curl's rule as well).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from typing import IO

__all__ = ["HEADING", "PROGRESS_INTERVAL", "Meter", "max5", "row", "time8"]

PROGRESS_INTERVAL = 1.0
"""Seconds between two redraws of the row (curl redraws once a second)."""

SPEED_WINDOW = 5.0
"""Seconds of history the "Current" speed column averages over (curl: its last 5 s)."""

HEADING = (
    "  % Total    % Received % Xferd  Average Speed   Time    Time     Time  Current\n"
    "                                 Dload  Upload   Total   Spent    Left  Speed\n"
)
"""curl's two heading lines, verbatim, so a reader of curl's meter reads this one."""

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB
TIB = 1024 * GIB


def max5(n: int) -> str:
    """``n`` bytes in at most five characters, curl's way: ``99999``, ``9999k``,
    ``99.9M``, ``9999M``, ``99.9G``, ``9999G``, ``9999T``, then ``P``."""
    if n < 100_000:
        return f"{n:5d}"
    if n < 10_000 * KIB:
        return f"{n // KIB:4d}k"
    if n < 100 * MIB:
        return f"{n // MIB:2d}.{(n % MIB) // (MIB // 10)}M"
    if n < 10_000 * MIB:
        return f"{n // MIB:4d}M"
    if n < 100 * GIB:
        return f"{n // GIB:2d}.{(n % GIB) // (GIB // 10)}G"
    if n < 10_000 * GIB:
        return f"{n // GIB:4d}G"
    if n < 10_000 * TIB:
        return f"{n // TIB:4d}T"
    return f"{n // (1024 * TIB):4d}P"


def time8(seconds: int) -> str:
    """Whole seconds in eight characters: `` H:MM:SS`` up to 99 hours, then days."""
    if seconds <= 0:
        return "--:--:--"
    hours = seconds // 3600
    if hours <= 99:
        return f"{hours:2d}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"
    days, hours = divmod(hours, 24)
    return f"{days:3d}d {hours:02d}h" if days <= 999 else f"{days:7d}d"


def _percent(total: int, done: int) -> int:
    # curl's pgrs_est_percent: integer percent, dividing first for large totals.
    if total > 10_000:
        return done // (total // 100)
    return done * 100 // total if total > 0 else 0


def row(received: int, expected: int | None, spent: float, current: float) -> str:
    """The meter's row (without the leading ``\\r``): ``received`` bytes of ``expected``
    (``None``: unknown) after ``spent`` seconds, ``current`` bytes/s lately. As in curl,
    an unknown size counts as what was received so far in the first two columns, and the
    percent received, the expected total time and the time left need a known size and a
    speed."""
    average = int(received / spent) if spent > 0 else received
    total = expected if expected is not None else received
    known = expected is not None and average > 0
    eta = expected // average if known and expected is not None else 0
    left = eta - int(spent) if eta > 0 else 0
    received_percent = _percent(expected, received) if known and expected is not None else 0
    return (
        f"{_percent(total, received):3d} {max5(total)}  {received_percent:3d} {max5(received)}  "
        f"{0:3d} {max5(0)}  {max5(average)}  {max5(0)} {time8(eta)} {time8(int(spent))} "
        f"{time8(left)} {max5(int(current))}"
    )


class Meter:
    """Draws the meter on ``err`` from a thread while the body is written; the writer
    adds to ``received``. Used as a context manager: the final row and its newline are
    drawn on exit."""

    def __init__(self, err: IO[str], expected: int | None) -> None:
        self.err = err
        self.expected = expected
        self.received = 0
        self.start = time.perf_counter()
        # (time, bytes received) samples for the current speed.
        self._samples: deque[tuple[float, int]] = deque([(self.start, 0)])
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _draw(self) -> None:
        now = time.perf_counter()
        got = self.received
        self._samples.append((now, got))
        while len(self._samples) > 2 and now - self._samples[0][0] > SPEED_WINDOW:
            self._samples.popleft()
        then, before = self._samples[0]
        current = (got - before) / (now - then) if now > then else 0.0
        self.err.write("\r" + row(got, self.expected, now - self.start, current))
        self.err.flush()

    def _run(self) -> None:
        while not self._stop.wait(PROGRESS_INTERVAL):
            self._draw()

    def __enter__(self) -> Meter:
        self.err.write(HEADING)
        self._draw()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=PROGRESS_INTERVAL * 2)
        self._draw()
        self.err.write("\n")
        self.err.flush()
