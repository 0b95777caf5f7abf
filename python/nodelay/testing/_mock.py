"""``NodelayMock``: the object the ``nodelay_mock`` fixture gives a test, modelled on
pytest-httpx's ``HTTPXMock`` (``pytest_httpx/_httpx_mock.py``): responses, exceptions
and callbacks registered with matching conditions (``_matching.py``), the requests
received, and the checks made when the test ends.

A request is answered by the first matching registration not used yet, else by the
last matching one when it is reusable; a request nothing answers raises
``nodelay.TimeoutException`` (a ``RequestError``, as a network failure would be) whose
message names the request and lists the registrations.
"""

from __future__ import annotations

import copy
import threading

from .._exceptions import RequestError, TimeoutException
from .._models import Response, _DetachedRaw
from .._streaming import IterStream
from ._matching import MockOptions, RequestMatcher, describe_request
from ._seam import Interceptor

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import (
        AsyncIterable,
        AsyncIterator,
        Awaitable,
        Callable,
        Iterable,
        Iterator,
    )
    from typing import Any, ClassVar, NoReturn, TypeAlias

    from .._headers import HeaderTypes
    from .._models import Request

    Callback: TypeAlias = "Callable[[Request], Response | Awaitable[Response | None] | None]"

__all__ = ["MockRoute", "NodelayMock", "Pieces"]

DOCS = "docs/testing.md"
"""Where the messages send a reader for the settings they name."""


class Pieces:
    """A response body in pieces that both clients can read, any number of times
    (pytest-httpx's ``IteratorStream``): ``Client`` iterates it, ``AsyncClient``
    iterates it with ``async for``."""

    def __init__(self, pieces: Iterable[bytes]) -> None:
        self._pieces = list(pieces)

    def __iter__(self) -> Iterator[bytes]:
        return iter(self._pieces)

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for piece in self._pieces:
            yield piece


