"""Defaults, ``Timeout``, ``Limits`` and ``RateLimit``.

Every default is a named constant with its unit and reason (see docs/hostile.md: all
timeouts are finite, so a silent peer can never hang a program forever).
"""

from __future__ import annotations

import errno

from ._core import DEFAULTS as _DEFAULTS
from ._env import getenv

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeAlias

    from ._core import TimeoutTuple

    TimeoutTypes: TypeAlias = "float | tuple[float | None, float | None] | Timeout | None"
    from os import PathLike
    from ssl import SSLContext

    # ``verify=``: True (system trust store), False (no verification), a CA bundle path or
    # an ``ssl.SSLContext`` whose trust anchors are used (``_tls.py``).
    VerifyTypes: TypeAlias = "bool | str | PathLike[str] | SSLContext"
    # ``cert=``: a PEM file with certificate and key, or a (certificate, key) pair of paths.
    CertTypes: TypeAlias = "str | PathLike[str] | tuple[str | PathLike[str], str | PathLike[str]]"

__all__ = [
    "DEFAULT_CONNECT_TIMEOUT",
    "DEFAULT_KEEPALIVE_EXPIRY",
    "DEFAULT_MAX_CONNECTIONS",
    "DEFAULT_MAX_KEEPALIVE",
    "DEFAULT_MAX_REDIRECTS",
    "DEFAULT_POOL_TIMEOUT",
    "DEFAULT_READ_TIMEOUT",
    "DEFAULT_WRITE_TIMEOUT",
    "Limits",
    "RateLimit",
    "Timeout",
]

# The one table of client defaults is crates/nodelay-front/src/defaults.rs (each value's
# unit and reason are written there); the C ABI and the engine's own signatures read it too.
DEFAULT_CONNECT_TIMEOUT: float = _DEFAULTS["connect_timeout"]
"""Seconds to establish a TCP connection."""

DEFAULT_READ_TIMEOUT: float = _DEFAULTS["read_timeout"]
"""Seconds of read *inactivity* (between two received bytes), not a total deadline."""

DEFAULT_WRITE_TIMEOUT: float = _DEFAULTS["write_timeout"]
"""Seconds a write may block (peer not reading)."""

DEFAULT_POOL_TIMEOUT: float = _DEFAULTS["pool_timeout"]
"""Seconds to wait for a free connection when ``max_connections`` are all busy."""

DEFAULT_MAX_REDIRECTS: int = _DEFAULTS["max_redirects"]
"""Redirects followed before ``TooManyRedirects``."""

DEFAULT_MAX_CONNECTIONS: int = _DEFAULTS["max_connections"]
"""Connections per client (busy + idle), over all origins."""

DEFAULT_MAX_KEEPALIVE: int = _DEFAULTS["max_keepalive"]
"""Idle connections kept in the pool for reuse (httpx's default; docs/pool.md,
"Keep-alive default", says why it is below ``DEFAULT_MAX_CONNECTIONS``)."""

DEFAULT_KEEPALIVE_EXPIRY: float = _DEFAULTS["keepalive_expiry"]
"""Seconds an idle connection stays pooled."""


