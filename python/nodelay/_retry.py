"""``Retry``: which failed exchanges are sent again, and after how long (urllib3's model).

A ``Retry`` is immutable: each retry makes a new one with its counters decremented
(``increment``), as urllib3's does. The request flow (``_flow.py``) applies it: connect
failures are retried for any method (nothing was sent); read failures (the request went
out, the response did not come back whole) only for ``allowed_methods``; responses whose
status is in ``status_forcelist`` (or 413/429/503 with a ``Retry-After``) only for
``allowed_methods``. A streamed body that cannot be rewound is never sent twice.

When the retries are used up, a failure re-raises the last error and a status returns the
last response (urllib3's ``raise_on_status=False``: the caller sees the real 503 and can
``raise_for_status()``).
"""

from __future__ import annotations

from ._exceptions import (
    ConnectError,
    ConnectTimeout,
    ReadError,
    ReadTimeout,
    RemoteProtocolError,
    TLSError,
    WriteError,
    WriteTimeout,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Collection
    from typing import TypeAlias

    from ._exceptions import RequestError

    RetryTypes: TypeAlias = "int | Retry | None"

__all__ = [
    "DEFAULT_ALLOWED_METHODS",
    "DEFAULT_BACKOFF_MAX",
    "RETRY_AFTER_MAX_SECONDS",
    "RETRY_AFTER_STATUSES",
    "Retry",
    "build_retry",
    "parse_retry_after",
]

# Idempotent methods (RFC 9110 §9.2.2): sending them twice does no harm (urllib3's default).
DEFAULT_ALLOWED_METHODS = frozenset(("DELETE", "GET", "HEAD", "OPTIONS", "PUT", "TRACE"))

# Statuses retried when the response carries Retry-After, even outside status_forcelist
# (urllib3's RETRY_AFTER_STATUS_CODES).
RETRY_AFTER_STATUSES = frozenset((413, 429, 503))

# Longest exponential backoff between two attempts, in seconds (urllib3's default).
DEFAULT_BACKOFF_MAX = 120.0

# Longest wait a server's Retry-After may impose, in seconds: a hostile or misconfigured
# "Retry-After: 86400" must not park the caller for a day. Waits are also never allowed to
# run past the request's Timeout(total=).
RETRY_AFTER_MAX_SECONDS = 120.0

# Errors raised before anything was sent: safe to retry for any method. A certificate
# failure will not fix itself, so TLSError (a ConnectError) is not retried.
_CONNECT_ERRORS = (ConnectError, ConnectTimeout)
# Errors after the request went out: the server may have acted on it.
_READ_ERRORS = (ReadError, ReadTimeout, WriteError, WriteTimeout, RemoteProtocolError)


class Retry:
    """Retry policy in the style of ``urllib3.util.Retry``.

    ``total``: most retries of any kind (``None``: only the per-kind counts limit them);
    ``connect``, ``read``, ``status``: most retries of that kind (``None``: no own limit).
    ``backoff_factor`` (alias ``backoff``): the n-th consecutive retry waits
    ``backoff_factor * 2 ** (n - 1)`` seconds, the first none (urllib3 2.x), at most
    ``backoff_max``. ``status_forcelist`` (alias ``statuses``): statuses to retry.
    ``allowed_methods``: methods retried after a read failure or a status (default: the
    idempotent ones; ``None`` allows every method). ``respect_retry_after``: wait what the
    server's ``Retry-After`` says (seconds or an HTTP date, at most
    ``RETRY_AFTER_MAX_SECONDS``) instead of the backoff.
    """

    __slots__ = (
        "allowed_methods",
        "backoff_factor",
        "backoff_max",
        "connect",
        "read",
        "respect_retry_after",
        "retries_done",
        "status",
        "status_forcelist",
        "total",
    )

    total: int | None
    connect: int | None
    read: int | None
    status: int | None
    backoff_factor: float
    backoff_max: float
    status_forcelist: frozenset[int]
    allowed_methods: frozenset[str] | None
    respect_retry_after: bool
    retries_done: int

    def __init__(
        self,
        total: int | None = 10,
        connect: int | None = None,
        read: int | None = None,
        status: int | None = None,
        backoff_factor: float | None = None,
        status_forcelist: Collection[int] | None = None,
        allowed_methods: Collection[str] | None = DEFAULT_ALLOWED_METHODS,
        respect_retry_after: bool = True,
        backoff_max: float = DEFAULT_BACKOFF_MAX,
        *,
        backoff: float | None = None,
        statuses: Collection[int] | None = None,
    ) -> None:
        if backoff is not None and backoff_factor is not None:
            raise TypeError("give backoff_factor= or its alias backoff=, not both")
        if statuses is not None and status_forcelist is not None:
            raise TypeError("give status_forcelist= or its alias statuses=, not both")
        for name, count in (("total", total), ("connect", connect), ("read", read)):
            if count is not None and count < 0:
                raise ValueError(f"{name} must be >= 0 or None, got {count}")
        if status is not None and status < 0:
            raise ValueError(f"status must be >= 0 or None, got {status}")
        factor = backoff if backoff is not None else backoff_factor
        factor = 0.0 if factor is None else float(factor)
        if factor < 0 or backoff_max < 0:
            raise ValueError("backoff_factor and backoff_max must be >= 0")
        forcelist = statuses if statuses is not None else status_forcelist
        self.total = total
        self.connect = connect
        self.read = read
        self.status = status
        self.backoff_factor = factor
        self.backoff_max = float(backoff_max)
        self.status_forcelist = frozenset(forcelist or ())
        self.allowed_methods = (
            None if allowed_methods is None else frozenset(m.upper() for m in allowed_methods)
        )
        self.respect_retry_after = respect_retry_after
        self.retries_done = 0

    @property
    def backoff(self) -> float:
        """Alias of ``backoff_factor`` (docs/design.md's short name)."""
        return self.backoff_factor

    @property
    def statuses(self) -> frozenset[int]:
        """Alias of ``status_forcelist``."""
        return self.status_forcelist

    def __repr__(self) -> str:
        return (
            f"Retry(total={self.total}, connect={self.connect}, read={self.read}, "
            f"status={self.status}, backoff_factor={self.backoff_factor})"
        )

    # -- decisions (used by the request flow) -----------------------------------------------

    def is_method_allowed(self, method: str) -> bool:
        return self.allowed_methods is None or method in self.allowed_methods

    def is_retry_error(self, method: str, error: RequestError) -> bool:
        """Whether ``error`` is of a kind this policy retries for ``method``."""
        if isinstance(error, TLSError):
            return False
        if isinstance(error, _CONNECT_ERRORS):
            return True
        return isinstance(error, _READ_ERRORS) and self.is_method_allowed(method)

    def is_retry_status(self, method: str, status: int, has_retry_after: bool) -> bool:
        """Whether a response with ``status`` is retried for ``method`` (urllib3's rule)."""
        if not self.is_method_allowed(method):
            return False
        if status in self.status_forcelist:
            return True
        return self.respect_retry_after and has_retry_after and status in RETRY_AFTER_STATUSES

    def is_retry(self, method: str, status_code: int, has_retry_after: bool = False) -> bool:
        """``is_retry_status`` under urllib3's name, for code that asks an adapter's
        ``max_retries`` as it would urllib3's ``Retry`` (responses does)."""
        return self.is_retry_status(method, status_code, has_retry_after)

    def increment(self, *, error: RequestError | None = None) -> Retry | None:
        """The policy after one more retry (for ``error``, or a status when ``None``), or
        ``None`` when that retry is not allowed any more."""
        new = self._copy()
        new.retries_done += 1
        if new.total is not None:
            new.total -= 1
        if error is None:
            if new.status is not None:
                new.status -= 1
        elif isinstance(error, _CONNECT_ERRORS):
            if new.connect is not None:
                new.connect -= 1
        elif new.read is not None:
            new.read -= 1
        counts = (new.total, new.connect, new.read, new.status)
        if any(c is not None and c < 0 for c in counts):
            return None
        return new

    def backoff_time(self) -> float:
        """Seconds to wait before the next attempt: none before the first retry."""
        if self.retries_done <= 1 or self.backoff_factor == 0:
            return 0.0
        return float(min(self.backoff_max, self.backoff_factor * 2 ** (self.retries_done - 1)))

    def wait_for(self, retry_after: str | None) -> float:
        """Seconds to wait before retrying after a response whose ``Retry-After`` header is
        ``retry_after``: that value when respected (at most ``RETRY_AFTER_MAX_SECONDS``),
        else the backoff."""
        if self.respect_retry_after and retry_after is not None:
            seconds = parse_retry_after(retry_after)
            if seconds is not None:
                return min(seconds, RETRY_AFTER_MAX_SECONDS)
        return self.backoff_time()

    def _copy(self) -> Retry:
        new = object.__new__(Retry)
        for name in Retry.__slots__:
            setattr(new, name, getattr(self, name))
        return new


def parse_retry_after(value: str) -> float | None:
    """Seconds from a ``Retry-After`` value: delay-seconds or an HTTP date (RFC 9110
    §10.2.3); ``None`` when it is neither."""
    value = value.strip()
    if value.isdigit():
        return float(value)
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        return None
    import time

    return max(0.0, when.timestamp() - time.time())


def build_retry(retries: RetryTypes) -> Retry | None:
    """``Client(retries=)``: an int is ``Retry(total=n)`` like urllib3's ``from_int``
    (0 or ``None``: no retries)."""
    if retries is None or isinstance(retries, Retry):
        return retries
    if isinstance(retries, bool) or not isinstance(retries, int):
        raise TypeError(f"retries must be an int or a Retry, got {type(retries).__name__}")
    if retries < 0:
        raise ValueError(f"retries must be >= 0, got {retries}")
    return Retry(total=retries) if retries else None
