"""The logic of one logical request, without I/O: auth challenge rounds, then redirects,
and around each exchange the event hooks and the cookie jar.

A flow is a generator. It yields a ``Send`` for every exchange the client must perform and
receives each ``Response`` back (``flow.send(response)``); an engine error is thrown in
(``flow.throw(exc)``), where a retry policy may answer it with another ``Send``. It may
also yield an operation tuple (``AUTH``, an auth flow the driver steps), which ``steps``
passes on to the driver. Its return value is the final ``Response``.

``steps`` turns a flow into the I/O operations themselves: it yields one tuple per
operation (``EXCHANGE`` an engine call, ``HOOK`` an event hook, ``DISCARD`` a body to read
to its end, ``WAIT`` a backoff, ``TRANSPORT`` a transport call, ``AUTH`` an auth flow's
step), receives each outcome back and returns the final ``Response``. ``Client._drive``
performs the operations with blocking calls and ``AsyncClient._drive`` with ``await``:
those two loops are the only code that differs, so redirects, credentials, auth, retries,
hooks and cookies behave identically in both.

``Timeout(total=)`` is the budget of the whole logical request, every hop, auth round and
retry included: the drivers start one ``deadline`` (``flow_deadline``) and give each
exchange the client's timeouts with its total cut to what is left (``attempt_timeouts``),
so the engine raises the timeout of the phase that was running when the budget ran out.
Retry waits never run past it either (``Retrying.fits``).
"""

from __future__ import annotations

import time

from ._auth import Auth as _BaseAuth
from ._core import Upload
from ._exceptions import RequestError, TooManyRedirects, UnsupportedProtocol
from ._models import Request, _DetachedRaw, _response_from_raw
from ._prepare import DEFAULT_PORTS
from ._redirects import REDIRECT_STATUSES, next_hop
from ._streaming import IterStream

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Generator, Mapping
    from typing import Any, TypeAlias

    from ._auth import Auth
    from ._base import BaseClient
    from ._core import TimeoutTuple
    from ._models import Response
    from ._prepare import Pairs
    from ._retry import Retry
    from ._upload import Body

    Steps: TypeAlias = "Generator[tuple[Any, ...], Any, Response]"
    """What ``steps`` yields (operations), receives (their outcomes) and returns."""

__all__ = [
    "AUTH",
    "DISCARD",
    "EXCHANGE",
    "HOOK",
    "TRANSPORT",
    "WAIT",
    "Retrying",
    "Send",
    "async_auth_step",
    "attempt_timeouts",
    "flow_deadline",
    "redirect_flow",
    "request_flow",
    "steps",
    "sync_auth_step",
    "timeout_extension",
]


class Send:
    """One exchange the driver must perform.

    ``cookies``: per-request cookies merged over the jar's. ``discard``: a previous
    response whose body the driver reads first, so its connection goes back to the pool
    (an answered auth challenge, a redirect hop). ``delay``: seconds to wait first (a
    retry's backoff), usually 0.
    """

    __slots__ = ("body", "cookies", "delay", "discard", "method", "pairs", "url")

    def __init__(
        self,
        method: str,
        url: str,
        pairs: Pairs,
        body: Body | None,
        cookies: Mapping[str, str] | None,
        discard: Response | None = None,
        delay: float = 0.0,
    ) -> None:
        self.method = method
        self.url = url
        self.pairs = pairs
        self.body = body
        self.cookies = cookies
        self.discard = discard
        self.delay = delay


def flow_deadline(ttuple: TimeoutTuple, started: float | None = None) -> float | None:
    """The ``time.monotonic()`` instant a whole request must end by: ``started`` (now when
    ``None``) plus the ``Timeout(total=)`` of ``ttuple``; ``None`` without a total."""
    total = ttuple[4]
    if total is None:
        return None
    return (time.monotonic() if started is None else started) + total