class _Unset:
    """Sentinel type for "argument not given" (``None`` means "no timeout")."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "UNSET"

    def __reduce__(self) -> str:
        return "UNSET"


UNSET = _Unset()


class Timeout:
    """Deadlines for one request, in seconds; ``None`` disables one.

    - ``Timeout()`` uses the defaults (connect 10 s, read 30 s, write 30 s, pool 30 s, no total).
    - ``Timeout(5.0)`` sets connect, read, write and pool to 5 s; keywords override:
      ``Timeout(5.0, connect=1.0)``.
    - ``Timeout(None)`` disables every deadline.
    - ``Timeout((connect, read))`` is the requests-style pair.
    - ``Timeout(other_timeout)`` copies one.

    ``read`` bounds the wait for the whole response head once the request is sent, then each
    read of the body (inactivity); ``total`` (off unless given) bounds the whole request,
    from the first connect attempt to the last body byte (docs/timeouts.md).
    """

    __slots__ = ("connect", "pool", "read", "total", "write")

    connect: float | None
    read: float | None
    write: float | None
    pool: float | None
    total: float | None

    def __init__(
        self,
        timeout: TimeoutTypes | _Unset = UNSET,
        *,
        connect: float | _Unset | None = UNSET,
        read: float | _Unset | None = UNSET,
        write: float | _Unset | None = UNSET,
        pool: float | _Unset | None = UNSET,
        total: float | None = None,
    ) -> None:
        base: tuple[float | None, float | None, float | None, float | None]
        if isinstance(timeout, _Unset):
            base = (
                DEFAULT_CONNECT_TIMEOUT,
                DEFAULT_READ_TIMEOUT,
                DEFAULT_WRITE_TIMEOUT,
                DEFAULT_POOL_TIMEOUT,
            )
        elif isinstance(timeout, Timeout):
            base = (timeout.connect, timeout.read, timeout.write, timeout.pool)
            if total is None:
                total = timeout.total
        elif isinstance(timeout, tuple):
            if len(timeout) != 2:
                raise TypeError(
                    f"a timeout tuple must be (connect, read), got {len(timeout)} items"
                )
            base = (
                _seconds(timeout[0]),
                _seconds(timeout[1]),
                DEFAULT_WRITE_TIMEOUT,
                DEFAULT_POOL_TIMEOUT,
            )
        else:
            t = _seconds(timeout)
            base = (t, t, t, t)
        self.connect = base[0] if isinstance(connect, _Unset) else _seconds(connect)
        self.read = base[1] if isinstance(read, _Unset) else _seconds(read)
        self.write = base[2] if isinstance(write, _Unset) else _seconds(write)
        self.pool = base[3] if isinstance(pool, _Unset) else _seconds(pool)
        self.total = _seconds(total)

    def as_tuple(
        self,
    ) -> tuple[float | None, float | None, float | None, float | None, float | None]:
        """``(connect, read, write, pool, total)``, the form the engine takes."""
        return (self.connect, self.read, self.write, self.pool, self.total)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Timeout):
            return NotImplemented
        return self.as_tuple() == other.as_tuple()

    def __hash__(self) -> int:
        return hash(self.as_tuple())

    def __repr__(self) -> str:
        c, r, w, p, t = self.as_tuple()
        if c == r == w == p and t is None:
            return f"Timeout(timeout={c})"
        extra = "" if t is None else f", total={t}"
        return f"Timeout(connect={c}, read={r}, write={w}, pool={p}{extra})"

    def __getstate__(self) -> tuple[float | None, ...]:
        return self.as_tuple()

    def __setstate__(self, state: tuple[float | None, ...]) -> None:
        self.connect, self.read, self.write, self.pool, self.total = state


def _seconds(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"a timeout must be a number of seconds or None, got {value!r}")
    if value < 0:
        raise ValueError(f"a timeout cannot be negative, got {value!r}")
    return float(value)


def timeout_tuple(timeout: TimeoutTypes | _Unset) -> TimeoutTuple:
    """The engine tuple for a ``timeout=`` argument (``UNSET`` means the defaults)."""
    if isinstance(timeout, Timeout):
        return timeout.as_tuple()
    return Timeout(timeout).as_tuple()


class Limits:
    """Connection pool limits (``None`` means unbounded).

    ``max_connections``: connections per client, busy or idle; when all are busy a request
    waits up to the pool timeout. ``max_keepalive_connections`` (alias ``max_keepalive``):
    idle connections kept for reuse. ``keepalive_expiry``: seconds an idle connection is kept.
    ``max_connections_per_host``: connections open at once to one origin (scheme, host,
    port), busy, idle and being opened; a request beyond it waits as for
    ``max_connections`` (``PoolTimeout`` naming the host and the limit). Default unbounded.
    """

    __slots__ = (
        "keepalive_expiry",
        "max_connections",
        "max_connections_per_host",
        "max_keepalive_connections",
    )

    max_connections: int | None
    max_keepalive_connections: int | None
    keepalive_expiry: float | None
    max_connections_per_host: int | None

    def __init__(
        self,
        max_connections: int | None = DEFAULT_MAX_CONNECTIONS,
        max_keepalive_connections: int | None = DEFAULT_MAX_KEEPALIVE,
        keepalive_expiry: float | None = DEFAULT_KEEPALIVE_EXPIRY,
        *,
        max_keepalive: int | _Unset | None = UNSET,
        max_connections_per_host: int | None = None,
    ) -> None:
        if not isinstance(max_keepalive, _Unset):
            max_keepalive_connections = max_keepalive
        for name, value in (
            ("max_connections", max_connections),
            ("max_keepalive_connections", max_keepalive_connections),
            ("keepalive_expiry", keepalive_expiry),
        ):
            if value is not None and (isinstance(value, bool) or value < 0):
                raise ValueError(f"{name} must be a non-negative number or None, got {value!r}")
        if max_connections_per_host is not None and (
            not isinstance(max_connections_per_host, int)
            or isinstance(max_connections_per_host, bool)
            or max_connections_per_host < 1
        ):
            raise ValueError(
                f"max_connections_per_host must be an int of at least 1 or None, "
                f"got {max_connections_per_host!r}"
            )
        self.max_connections = max_connections
        self.max_keepalive_connections = max_keepalive_connections
        self.keepalive_expiry = keepalive_expiry
        self.max_connections_per_host = max_connections_per_host

    @property
    def max_keepalive(self) -> int | None:
        """Alias of ``max_keepalive_connections``."""
        return self.max_keepalive_connections

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Limits):
            return NotImplemented
        return (
            self.max_connections == other.max_connections
            and self.max_keepalive_connections == other.max_keepalive_connections
            and self.keepalive_expiry == other.keepalive_expiry
            and self.max_connections_per_host == other.max_connections_per_host
        )

    def __hash__(self) -> int:
        return hash(
            (
                self.max_connections,
                self.max_keepalive_connections,
                self.keepalive_expiry,
                self.max_connections_per_host,
            )
        )

    def __repr__(self) -> str:
        per_host = (
            ""
            if self.max_connections_per_host is None
            else f", max_connections_per_host={self.max_connections_per_host}"
        )
        return (
            f"Limits(max_connections={self.max_connections}, "
            f"max_keepalive_connections={self.max_keepalive_connections}, "
            f"keepalive_expiry={self.keepalive_expiry}{per_host})"
        )


class RateLimit:
    """How many requests a client starts per second: ``Client(rate_limit=RateLimit(...))``.

    ``per_second``: the long-run rate (a number above 0). ``burst``: requests that may start
    at once after a quiet spell; default a fifth of a second's worth of ``per_second``, at
    least 1, so no window of a second or two sees much more than the rate. ``per_host``
    (default True): each origin (scheme, host, port) has its own budget; False: one budget
    for all the client's requests. Every request takes one token (HTTP/2 streams, redirects
    and retries included); a request that finds none waits for its turn, up to the pool
    timeout (``PoolTimeout`` at once when its turn would come later). The engine computes
    the tokens from the monotonic clock at each request: no timer thread.
    """

    __slots__ = ("burst", "per_host", "per_second")

    per_second: float
    burst: int | None
    per_host: bool

    def __init__(
        self, per_second: float, burst: int | None = None, *, per_host: bool = True
    ) -> None:
        if (
            isinstance(per_second, bool)
            or not isinstance(per_second, int | float)
            or not per_second > 0
            or per_second == float("inf")
        ):
            raise ValueError(f"per_second must be a number above 0, got {per_second!r}")
        if burst is not None and (
            isinstance(burst, bool) or not isinstance(burst, int) or burst < 1
        ):
            raise ValueError(f"burst must be an int of at least 1 or None, got {burst!r}")
        self.per_second = float(per_second)
        self.burst = burst
        self.per_host = bool(per_host)

    def engine_options(self) -> dict[str, Any]:
        """The engine's keywords for this limit (``_core.EngineOptions``)."""
        return {
            "rate_per_second": self.per_second,
            "rate_burst": self.burst,
            "rate_per_host": self.per_host,
        }

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RateLimit):
            return NotImplemented
        return (self.per_second, self.burst, self.per_host) == (
            other.per_second,
            other.burst,
            other.per_host,
        )

    def __hash__(self) -> int:
        return hash((self.per_second, self.burst, self.per_host))

    def __repr__(self) -> str:
        return (
            f"RateLimit(per_second={self.per_second}, burst={self.burst}, per_host={self.per_host})"
        )