class NodelayMock:
    """Responses for the requests nodelay clients send during a test (the
    ``nodelay_mock`` fixture). Matching keywords of every method: ``url``, ``method``,
    ``match_headers``, ``match_content``, ``match_json``, ``match_params``,
    ``match_extensions``, ``is_optional``, ``is_reusable`` (``_matching.py``)."""

    def __init__(self, options: MockOptions | None = None) -> None:
        self._options = MockOptions() if options is None else options
        self._lock = threading.Lock()  # clients may send from several threads
        self._requests: list[Request] = []
        self._callbacks: list[tuple[RequestMatcher, Callback]] = []
        self._requests_not_matched: list[Request] = []

    def add_response(
        self,
        status_code: int = 200,
        http_version: str = "HTTP/1.1",
        headers: HeaderTypes | None = None,
        content: bytes | None = None,
        text: str | None = None,
        html: str | None = None,
        stream: Iterable[bytes] | AsyncIterable[bytes] | None = None,
        json: Any = None,
        **matchers: Any,
    ) -> None:
        """Answer matching requests with this response: ``content`` (bytes), ``text``,
        ``html`` or ``json`` as the body (with the ``Content-Type`` and
        ``Content-Length`` ``nodelay.Response`` gives them), or ``stream``, the body in
        pieces, read as a streamed response is (an iterable of bytes, taken in at once,
        for ``Client`` and ``AsyncClient`` alike; an async iterable, for one
        ``AsyncClient`` request). A new ``Response`` is made for every request."""
        json = copy.deepcopy(json)
        if stream is not None and not hasattr(stream, "__aiter__"):
            stream = Pieces(stream)

        def response_callback(request: Request) -> Response:
            response = Response(
                status_code,
                headers=headers,
                content=content,
                text=text,
                html=html,
                json=json,
                stream=stream,
            )
            raw = response._raw
            assert isinstance(raw, _DetachedRaw | IterStream)  # what Response() makes
            raw.version = http_version
            return response

        self.add_callback(response_callback, **matchers)

    def add_callback(self, callback: Callback, **matchers: Any) -> None:
        """Answer matching requests with ``callback(request)``: a ``Response`` (or,
        under ``AsyncClient``, an awaitable of one); ``None`` counts as no answer. What
        it raises reaches the caller."""
        matcher = RequestMatcher(self._options, **matchers)
        with self._lock:
            self._callbacks.append((matcher, callback))

    def add_exception(self, exception: BaseException, **matchers: Any) -> None:
        """Raise ``exception`` for matching requests (a ``RequestError`` gets the
        request as its ``request``)."""

        def exception_callback(request: Request) -> None:
            if isinstance(exception, RequestError):
                exception.request = request
            raise exception

        self.add_callback(exception_callback, **matchers)

    def get_requests(self, **matchers: Any) -> list[Request]:
        """Every request received (matched or not) that meets ``matchers``, in order."""
        matcher = RequestMatcher(self._options, **matchers)
        with self._lock:
            received = list(self._requests)
        return [request for request in received if matcher.match(request)]

    def get_request(self, **matchers: Any) -> Request | None:
        """The one request that meets ``matchers`` (None if none did); more than one
        fails the test."""
        requests = self.get_requests(**matchers)
        assert len(requests) <= 1, (
            f"More than one request ({len(requests)}) matched, use get_requests instead or "
            "refine your filters."
        )
        return requests[0] if requests else None

    def reset(self) -> None:
        """Forget every registration and every request received."""
        with self._lock:
            self._requests.clear()
            self._callbacks.clear()
            self._requests_not_matched.clear()

    # -- answering (``MockRoute``) ----------------------------------------------------------

    def _callback_for(self, request: Request) -> Callback | None:
        """Record ``request`` and choose the registration that answers it."""
        with self._lock:
            self._requests.append(request)
            matching = [(m, callback) for m, callback in self._callbacks if m.match(request)]
            for matcher, callback in matching:
                if not matcher.nb_calls:
                    matcher.nb_calls += 1
                    return callback
            if matching and matching[-1][0].is_reusable:
                matching[-1][0].nb_calls += 1
                return matching[-1][1]
            return None

    def _handle_request(self, request: Request) -> Response:
        request.read()  # kept, for matching and for ``get_requests``
        callback = self._callback_for(request)
        if callback is not None:
            response = callback(request)
            if response is not None:
                if not isinstance(response, Response):
                    raise TypeError(
                        "a nodelay_mock callback must return a nodelay.Response under "
                        f"Client (got {type(response).__name__})"
                    )
                return response
        self._not_matched(request)

    async def _handle_async_request(self, request: Request) -> Response:
        await request.aread()
        callback = self._callback_for(request)
        if callback is not None:
            response = callback(request)
            if response is not None and not isinstance(response, Response):
                response = await response
            if response is not None:
                return response
        self._not_matched(request)

    def _not_matched(self, request: Request) -> NoReturn:
        with self._lock:
            self._requests_not_matched.append(request)
            matchers = [matcher for matcher, _ in self._callbacks]
        message = f"No response can be found for {describe_request(request, matchers)}"
        unused = [m for m in matchers if not m.nb_calls]
        used = [m for m in matchers if m.nb_calls]
        if matchers:
            message += " amongst:\n" + "\n".join(f"- {m}" for m in unused + used)
            if any(not m.is_reusable for m in used):
                message += (
                    "\n\nTo answer more than one request with a response, register it with "
                    f"is_reusable=True (see {DOCS})"
                )
        raise TimeoutException(message, request=request)

    # -- the checks at the end of a test ----------------------------------------------------

    def _assert_options(self) -> None:
        with self._lock:
            not_requested = [m for m, _ in self._callbacks if m.should_have_matched()]
            not_expected = list(self._requests_not_matched)
        assert not not_requested, (
            "The following responses are mocked but not requested:\n"
            + "\n".join(f"- {m}" for m in not_requested)
            + "\n\nIf this is on purpose, register them with is_optional=True or mark the "
            "test @pytest.mark.nodelay_mock(assert_all_responses_were_requested=False) "
            f"(see {DOCS})"
        )
        if self._options.assert_all_requests_were_expected:
            assert not not_expected, (
                "The following requests were not expected:\n"
                + "\n".join(f"- {r.method} request on {r.url}" for r in not_expected)
                + "\n\nIf this is on purpose, mark the test "
                "@pytest.mark.nodelay_mock(assert_all_requests_were_expected=False) "
                f"(see {DOCS})"
            )


class MockRoute(Interceptor):
    """The transport of every client while a ``NodelayMock`` is active: its requests
    are answered by ``mock`` (a subclass per mock sets it), or sent to the network when
    the ``should_mock`` option says so."""

    mock: ClassVar[NodelayMock]

    def handle_request(self, request: Request) -> Response:
        if not self.mock._options.should_mock(request):
            return self.send_real(request)
        return self.mock._handle_request(request)

    async def handle_async_request(self, request: Request) -> Response:
        if not self.mock._options.should_mock(request):
            return await self.asend_real(request)
        return await self.mock._handle_async_request(request)

    @classmethod
    def for_mock(cls, mock: NodelayMock) -> type[MockRoute]:
        """The route class answering from ``mock``."""
        return type(f"{cls.__name__}For{id(mock):x}", (cls,), {"mock": mock})