def attempt_timeouts(ttuple: TimeoutTuple, deadline: float | None) -> TimeoutTuple:
    """The timeouts of one exchange of a request that must end by ``deadline``: its own,
    with the total cut to what is left (0 once spent: the engine then fails the first
    phase with that phase's timeout error, before sending anything), followed by the
    configured total, which the engine's timeout messages name."""
    if deadline is None:
        return ttuple
    left = deadline - time.monotonic()
    return (ttuple[0], ttuple[1], ttuple[2], ttuple[3], left if left > 0.0 else 0.0, ttuple[4])


def timeout_extension(ttuple: TimeoutTuple) -> dict[str, float | None]:
    """``request.extensions["timeout"]`` for a timeout tuple (httpx's four keys)."""
    return {"connect": ttuple[0], "read": ttuple[1], "write": ttuple[2], "pool": ttuple[3]}


def request_flow(
    method: str,
    url: str,
    pairs: Pairs,
    body: Body | None,
    cookies: Mapping[str, str] | None,
    auth: Auth | None,
    max_redirects: int | None,
    retrying: Retrying | None = None,
) -> Generator[Send, Response, Response]:
    """The whole request: auth rounds, then (when ``max_redirects`` is not ``None``) the
    redirect chain, at most ``max_redirects`` hops; with ``retrying``, every exchange may
    be sent again by its ``Retry`` policy (one budget for the whole request)."""
    if auth is None:
        response = yield from exchange(Send(method, url, pairs, body, cookies), retrying)
    else:
        response, method, url, pairs, body = yield from _auth_rounds(
            auth, method, url, pairs, body, cookies, retrying
        )
    if max_redirects is not None and response._raw.status in REDIRECT_STATUSES:
        response = yield from redirect_flow(
            max_redirects, response, method, url, pairs, body, cookies, retrying
        )
    return response


class Retrying:
    """A request's retry state: its ``Retry`` (replaced by each retry's decremented copy)
    and the deadline no wait may run past (the ``Timeout(total=)``, from the start)."""

    __slots__ = ("deadline", "retry")

    def __init__(self, retry: Retry, total: float | None) -> None:
        self.retry = retry
        self.deadline = None if total is None else time.monotonic() + total

    def fits(self, delay: float) -> bool:
        """Whether waiting ``delay`` seconds still leaves time before the deadline."""
        return self.deadline is None or time.monotonic() + delay < self.deadline


def _replayable(body: Body | None) -> bool:
    return type(body) is not Upload or body.replayable


def exchange(send: Send, retrying: Retrying | None) -> Generator[Send, Response, Response]:
    """One exchange, sent again while its ``Retry`` policy says so: a thrown error is
    re-raised when it is not retried (the last one when retries run out); a retried status
    comes back as the last response once retries run out (``raise_on_status=False``)."""
    if retrying is None:
        return (yield send)
    while True:
        try:
            response = yield send
        except RequestError as exc:
            retry = retrying.retry
            if not retry.is_retry_error(send.method, exc) or not _replayable(send.body):
                raise
            after = retry.increment(error=exc)
            if after is None:
                raise
            delay = after.backoff_time()
            if not retrying.fits(delay):
                raise
            retrying.retry = after
            send = Send(send.method, send.url, send.pairs, send.body, send.cookies, None, delay)
            continue
        retry = retrying.retry
        raw = response._raw
        retry_after = raw.header("retry-after")
        if not retry.is_retry_status(send.method, raw.status, retry_after is not None):
            return response
        after = retry.increment()
        if after is None or not _replayable(send.body):
            return response
        delay = after.wait_for(retry_after)
        if not retrying.fits(delay):
            return response
        retrying.retry = after
        # The refused response's body is read first so its connection is reused.
        send = Send(send.method, send.url, send.pairs, send.body, send.cookies, response, delay)