def _is_ssl_context(value: object) -> bool:
    """Whether ``value`` is an ``ssl.SSLContext`` (``ssl`` is imported only then)."""
    import ssl

    return isinstance(value, ssl.SSLContext)


SSL_CERT_FILE_ENV = "SSL_CERT_FILE"
"""With ``trust_env`` and ``verify=True``: a CA bundle that replaces the system trust store
(OpenSSL's variable; httpx reads it the same way)."""

SSL_CERT_DIR_ENV = "SSL_CERT_DIR"
"""With ``trust_env`` and ``verify=True``, when ``SSL_CERT_FILE`` is unset: a directory of
CA certificates that replaces the system trust store (OpenSSL's ``CApath``)."""


def _ca_location(path: str, what: str) -> dict[str, Any]:
    """``ca_file`` or ``ca_dir`` for a CA bundle file or a directory of certificates; a
    path that is neither raises ``FileNotFoundError`` naming it (httpx raises that type
    when the client is built; the engine would only find out at the first https
    request)."""
    import os

    if os.path.isdir(path):
        return {"ca_dir": path}
    if os.path.exists(path):
        return {"ca_file": path}
    raise FileNotFoundError(errno.ENOENT, f"{what}: no such CA bundle file or directory", path)


def _existing_file(path: str, what: str) -> str:
    """``path`` when it exists, else ``FileNotFoundError`` naming it."""
    import os

    if not os.path.exists(path):
        raise FileNotFoundError(errno.ENOENT, f"{what}: no such file", path)
    return path


