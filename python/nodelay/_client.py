"""``Client`` and ``Session``: a connection pool plus defaults, over the Rust engine.

The hot path is ``client.get(url)`` with no keyword arguments: it hands the engine the
precomputed default header list (the ``Headers`` object's internal list, which is never
mutated in place) and the precomputed timeout tuple, and wraps the result lazily. Anything
else (params, base_url, per-request headers or timeout, bodies, auth, redirects) builds a
request flow (``_flow.py``, shared with ``AsyncClient``) whose I/O ``_drive`` performs.
Construction, settings and request building are ``BaseClient``'s (``_base.py``).
"""

from __future__ import annotations

import time
from contextlib import contextmanager

from . import _core
from ._base import BaseClient, ClosedEngine, request_body, with_defaults
from ._config import UNSET, _Unset
from ._flow import (
    AUTH,
    DISCARD,
    EXCHANGE,
    HOOK,
    TRANSPORT,
    redirect_flow,
    steps,
    sync_auth_step,
)
from ._models import Request, Response
from ._prepare import _BODY_METHODS, _FORM, encode_body
from ._redirects import REDIRECT_STATUSES
from ._streaming import StreamRaw

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping
    from types import TracebackType
    from typing import Any, Literal, Self, TypeAlias, Unpack, overload

    from ._auth import AuthTypes
    from ._config import TimeoutTypes
    from ._exceptions import RequestError
    from ._flow import Steps
    from ._options import BodyOptions, RequestOptions
    from ._prepare import RequestHeaderTypes
    from ._upload import Body
    from ._urls import ParamTypes

    BatchItem: TypeAlias = "Request | tuple[str, str] | tuple[str, str, Mapping[str, Any]]"

__all__ = ["Client", "Session"]


_NO_BODY_ARGS = frozenset(
    (
        "params",
        "headers",
        "timeout",
        "follow_redirects",
        "allow_redirects",
        "cookies",
        "auth",
        "stream",
    )
)
"""Keyword arguments of ``get``/``head``/``options``/``delete``."""
_BODY_ARGS = _NO_BODY_ARGS | {"content", "data", "files", "json"}
"""Keyword arguments of ``post``/``put``/``patch``/``request``."""
_FAST_BODY_ARGS = frozenset(("content", "data", "json"))
"""The one keyword argument a call may give and still take the hot path."""
_NOTHING: frozenset[str] = frozenset()
_form_encode_dict = _core.form_encode_dict


def _method(
    method: str, fast_args: frozenset[str], allowed: frozenset[str], name: str
) -> Callable[..., Response]:
    """The run-time form of a request method (``Client.get`` ... ``Client.request``):
    ``**kwargs`` rather than keyword-only defaults, which CPython looks up in a dict one
    by one on every call, and the hot path inline (one Python frame per request).

    The hot path: client defaults plus at most one body argument of ``fast_args``
    (``content``, ``data`` or ``json``), so nothing to merge. Anything else (params,
    per-request headers or timeout, auth, retries, hooks, files, streaming) goes to
    ``Client._request``, which gives the same result the long way. ``allowed``: the
    keyword arguments of the method (``name`` in the error for another one)."""
    expects_body = method in _BODY_METHODS

    def call(client: Client, url: str, **kwargs: Any) -> Response:
        if (
            (kwargs and (len(kwargs) > 1 or not kwargs.keys() <= fast_args))
            or not client._plain
            or not client._auth_off
            or client._retry is not None
            or client._event_hooks["request"]
            or client._event_hooks["response"]
            or type(url) is not str
        ):
            unknown = kwargs.keys() - allowed
            if unknown:
                raise TypeError(f"{name}() got an unexpected keyword argument {min(unknown)!r}")
            return client._request(method, url, **kwargs)
        if "#" in url:
            url = url.partition("#")[0]
        pairs = client._headers._list
        body: Body | None = None
        if kwargs or expects_body:
            data = kwargs.get("data")
            # A dict of str (the usual form) is encoded in one native call.
            if type(data) is dict and (body := _form_encode_dict(data)) is not None:
                pairs = client._with_content_type(pairs, _FORM)
            else:
                body, content_type = encode_body(
                    method, kwargs.get("content"), data, kwargs.get("json")
                )
                if content_type is not None:
                    pairs = client._with_content_type(pairs, content_type)
        # One native call: the jar's Cookie header (none at once for an empty jar), the
        # exchange, Set-Cookie stored, the Response built, an error's request filled in.
        ttuple = client._ttuple
        response: Response = client._engine.fetch(
            method, url, pairs, body, ttuple, client._jar, client._cookies
        )
        if client.follow_redirects and response.status_code in REDIRECT_STATUSES:
            flow = redirect_flow(client.max_redirects, response, method, url, pairs, body)
            # The first hop's time counts against Timeout(total=) too.
            started = time.monotonic() - response._raw.elapsed
            return client._drive(steps(client, flow, ttuple, False, started))
        return response

    call.__name__ = name
    call.__qualname__ = f"Client.{name}"
    return call


