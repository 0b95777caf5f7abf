"""``Client.get_many`` and ``Client.map``: many requests at once for sync code.

The requests are prepared here (base_url, params, headers, bodies: the same rules as
``Client.request``), then handed to the engine in one call (``_core.request_many``):
``concurrency`` tasks on the process's tokio runtime send them with the GIL released the
whole time, and the GIL is taken once at the end to build every response. HTTP/2
requests are multiplexed on the client's one connection per origin (the one
``Client.get`` uses); HTTP/1.1 ones go over the client's one keep-alive pool, the one
``Client.get`` uses too (bounded by the client's ``Limits``, so a batch and ``get()``
reuse each other's warm connections; docs/pool.md). A client with proxies sends its
batches from worker threads over that same pool.

What takes the per-request path instead (``Client.request`` and the request flow, run
one by one in the calling thread after the batch): requests with auth (the client's
``auth``), streamed uploads (iterables, files),
every request of a client with a ``Retry`` policy, event hooks, or a transport or mounts
it routes through, and redirect chains when redirects are followed (the first hop is sent
in the batch, the rest one by one). A client whose ``transport=`` is an ``HTTPTransport``
without retries uses that transport's engine for batches too, so its ``uds=`` and
``local_address=`` hold for them.

The jar's ``Cookie`` header is added by the engine in the worker (the jar is read when
each request starts and updated as each response arrives), so ``response.request.headers``
of a batch response does not show it.
"""

from __future__ import annotations

import time

from . import _core
from ._config import UNSET, _Unset, timeout_tuple
from ._exceptions import RequestError
from ._flow import redirect_flow, steps
from ._models import Request, _response_from_raw
from ._redirects import REDIRECT_STATUSES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any, TypeAlias

    from ._client import Client
    from ._config import TimeoutTypes
    from ._core import TimeoutTuple
    from ._models import Response
    from ._prepare import RequestHeaderTypes
    from ._upload import Body
    from ._urls import ParamTypes

    Pairs: TypeAlias = "list[tuple[str, str]]"
    # A streamed body (an ``Upload``) never reaches the engine batch (see ``_fallback``).
    Prepared: TypeAlias = "tuple[str, str, Pairs, Body | None]"
    RequestSpec: TypeAlias = "Request | tuple[str, str] | tuple[str, str, Mapping[str, Any]]"

__all__ = ["DEFAULT_CONCURRENCY", "get_many", "map_requests"]

DEFAULT_CONCURRENCY: int = _core.DEFAULTS["batch_concurrency"]
"""Requests in flight at once by default (crates/nodelay-front/src/defaults.rs): enough to
hide a LAN round trip behind the client's CPU work; over HTTP/1.1 one connection each (the
client's pool keeps up to ``Limits.max_keepalive_connections`` of them idle between
batches)."""

# Keyword arguments a ``(method, url, kwargs)`` item of ``Client.map`` may carry.
_MAP_KWARGS = frozenset(("params", "headers", "content", "data", "json"))


def _prepare(
    client: Client,
    method: str,
    url: str,
    *,
    params: ParamTypes | None = None,
    headers: RequestHeaderTypes | None = None,
    content: Any = None,
    data: Any = None,
    json: Any = None,
) -> Prepared:
    """``(method, url, headers, body)`` exactly as ``Client.request`` would send them."""
    return client._build_request(method, url, params, headers, content, data, json)


def _per_request_only(client: Client) -> bool:
    """A retry policy, event hooks, or a transport or mount the flow must route through
    (``transport=`` or ``mounts=``, other than an ``HTTPTransport`` whose engine the client
    adopted): every request takes the per-request path."""
    return (
        client._routed
        or client._retry is not None
        or bool(client._event_hooks["request"])
        or bool(client._event_hooks["response"])
    )


def _needs_auth(client: Client, url: str) -> bool:
    return client._auth is not None


def _run(
    client: Client,
    prepared: list[Prepared],
    fallback: dict[int, Any],
    concurrency: int,
    timeout: TimeoutTypes | _Unset,
    follow_redirects: bool | None,
    return_exceptions: bool,
) -> list[Any]:
    """Send ``prepared`` in one engine batch (except the indexes in ``fallback``, which
    map to a zero-argument callable sending that request the per-request way)."""
    if (
        isinstance(concurrency, bool)
        or not isinstance(concurrency, int)
        or not 1 <= concurrency <= _core.MAX_BATCH_CONCURRENCY
    ):
        raise ValueError(
            f"concurrency must be an int between 1 and {_core.MAX_BATCH_CONCURRENCY}, "
            f"got {concurrency!r}"
        )
    ttuple: TimeoutTuple = client._ttuple if timeout is UNSET else timeout_tuple(timeout)
    engine = client._engine
    if not isinstance(engine, _core.Engine):
        raise RuntimeError("Client is closed")
    jar = client._cookies
    batch = [p for i, p in enumerate(prepared) if i not in fallback] if fallback else prepared
    raws, all_ok, cookies_changed, any_3xx = _core.request_many(
        engine,
        batch,  # type: ignore[arg-type]  # only bytes bodies are left in the batch
        ttuple,
        concurrency=min(concurrency, max(1, len(batch))),
        jar=jar._jar,
        stop_on_error=not return_exceptions,
    )
    if cookies_changed:
        jar._changed()
    follow = client.follow_redirects if follow_redirects is None else follow_redirects
    if all_ok and not fallback and not (follow and any_3xx):
        # Every request answered, nothing left to do per item: each prepared tuple is
        # already the ``(method, url, pairs, body)`` reference a response keeps.
        return list(map(_response_from_raw, raws, prepared))  # type: ignore[arg-type]
    results: list[Any] = []
    raw_iter = iter(raws)
    first_error: BaseException | None = None
    for i, request in enumerate(prepared):
        if i in fallback:
            if first_error is not None:
                results.append(None)
                continue
            try:
                results.append(fallback[i]())
            except RequestError as exc:
                if not return_exceptions:
                    first_error = exc
                results.append(exc)
            continue
        raw = next(raw_iter)
        if raw is None:  # not sent: the batch stopped at a failure
            results.append(None)
            continue
        method, url, pairs, body = request
        if isinstance(raw, BaseException):
            if isinstance(raw, RequestError) and raw.request is None:
                raw.request = Request._make(method, url, pairs, body)
            if first_error is None and not return_exceptions:
                first_error = raw
            results.append(raw)
            continue
        response = _response_from_raw(raw, request)
        if follow and raw.status in REDIRECT_STATUSES and first_error is None:
            try:
                flow = redirect_flow(client.max_redirects, response, method, url, pairs, body)
                # The first hop's time counts against Timeout(total=) too.
                started = time.monotonic() - raw.elapsed
                response = client._drive(steps(client, flow, ttuple, False, started))
            except RequestError as exc:
                if not return_exceptions:
                    first_error = exc
                results.append(exc)
                continue
        results.append(response)
    if first_error is not None:
        raise first_error
    return results