def tls_engine_options(verify: object, cert: object, trust_env: bool = True) -> dict[str, Any]:
    """Translate requests/httpx-style ``verify=``/``cert=`` into the engine's TLS keywords.

    A CA bundle given as ``verify="ca.pem"`` (or a directory of certificates) replaces the
    system trust store (as with curl's ``--cacert`` / ``--capath``). With ``verify=True``
    and ``trust_env``, ``SSL_CERT_FILE`` (else ``SSL_CERT_DIR``) does the same, read now,
    as httpx reads them; the engine itself never looks at them for this package. A path
    that does not exist raises ``FileNotFoundError`` here. TLS settings belong to a
    Client: its pool never mixes connections made with different settings.
    """
    import os

    options: dict[str, Any] = {"trust_store_env": False}
    if isinstance(verify, bool):
        options["verify"] = verify
        if verify and trust_env:
            env_file, env_dir = getenv(SSL_CERT_FILE_ENV), getenv(SSL_CERT_DIR_ENV)
            if env_file:
                options.update(_ca_location(env_file, f"${SSL_CERT_FILE_ENV}"))
            elif env_dir:
                options.update(_ca_location(env_dir, f"${SSL_CERT_DIR_ENV}"))
    elif isinstance(verify, str | os.PathLike):
        options["verify"] = True
        options.update(_ca_location(os.fspath(verify), "verify="))
    elif _is_ssl_context(verify):
        from ._tls import context_options

        options.update(context_options(verify))  # type: ignore[arg-type]  # checked above
    else:
        kind = type(verify).__name__
        raise TypeError(
            f"verify must be a bool, a path to a CA bundle or an ssl.SSLContext, not {kind}"
        )
    if cert is None:
        return options
    if isinstance(cert, tuple) and len(cert) == 2:
        options["cert_file"] = _existing_file(os.fspath(cert[0]), "cert= certificate")
        options["key_file"] = _existing_file(os.fspath(cert[1]), "cert= key")
    elif isinstance(cert, str | os.PathLike):
        options["cert_file"] = _existing_file(os.fspath(cert), "cert=")
    else:
        raise TypeError("cert must be a path or a (certificate, key) pair of paths")
    return options