def _auth_rounds(
    auth: Auth,
    method: str,
    url: str,
    pairs: Pairs,
    body: Body | None,
    cookies: Mapping[str, str] | None,
    retrying: Retrying | None,
) -> Generator[Any, Any, tuple[Response, str, str, Pairs, Body | None]]:
    """Run ``auth``'s flow; returns the last response and the request that got it. Each
    answered challenge goes to the final response's ``history`` (httpx keeps it there).

    ``auth_flow`` itself runs here, with no I/O. An auth that reads bodies
    (``requires_request_body`` / ``requires_response_body``) or overrides
    ``sync_auth_flow`` / ``async_auth_flow`` is stepped by the driver instead (``AUTH``),
    which runs the method of its own kind: ``Client`` ``sync_auth_flow``, ``AsyncClient``
    ``async_auth_flow``."""
    request = Request._make(method, url, pairs, body)
    if type(body) is Upload and auth.requires_request_body:
        raise TypeError(
            f"{type(auth).__name__} requires the request body, which is streamed "
            "(an iterable or a file): pass it as bytes"
        )
    flow: Any = None
    cls = type(auth)
    driven = (
        auth.requires_request_body
        or auth.requires_response_body
        or cls.sync_auth_flow is not _BaseAuth.sync_auth_flow
        or cls.async_auth_flow is not _BaseAuth.async_auth_flow
    )
    if driven:
        flow, next_request = yield (AUTH, auth, None, request)
    else:
        flow = auth.auth_flow(request)
        next_request = next(flow)
    history: list[Response] = []
    answered: Response | None = None
    while True:
        request = next_request
        method, url = request.method, request.url
        pairs = request.headers._list
        if type(body) is not Upload and (body is not None or request.content):
            body = request.content  # an auth that signs or rewrites a bytes body
        # A challenge answered: its body is read so its connection serves the retry.
        response = yield from exchange(Send(method, url, pairs, body, cookies, answered), retrying)
        if driven:
            _, next_request = yield (AUTH, auth, flow, response)
        else:
            try:
                next_request = flow.send(response)
            except StopIteration:
                next_request = None
        if next_request is None:
            if history:
                response._history = history
            return response, method, url, pairs, body
        response._history = history[:]
        history.append(response)
        answered = response


def _auth_flow_of(auth: Auth, sync: bool) -> Any:
    """The flow ``Client`` (``sync``) or ``AsyncClient`` runs for ``auth``. An auth whose
    class overrides only the other client's method (and not ``auth_flow``) raises
    TypeError: sent without it, the request would silently lack its credentials."""
    cls = type(auth)
    own, other = (
        ("sync_auth_flow", "async_auth_flow") if sync else ("async_auth_flow", "sync_auth_flow")
    )
    if (
        getattr(cls, own) is getattr(_BaseAuth, own)
        and getattr(cls, other) is not getattr(_BaseAuth, other)
        and cls.auth_flow is _BaseAuth.auth_flow
    ):
        client = "Client" if sync else "AsyncClient"
        raise TypeError(
            f"{cls.__name__} overrides {other} but not {own}, which {client} uses: "
            f"override {own} (or auth_flow) too"
        )
    return getattr(auth, own)


def sync_auth_step(operation: tuple[Any, ...]) -> tuple[Any, Request | None]:
    """``Client``'s ``AUTH`` operation: start ``auth.sync_auth_flow(request)`` (no flow
    yet) or send it the response; returns the flow and the request it yields next
    (``None`` once it ends)."""
    _, auth, flow, value = operation
    if flow is None:
        flow = _auth_flow_of(auth, True)(value)
        return flow, next(flow)
    try:
        return flow, flow.send(value)
    except StopIteration:
        return flow, None


async def async_auth_step(operation: tuple[Any, ...]) -> tuple[Any, Request | None]:
    """``AsyncClient``'s ``AUTH`` operation: ``sync_auth_step`` over
    ``auth.async_auth_flow``."""
    _, auth, flow, value = operation
    if flow is None:
        flow = _auth_flow_of(auth, False)(value)
        return flow, await flow.__anext__()
    try:
        return flow, await flow.asend(value)
    except StopAsyncIteration:
        return flow, None