_get = _method("GET", _NOTHING, _NO_BODY_ARGS, "get")
_head = _method("HEAD", _NOTHING, _NO_BODY_ARGS, "head")
_options = _method("OPTIONS", _NOTHING, _NO_BODY_ARGS, "options")
_delete = _method("DELETE", _NOTHING, _NO_BODY_ARGS, "delete")
_post = _method("POST", _FAST_BODY_ARGS, _BODY_ARGS, "post")
_put = _method("PUT", _FAST_BODY_ARGS, _BODY_ARGS, "put")
_patch = _method("PATCH", _FAST_BODY_ARGS, _BODY_ARGS, "patch")

_REQUEST_BY_METHOD: dict[str, Callable[..., Response]] = {}
"""``request``'s hot path per method name (upper case), made on first use."""
_REQUEST_METHODS_MAX = 32
"""Distinct method names remembered; past this the table starts again (a program
inventing method names pays one closure per call, as without the table)."""


def _request_call(client: Client, method: str, url: str, **kwargs: Any) -> Response:
    if type(method) is not str:
        return client._request(method, url, **kwargs)
    upper = method.upper()
    call = _REQUEST_BY_METHOD.get(upper)
    if call is None:
        if len(_REQUEST_BY_METHOD) >= _REQUEST_METHODS_MAX:
            _REQUEST_BY_METHOD.clear()
        call = _REQUEST_BY_METHOD[upper] = _method(upper, _FAST_BODY_ARGS, _BODY_ARGS, "request")
    return call(client, url, **kwargs)


