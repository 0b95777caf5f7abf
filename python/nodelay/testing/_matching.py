"""Which registered response answers a request: pytest-httpx's matching rules
(``pytest_httpx/_request_matcher.py``), over nodelay's ``Request``.

- ``url``: a str or ``nodelay.URL`` matches the request's URL with the query compared
  apart, as a mapping of each parameter to its value (or, for a repeated parameter, the
  list of its values in order): the order of different parameters does not matter. A
  compiled regular expression is ``match``-ed against the whole URL.
- ``method``: compared in upper case.
- ``match_headers``: every given header has exactly this value (a repeated header's
  values joined with ``", "``). Header names are compared case-insensitively (HTTP's
  rule; pytest-httpx compares them as the client spelled them).
- ``match_content`` (the body's bytes), ``match_json`` (the body parsed as JSON), at most
  one of the two; ``match_params`` (the query as a mapping, with a ``url`` without one);
  ``match_extensions`` (``request.extensions`` entries).
- ``is_optional``: not requesting it is no failure (default: the opposite of the
  ``assert_all_responses_were_requested`` option); ``is_reusable``: it answers every
  matching request, not only the first (default: ``can_send_already_matched_responses``).
"""

from __future__ import annotations

import json
import re

from .._urltypes import URL

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any, TypeAlias

    from .._models import Request
    from .._urltypes import QueryParams

    ParamsDict: TypeAlias = "dict[str, str | list[str]]"
    URLTypes: TypeAlias = "str | URL | re.Pattern[str]"

__all__ = ["MockOptions", "RequestMatcher", "describe_request"]


class MockOptions:
    """The settings of a ``nodelay_mock`` (``@pytest.mark.nodelay_mock(...)``), named as
    pytest-httpx's ``httpx_mock`` marker names them.

    ``assert_all_responses_were_requested``: fail the test at teardown when a registered
    response was not requested. ``assert_all_requests_were_expected``: fail it when a
    request found no response (it also raised when it was sent). ``can_send_already_
    matched_responses``: every response may answer more than one request.
    ``should_mock(request)``: False sends that request to the network instead."""

    def __init__(
        self,
        *,
        assert_all_responses_were_requested: bool = True,
        assert_all_requests_were_expected: bool = True,
        can_send_already_matched_responses: bool = False,
        should_mock: Callable[[Request], bool] = lambda request: True,
    ) -> None:
        self.assert_all_responses_were_requested = assert_all_responses_were_requested
        self.assert_all_requests_were_expected = assert_all_requests_were_expected
        self.can_send_already_matched_responses = can_send_already_matched_responses
        self.should_mock = should_mock


def params_dict(params: QueryParams) -> ParamsDict:
    """A query as pytest-httpx compares it: each name to its value, or to the list of
    its values when it is repeated."""
    out: ParamsDict = {}
    for key in params:
        values = params.get_list(key)
        out[key] = values if len(values) > 1 else values[0]
    return out


def _origin_and_path(url: URL) -> tuple[str, str, int | None, str]:
    """What is compared besides the query (``URL.port`` is None for the default one)."""
    return (url.scheme, url.host.lower(), url.port, url.path or "/")


def url_matches(expected: URL | re.Pattern[str], received: URL, params: ParamsDict | None) -> bool:
    """Whether ``received`` is the URL ``expected`` names (see the module's docstring)."""
    if isinstance(expected, re.Pattern):
        return expected.match(str(received)) is not None
    if params is None:
        params = params_dict(expected.params)
    return params_dict(received.params) == params and _origin_and_path(
        received
    ) == _origin_and_path(expected)


def _joined_headers(request: Request) -> dict[str, tuple[str, str]]:
    """The request's headers by lower-case name: the name as first spelled and the
    values, repeated ones joined with ``", "``."""
    headers: dict[str, tuple[str, str]] = {}
    for name, value in request.headers.multi_items():
        key = name.lower()
        if key in headers:
            name, first = headers[key]
            value = f"{first}, {value}"
        headers[key] = (name, value)
    return headers