def get_many(
    client: Client,
    urls: Iterable[str],
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
    params: ParamTypes | None = None,
    headers: RequestHeaderTypes | None = None,
    timeout: TimeoutTypes | _Unset = UNSET,
    follow_redirects: bool | None = None,
    return_exceptions: bool = False,
) -> list[Any]:
    """GET every URL, ``concurrency`` at a time; see ``Client.get_many``."""
    if isinstance(urls, str | bytes):
        raise TypeError("urls must be an iterable of URLs, not a single str")
    urls = list(urls)
    if params is None and headers is None and client._plain:
        # The common case: client defaults only. Every request shares one header list
        # (converted once by the engine).
        pairs = client._headers._list
        # ``with_query(u, [])`` inlined: the URL without its fragment (the same str object
        # when it has none, so the engine converts a URL repeated in the list once).
        prepared: list[Prepared] = [
            ("GET", (u if type(u) is str else str(u)).partition("#")[0], pairs, None) for u in urls
        ]
    else:
        prepared = [_prepare(client, "GET", u, params=params, headers=headers) for u in urls]
    fallback: dict[int, Any] = {}
    per_request = _per_request_only(client)
    if not client._auth_off or per_request:
        kwargs = {"params": params, "headers": headers}
        for i, (_, url, _, _) in enumerate(prepared):
            if per_request or _needs_auth(client, url):
                fallback[i] = _fallback(client, "GET", urls[i], kwargs, timeout, follow_redirects)
    return _run(
        client, prepared, fallback, concurrency, timeout, follow_redirects, return_exceptions
    )


def _fallback(
    client: Client,
    method: str,
    url: str,
    kwargs: Mapping[str, Any],
    timeout: TimeoutTypes | _Unset,
    follow_redirects: bool | None,
) -> Any:
    """A callable sending one request through ``Client.request`` (url is final)."""

    def send() -> Response:
        return client.request(
            method, url, timeout=timeout, follow_redirects=follow_redirects, **kwargs
        )

    return send


def _spec(item: RequestSpec) -> tuple[str, str, dict[str, Any]]:
    """``(method, url, kwargs)`` of one ``Client.map`` item."""
    if isinstance(item, Request):
        kwargs: dict[str, Any] = {"headers": item._pairs}
        if item.content:
            kwargs["content"] = item.content
        return item.method, item.url, kwargs
    if isinstance(item, tuple) and len(item) in (2, 3):
        method, url = item[0], item[1]
        kwargs = dict(item[2]) if len(item) == 3 else {}
        unknown = set(kwargs) - _MAP_KWARGS
        if unknown:
            raise TypeError(
                f"Client.map: unsupported request arguments {sorted(unknown)} "
                f"(allowed: {sorted(_MAP_KWARGS)})"
            )
        if not isinstance(method, str):
            raise TypeError(f"Client.map: method must be a str, got {method!r}")
        return method, url, kwargs
    raise TypeError(
        "Client.map items must be nodelay.Request objects or (method, url[, kwargs]) "
        f"tuples, got {item!r}"
    )


def map_requests(
    client: Client,
    requests: Iterable[RequestSpec],
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
    timeout: TimeoutTypes | _Unset = UNSET,
    follow_redirects: bool | None = None,
    return_exceptions: bool = False,
) -> list[Any]:
    """Send every request, ``concurrency`` at a time; see ``Client.map``."""
    prepared: list[Prepared] = []
    fallback: dict[int, Any] = {}
    auth_possible = not client._auth_off
    per_request = _per_request_only(client)
    for i, item in enumerate(requests):
        method, url, kwargs = _spec(item)
        prep = _prepare(client, method, url, **kwargs)
        prepared.append(prep)
        if (
            per_request
            or not isinstance(prep[3], (bytes, type(None)))  # a streamed upload
            or (auth_possible and _needs_auth(client, prep[1]))
        ):
            # The original arguments: Client.request prepares them again itself.
            fallback[i] = _fallback(client, method, url, kwargs, timeout, follow_redirects)
    return _run(
        client, prepared, fallback, concurrency, timeout, follow_redirects, return_exceptions
    )