class Client(BaseClient):
    """An HTTP client with a connection pool, default headers, params and timeout.

    ``base_url``: relative request URLs are joined onto it (its path kept, one ``/`` between).
    ``headers``: sent with every request after ``User-Agent: nodelay/<version>`` and
    ``Accept: */*`` (yours replace those by name, case-insensitively, in place); per-request
    headers replace client headers the same way, and a per-request ``None`` value drops one.
    ``params``: added to every request's query (per-request params of the same name win).
    ``timeout``: seconds, ``None``, a ``(connect, read)`` pair or a ``Timeout``; default
    ``Timeout()`` (connect 10 s, read/write/pool 30 s). ``follow_redirects`` (default False,
    httpx) and ``max_redirects`` (20). ``limits``: the pool's ``Limits`` (with
    ``max_connections_per_host``). ``rate_limit``: a ``RateLimit`` (requests started per
    second, per host by default; docs/pool.md), none by default.
    ``cookies``: a ``CookieJar`` (used as is, so several clients may share it) or a dict
    (cookies sent to every host); the jar stores every response's Set-Cookie and sends
    its cookies by RFC 6265 rules (``client.cookies``). ``auth``: a ``(user, password)``
    tuple (Basic), an ``Auth`` (``BasicAuth``, ``DigestAuth``, ``BearerAuth``) or a
    callable ``f(request) -> request``; ``.netrc`` credentials only with
    ``auth=NetRCAuth()`` (as in httpx). ``trust_env`` (default True): the proxy variables
    below and ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` (a CA bundle file or directory that
    replaces the system trust store when ``verify=True``) are read when the client is
    created; ``trust_env=False`` ignores them.
    ``retries``: an int (``Retry(total=n)``) or a ``Retry`` (urllib3's policy: connect
    failures for any method, read failures and ``status_forcelist`` statuses for idempotent
    methods, backoff and ``Retry-After`` within the ``Timeout(total=)``); default none.
    ``event_hooks``: ``{"request": [f, ...], "response": [g, ...]}`` as in httpx
    (``client.event_hooks``). ``max_decoded_size``: most bytes a compressed body may
    decode to (default 1 GiB), beyond which reading it raises ``DecodingError``.
    ``proxy``: ``"http://[user:password@]host:port"`` (or ``https://``: TLS to the proxy;
    or ``socks5://``, ``socks5h://``, ``socks4://``, ``socks4a://``: a SOCKS proxy) for http
    and https requests, or a mapping with ``"http"``/``"https"``/``"all"``/
    ``"no_proxy"`` keys; through an HTTP proxy, http requests are forwarded in absolute
    form, https ones go through a CONNECT tunnel (TLS with the origin inside it); through a
    SOCKS proxy, every request goes as over a direct connection. Without ``proxy`` and with
    ``trust_env``, ``http_proxy``/``https_proxy``/``all_proxy``/``no_proxy`` (lowercase
    first, then uppercase; uppercase ``HTTP_PROXY`` ignored under CGI) are read when the
    client is created; ``proxy`` wins over them. Proxy credentials go to the proxy only.
    ``http2``: ``False`` (default) speaks HTTP/1.1; ``True`` offers HTTP/2 by ALPN on https
    URLs and uses it when the server agrees (HTTP/1.1 otherwise; http URLs stay HTTP/1.1);
    ``"prior_knowledge"`` also speaks HTTP/2 in cleartext (h2c) to http URLs, for servers
    known to support it. The body plays no part: streamed bodies (iterators, files) go over
    HTTP/2 whenever the request does, sent as the server's flow-control windows allow, each
    wait for window bounded by the write timeout (docs/http2.md). HTTP/2 requests to one
    origin share one connection, whatever the number of threads; requests through an HTTP
    proxy use HTTP/1.1 (through a SOCKS proxy, HTTP/2 as on a direct connection);
    ``Response.http_version`` says which protocol answered.

    Thread safety: one ``Client`` may be shared by any number of threads; the pool is locked
    inside the engine and each request runs on its calling thread with the GIL released.
    Changing a client's settings while other threads send requests is not synchronised.

    Use it as a context manager, or call ``close()``; requests on a closed client raise
    ``RuntimeError("Client is closed")``.
    """

    _new_engine = _core.Engine
    _closed_engine = ClosedEngine("Client")
    _stream_raw = StreamRaw
    _engine: _core.Engine | ClosedEngine

    # -- lifecycle --------------------------------------------------------------------------

    def close(self) -> None:
        """Close every pooled connection and the client's transports; later requests
        raise ``RuntimeError``."""
        self._close_engine()
        for transport in self._transports():
            transport.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- sending ----------------------------------------------------------------------------

    def _request(self, method: str, url: str, *, stream: bool = False, **options: Any) -> Response:
        """Send a request and read the whole response.

        ``content`` (bytes, str sent as UTF-8, a binary file or an iterable of bytes, both
        streamed), ``data`` (a dict or pairs, form-encoded; str/bytes are sent as is) and
        ``json`` (compact JSON) are mutually exclusive; ``files`` (multipart/form-data,
        with ``data`` fields) as in requests/httpx, files streamed (see ``_upload``).
        ``allow_redirects`` is requests' name for ``follow_redirects``. ``cookies``: sent
        with this request only (merged over the jar's, by name; not on redirects).
        ``auth``: this request's auth, instead of the client's. ``stream=True`` (requests'
        name) returns before the body is read: iterate it with ``iter_bytes()``... and
        ``close()`` the response, or use ``client.stream()``.
        """
        flow, ttuple = self._build_flow(method, url, **options)
        return self._drive(steps(self, flow, ttuple, stream))

    def send(
        self,
        request: Request,
        *,
        stream: bool = False,
        auth: AuthTypes | None = None,
        follow_redirects: bool | None = None,
        timeout: TimeoutTypes | _Unset = UNSET,
    ) -> Response:
        """Send a ``Request`` (from ``build_request``, or made by hand with an absolute
        URL) with its headers and content as they are now, plus the jar's cookies; the
        client's auth, redirects, retries and timeout apply unless given here."""
        flow, ttuple = self._send_flow(
            request,
            timeout,
            follow_redirects,
            auth,
            request_body(request),  # type: ignore[arg-type]  # bytes or an Upload here
        )
        return self._drive(steps(self, flow, ttuple, stream))

    @contextmanager
    def stream(self, method: str, url: str, **kwargs: Any) -> Iterator[Response]:
        """Send a request and yield the response before its body is read (httpx's API).

        ``with client.stream("GET", url) as r: for chunk in r.iter_bytes(): ...`` — the
        same keyword arguments as ``request``. On exit the response is closed: a body read
        to the end gives its connection back to the pool, a half-read one closes it.
        """
        response = self.request(method, url, stream=True, **kwargs)._expect_read()
        try:
            yield response
        finally:
            response.close()

    def _drive(self, operations: Steps) -> Response:
        """Perform a request's I/O operations (``_flow.steps``) with blocking calls, each
        outcome or error handed back; returns the final response (``AsyncClient._drive``
        awaits instead)."""
        try:
            operation = next(operations)
            while True:
                outcome: object = None
                error: BaseException | None = None
                try:
                    kind = operation[0]
                    if kind == EXCHANGE:
                        engine = self._engine
                        call = engine.open if operation[1] else engine.request
                        outcome = call(*operation[2:])
                    elif kind == HOOK:
                        operation[1](operation[2])
                    elif kind == DISCARD:
                        operation[1].read()
                    elif kind == TRANSPORT:
                        outcome = operation[1].handle_request(operation[2])
                    elif kind == AUTH:
                        outcome = sync_auth_step(operation)
                    else:
                        time.sleep(operation[1])
                except BaseException as exc:  # the flow raises what it does not handle
                    error = exc
                if error is None:
                    operation = operations.send(outcome)
                else:
                    # Thrown outside the ``except`` block, so what the flow raises next is
                    # not chained to this error; dropped after, so no frame keeps it alive.
                    try:
                        operation = operations.throw(error)
                    finally:
                        error = None
        except StopIteration as stop:
            result: Response = stop.value
            return result

    if TYPE_CHECKING:
        # The signatures type checkers and readers see (the keyword sets: _options.py).

        def request(self, method: str, url: str, **kwargs: Unpack[BodyOptions]) -> Response:
            """Send a request and read the whole response (see ``_request`` for the
            arguments)."""
            ...

        def get(self, url: str, **kwargs: Unpack[RequestOptions]) -> Response:
            """Send a GET request (see ``request``)."""
            ...

        def head(self, url: str, **kwargs: Unpack[RequestOptions]) -> Response:
            """Send a HEAD request (see ``request``)."""
            ...

        def options(self, url: str, **kwargs: Unpack[RequestOptions]) -> Response:
            """Send an OPTIONS request (see ``request``)."""
            ...

        def delete(self, url: str, **kwargs: Unpack[RequestOptions]) -> Response:
            """Send a DELETE request (see ``request``)."""
            ...

        def post(self, url: str, **kwargs: Unpack[BodyOptions]) -> Response:
            """Send a POST request (see ``request``)."""
            ...

        def put(self, url: str, **kwargs: Unpack[BodyOptions]) -> Response:
            """Send a PUT request (see ``request``)."""
            ...

        def patch(self, url: str, **kwargs: Unpack[BodyOptions]) -> Response:
            """Send a PATCH request (see ``request``)."""
            ...

    else:
        # At run time the request methods take ``**kwargs`` (closures made by ``_method``):
        # CPython looks up every omitted keyword-only default in a dict on each
        # call, ~6% of a small request's instructions (callgrind, docs/performance.md).
        # The signatures above are the ones type checkers and readers see.
        request = _request_call
        get = _get
        head = _head
        options = _options
        delete = _delete
        post = _post
        put = _put
        patch = _patch

    # -- batches (python/nodelay/_batch.py) -------------------------------------------------

    if TYPE_CHECKING:

        @overload
        def get_many(
            self,
            urls: Iterable[str],
            *,
            concurrency: int = ...,
            params: ParamTypes | None = ...,
            headers: RequestHeaderTypes | None = ...,
            timeout: TimeoutTypes | _Unset = ...,
            follow_redirects: bool | None = ...,
            return_exceptions: Literal[False] = ...,
        ) -> list[Response]: ...
        @overload
        def get_many(
            self,
            urls: Iterable[str],
            *,
            concurrency: int = ...,
            params: ParamTypes | None = ...,
            headers: RequestHeaderTypes | None = ...,
            timeout: TimeoutTypes | _Unset = ...,
            follow_redirects: bool | None = ...,
            return_exceptions: bool,
        ) -> list[Response | RequestError]: ...

    def get_many(
        self,
        urls: Iterable[str],
        *,
        concurrency: int = _core.DEFAULTS["batch_concurrency"],
        params: ParamTypes | None = None,
        headers: RequestHeaderTypes | None = None,
        timeout: TimeoutTypes | _Unset = UNSET,
        follow_redirects: bool | None = None,
        return_exceptions: bool = False,
    ) -> list[Any]:
        """GET every URL with up to ``concurrency`` requests in flight; returns the
        responses in the order of ``urls``.

        The requests run as tasks on the core's runtime (HTTP/2: streams on this client's
        connection; HTTP/1.1: a pool kept for batches, bounded by the same ``Limits``) with
        the GIL released the whole time (other Python threads keep running); Ctrl-C
        interrupts the batch. Clients with proxies run batches on worker threads.
        ``params``/``headers``/``timeout``/``follow_redirects`` apply to every request as
        in ``get``; the jar's cookies are sent and Set-Cookie fields stored as in ``get``
        (in whatever order the responses arrive). Requests with auth (``auth=`` or
        ``.netrc``) and the hops of followed redirects are sent one by one afterwards.

        Errors: by default the first failure stops the batch (requests not yet started
        are not sent) and the exception of the first failed request, in input order, is
        raised. With ``return_exceptions=True`` every request is sent and a failed one
        has its exception (a ``RequestError``) in the list instead of a response.
        """
        from ._batch import get_many

        return get_many(
            self,
            urls,
            concurrency=concurrency,
            params=params,
            headers=headers,
            timeout=timeout,
            follow_redirects=follow_redirects,
            return_exceptions=return_exceptions,
        )

    if TYPE_CHECKING:

        @overload
        def map(
            self,
            requests: Iterable[BatchItem],
            *,
            concurrency: int = ...,
            timeout: TimeoutTypes | _Unset = ...,
            follow_redirects: bool | None = ...,
            return_exceptions: Literal[False] = ...,
        ) -> list[Response]: ...
        @overload
        def map(
            self,
            requests: Iterable[BatchItem],
            *,
            concurrency: int = ...,
            timeout: TimeoutTypes | _Unset = ...,
            follow_redirects: bool | None = ...,
            return_exceptions: bool,
        ) -> list[Response | RequestError]: ...

    def map(
        self,
        requests: Iterable[BatchItem],
        *,
        concurrency: int = _core.DEFAULTS["batch_concurrency"],
        timeout: TimeoutTypes | _Unset = UNSET,
        follow_redirects: bool | None = None,
        return_exceptions: bool = False,
    ) -> list[Any]:
        """Send every request with up to ``concurrency`` in flight; returns the responses
        in input order (see ``get_many`` for threads, cookies, auth and errors).

        Each item is a ``nodelay.Request(method, url, headers=..., content=...)`` or a
        tuple ``(method, url)`` / ``(method, url, {"params": ..., "headers": ...,
        "content": ..., "data": ..., "json": ...})`` with ``request()``'s meaning::

            client.map([("GET", "/a"), ("POST", "/b", {"json": {"x": 1}})])
        """
        from ._batch import map_requests

        return map_requests(
            self,
            requests,
            concurrency=concurrency,
            timeout=timeout,
            follow_redirects=follow_redirects,
            return_exceptions=return_exceptions,
        )


class Session(Client):
    """A ``Client`` that follows redirects by default, as ``requests.Session`` does.

    Everything else is ``Client``: same arguments, same thread safety.
    """

    if not TYPE_CHECKING:
        __init__ = with_defaults(BaseClient.__init__, follow_redirects=True)