class RequestMatcher:
    """One registration's conditions, and how many requests it answered (``nb_calls``)."""

    def __init__(
        self,
        options: MockOptions,
        url: URLTypes | None = None,
        method: str | None = None,
        match_headers: Mapping[str, str] | None = None,
        match_content: bytes | None = None,
        match_json: Any = None,
        match_params: ParamsDict | None = None,
        match_extensions: Mapping[str, Any] | None = None,
        is_optional: bool | None = None,
        is_reusable: bool | None = None,
    ) -> None:
        self.nb_calls = 0
        self.url: URL | re.Pattern[str] | None = (
            url if url is None or isinstance(url, re.Pattern) else URL(str(url))
        )
        self.method = method.upper() if method else None
        self.headers = match_headers
        self.content = match_content
        self.json = match_json
        self.params = match_params
        self.extensions = match_extensions
        self.is_optional = (
            not options.assert_all_responses_were_requested if is_optional is None else is_optional
        )
        self.is_reusable = (
            options.can_send_already_matched_responses if is_reusable is None else is_reusable
        )
        if match_content is not None and match_json is not None:
            raise ValueError(
                "Only one way of matching against the body can be provided: "
                "match_content (bytes) or match_json (the parsed JSON)."
            )
        if match_params is not None:
            if self.url is None:
                raise ValueError("URL must be provided when match_params is used.")
            if isinstance(self.url, re.Pattern):
                raise ValueError("match_params cannot be used in addition to regex URL.")
            if self.url.params:
                raise ValueError(
                    "Provided URL must not contain any query parameter when match_params is used."
                )

    def expects_body(self) -> bool:
        return self.content is not None or self.json is not None

    def match(self, request: Request) -> bool:
        return (
            (self.url is None or url_matches(self.url, request.url, self.params))
            and (self.method is None or request.method == self.method)
            and self._headers_match(request)
            and self._content_match(request)
            and self._extensions_match(request)
        )

    def _headers_match(self, request: Request) -> bool:
        if not self.headers:
            return True
        received = _joined_headers(request)
        return all(
            received.get(name.lower(), ("", None))[1] == value
            for name, value in self.headers.items()
        )

    def _content_match(self, request: Request) -> bool:
        if self.content is not None:
            return request.content == self.content
        if self.json is not None:
            try:
                return bool(json.loads(request.content.decode("utf-8")) == self.json)
            except ValueError:  # not JSON, or not UTF-8
                return False
        return True

    def _extensions_match(self, request: Request) -> bool:
        if not self.extensions:
            return True
        extensions = request.extensions
        return all(extensions.get(name) == value for name, value in self.extensions.items())

    def should_have_matched(self) -> bool:
        """Whether this registration failed its purpose: required and never requested."""
        return not self.is_optional and not self.nb_calls

    def __str__(self) -> str:
        if self.is_reusable:
            text = f"Match {self.method or 'every'} request"
        else:
            text = "Already matched" if self.nb_calls else "Match"
            text += f" {self.method or 'any'} request"
        if self.url is not None:
            text += f" on {self.url.pattern if isinstance(self.url, re.Pattern) else self.url}"
        extra = []
        if self.params:
            extra.append(f"{self.params} query parameters")
        if self.headers:
            extra.append(f"{dict(self.headers)} headers")
        if self.content is not None:
            extra.append(f"{self.content!r} body")
        if self.json is not None:
            extra.append(f"{self.json} json body")
        if self.extensions:
            extra.append(f"{dict(self.extensions)} extensions")
        if extra:
            text += " with " + " and ".join(extra)
        return text


def describe_request(request: Request, matchers: list[RequestMatcher]) -> str:
    """``GET request on URL``, plus what the matchers look at (the headers they name,
    the body) so that the difference shows."""
    text = f"{request.method} request on {request.url}"
    extra = []
    wanted = {name.lower() for m in matchers if m.headers for name in m.headers}
    if wanted:
        present = dict(value for key, value in _joined_headers(request).items() if key in wanted)
        extra.append(f"{present} headers")
    if any(m.expects_body() for m in matchers):
        extra.append(f"{request.content!r} body")
    if extra:
        text += " with " + " and ".join(extra)
    return text
