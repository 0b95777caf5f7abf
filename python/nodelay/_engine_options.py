"""The settings of the engine (``_core.EngineOptions``) for a client's or a transport's
arguments: pool limits, rate limit, TLS, proxy, HTTP/2 mode. ``BaseClient`` and ``HTTPTransport``
both build their engine from it.
"""

from __future__ import annotations

from . import _core
from ._config import RateLimit, tls_engine_options
from ._proxy import engine_proxy_options

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Literal

    from ._config import CertTypes, Limits, VerifyTypes
    from ._proxy import ProxyTypes

__all__ = ["engine_options_for"]

_HTTP2_MODES: dict[bool | str, Literal["off", "negotiate", "prior_knowledge"]] = {
    False: "off",
    True: "negotiate",
    "prior_knowledge": "prior_knowledge",
}
"""``Client(http2=...)`` → the engine's HTTP/2 mode."""


def engine_options_for(
    limits: Limits,
    verify: VerifyTypes,
    cert: CertTypes | None,
    max_decoded_size: int | None,
    proxy: ProxyTypes | None,
    trust_env: bool,
    http2: bool | str,
    uds: str | None = None,
    local_address: str | None = None,
    rate_limit: RateLimit | None = None,
) -> _core.EngineOptions:
    """The settings of ``_core.Engine`` / ``_core.AsyncEngine`` for a client's or a
    transport's arguments (both engines take the same ``_core.EngineOptions``); a bad
    ``http2`` raises ValueError."""
    if not isinstance(http2, (bool, str)) or http2 not in _HTTP2_MODES:
        raise ValueError(f"http2 must be True, False or 'prior_knowledge', got {http2!r}")
    if rate_limit is not None and not isinstance(rate_limit, RateLimit):
        kind = type(rate_limit).__name__
        raise TypeError(f"rate_limit must be a nodelay.RateLimit or None, not {kind}")
    return _core.EngineOptions(
        max_connections=limits.max_connections,
        max_keepalive=limits.max_keepalive_connections,
        keepalive_expiry=limits.keepalive_expiry,
        max_decoded_size=(
            _core.DEFAULTS["max_decoded_size"] if max_decoded_size is None else max_decoded_size
        ),
        **tls_engine_options(verify, cert, trust_env),
        **engine_proxy_options(proxy, trust_env),
        http2=_HTTP2_MODES[http2],
        uds=uds,
        local_address=local_address,
        max_connections_per_host=limits.max_connections_per_host,
        **(rate_limit.engine_options() if rate_limit is not None else {}),
    )