def redirect_flow(
    max_redirects: int,
    response: Response,
    method: str,
    url: str,
    pairs: Pairs,
    body: Body | None,
    cookies: Mapping[str, str] | None = None,
    retrying: Retrying | None = None,
) -> Generator[Send, Response, Response]:
    """Follow ``response``'s redirect chain (http/https only, at most ``max_redirects``).
    A 307/308 sends the body again: a streamed body that cannot be rewound then raises
    ``StreamConsumed`` when it is sent (httpx's behaviour)."""
    # Challenges an auth answered come first (``_auth_rounds``); they are not hops.
    history: list[Response] = list(response._history) if response._history else []
    answered = len(history)
    while True:
        raw = response._raw
        status = raw.status
        if status not in REDIRECT_STATUSES:
            break
        location = raw.header("location")
        if location is None:
            break
        if len(history) - answered >= max_redirects:
            raise TooManyRedirects(
                f"Exceeded the maximum of {max_redirects} redirects",
                request=response._request_or_none(),
                url=url,
                history=[*history, response],
            )
        method, next_url, pairs, body, leaves = next_hop(status, method, url, location, pairs, body)
        scheme = next_url.partition(":")[0].lower() if ":" in next_url else ""
        if scheme not in DEFAULT_PORTS:
            raise UnsupportedProtocol(
                f"Refusing to follow a redirect to {next_url!r}: only http and https are allowed",
                request=response._request_or_none(),
                url=next_url,
            )
        if leaves:
            cookies = None  # per-request cookies stay with the first origin too
        response._history = history[:]
        history.append(response)
        url = next_url
        # The hop's (small) body is read first so its connection is reused.
        response = yield from exchange(Send(method, url, pairs, body, cookies, response), retrying)
    response._history = history
    return response


# -- the I/O operations of a flow (what the two drivers perform) ------------------------------

EXCHANGE = 0
"""``(EXCHANGE, stream, method, url, pairs, body, ttuple)``: ``engine.open`` (``stream``)
or ``engine.request`` with the other items as arguments; the outcome is what the engine
returns, awaited by ``AsyncClient``."""
HOOK = 1
"""``(HOOK, hook, argument)``: call an event hook (``AsyncClient`` awaits what it returns
when that is awaitable); the outcome is ignored."""
DISCARD = 2
"""``(DISCARD, response)``: read ``response``'s body to its end (``read`` / ``aread``), so
its connection goes back to the pool."""
WAIT = 3
"""``(WAIT, seconds)``: sleep (``time.sleep`` / ``asyncio.sleep``), a retry's backoff."""
TRANSPORT = 4
"""``(TRANSPORT, transport, request)``: ``transport.handle_request(request)`` /
``await transport.handle_async_request(request)``; the outcome is the ``Response``."""
AUTH = 5
"""``(AUTH, auth, flow, value)``: one step of an auth flow the driver runs
(``sync_auth_step`` / ``await async_auth_step``): with ``flow`` None, start the auth's
``sync_auth_flow`` / ``async_auth_flow`` on the request ``value``, else send it the
response ``value``; the outcome is ``(flow, next request or None)``."""


def steps(
    client: BaseClient,
    flow: Send | Generator[Send, Response, Response],
    ttuple: TimeoutTuple,
    stream: bool,
    started: float | None = None,
) -> Steps:
    """The operations of ``flow`` (or of its one ``Send``) for ``client``'s driver.
    ``Timeout(total=)`` bounds the whole flow from ``started`` (default: now). An error
    a driver gets while performing an operation is thrown back in where it was asked for,
    so retries, hooks and the ``request`` of an engine error are decided here."""
    if isinstance(flow, Send):
        return (yield from _exchange(client, flow, ttuple, stream))
    deadline = flow_deadline(ttuple, started)
    try:
        send = next(flow)
        while True:
            if isinstance(send, tuple):  # an operation of the flow's own (``AUTH``)
                try:
                    outcome = yield send
                except BaseException as exc:
                    send = flow.throw(exc)
                    continue
                send = flow.send(outcome)
                continue
            if send.discard is not None:
                yield (DISCARD, send.discard)
            if send.delay:
                yield (WAIT, send.delay)
            try:
                response = yield from _exchange(
                    client, send, attempt_timeouts(ttuple, deadline), stream
                )
            except RequestError as exc:
                send = flow.throw(exc)  # a retry policy may answer with another Send
                continue
            send = flow.send(response)
    except StopIteration as stop:
        result: Response = stop.value
        return result


def _exchange(client: BaseClient, send: Send, ttuple: TimeoutTuple, stream: bool) -> Steps:
    """One exchange with the engine; engine errors get ``request`` filled in. With
    ``stream`` the body is left on the connection (``client._stream_raw`` wraps it).

    The jar adds its ``Cookie`` header (merged with ``send.cookies``) and stores the
    response's Set-Cookie fields: one native call each way, both no-ops when the jar is
    empty and the response sets nothing. Event hooks run around it."""
    method, url, pairs, body = send.method, send.url, send.pairs, send.body
    hooks = client._event_hooks
    request: Request | None = None
    if hooks["request"] or hooks["response"]:
        request = Request._make(method, url, pairs, body)
        for hook in hooks["request"]:
            yield (HOOK, hook, request)
        if request._headers is not None:  # a hook may have changed the headers
            pairs = request._headers._list
    # The jar's Cookie and per-request cookies, unless the caller set a Cookie header
    # (nodelay-front's rule): one native call, the same list back when nothing is added.
    pairs = client._jar.request_headers(url, pairs, send.cookies)
    transport = client._transport_for(url) if client._routed else None
    if transport is not None:
        response = yield from _transport_exchange(client, transport, send, pairs, ttuple, stream)
    else:
        response = yield from _engine_exchange(client, send, pairs, ttuple, stream, request)
    if client._default_encoding is not None and response._encoding is None:
        response._encoding = client._default_encoding
    if request is not None and hooks["response"]:
        try:
            for hook in hooks["response"]:
                yield (HOOK, hook, response)
        except BaseException:
            response.close()
            raise
    return response


def _engine_exchange(
    client: BaseClient,
    send: Send,
    pairs: Pairs,
    ttuple: TimeoutTuple,
    stream: bool,
    request: Request | None,
) -> Steps:
    """The engine's exchange: its response wrapped, Set-Cookie stored in the jar."""
    method, url, body = send.method, send.url, send.body
    jar = client._jar
    ref = request if request is not None else (method, url, pairs, body)
    try:
        raw = yield (EXCHANGE, stream, method, url, pairs, body, ttuple)
        if jar.extract(raw):
            client._cookies._changed()
        response = _response_from_raw(client._stream_raw(raw) if stream else raw, ref)
    except RequestError as exc:
        if exc.request is None:
            exc.request = Request._make(method, url, pairs, body)
        raise
    return response


def _transport_exchange(
    client: BaseClient,
    transport: Any,
    send: Send,
    pairs: Pairs,
    ttuple: TimeoutTuple,
    stream: bool,
) -> Steps:
    """An exchange through a transport (``transport=``, ``mounts=``): it gets a
    ``Request`` (its timeouts in ``extensions["timeout"]``) and returns the ``Response``,
    whose Set-Cookie fields go to the jar. A streamed body (a file, an iterable) is in
    the request's ``_body`` for ``HTTPTransport``; its ``content`` is then empty."""
    if client.is_closed:
        raise RuntimeError(client._closed_engine._message)
    body = send.body
    request = Request._make(send.method, send.url, pairs, body)
    if body is not None and type(body) is not bytes:
        request._body = body
    request._extensions = {"timeout": timeout_extension(ttuple)}
    try:
        response: Response = yield (TRANSPORT, transport, request)
    except RequestError as exc:
        if exc.request is None:
            exc.request = request
        raise
    raw = response._raw
    if type(raw) is _DetachedRaw and not raw.url:
        raw.url = send.url
    elif type(raw) is IterStream:
        if not raw.url:
            raw.url = send.url
        if not stream:  # a body the transport streams is read, as the engine's is
            yield (DISCARD, response)
    response._request = request
    cookies = [value for name, value in raw.headers() if name.lower() == "set-cookie"]
    if cookies and client._jar.store(send.url, cookies):
        client._cookies._changed()
    return response
