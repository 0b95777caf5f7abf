"""The exception tree: classes, attributes, messages and pickling."""

from __future__ import annotations

import pickle

import nodelay
import pytest
from nodelay import _exceptions

TREE: dict[str, tuple[str, ...]] = {
    "HTTPError": ("Exception",),
    "StreamError": ("RuntimeError",),
    "StreamConsumed": ("StreamError",),
    "ResponseNotRead": ("StreamError",),
    "StreamClosed": ("StreamError",),
    "RequestNotRead": ("StreamError",),
    "CookieConflict": ("Exception",),
    "SSLContextWarning": ("UserWarning",),
    "RequestError": ("HTTPError",),
    "TransportError": ("RequestError",),
    "TimeoutException": ("TransportError", "TimeoutError"),
    "ConnectTimeout": ("TimeoutException",),
    "ReadTimeout": ("TimeoutException",),
    "WriteTimeout": ("TimeoutException",),
    "PoolTimeout": ("TimeoutException",),
    "NetworkError": ("TransportError",),
    "ConnectError": ("NetworkError",),
    "TLSError": ("ConnectError",),
    "ReadError": ("NetworkError",),
    "WriteError": ("NetworkError",),
    "CloseError": ("NetworkError",),
    "ProtocolError": ("TransportError",),
    "LocalProtocolError": ("ProtocolError",),
    "RemoteProtocolError": ("ProtocolError",),
    "HeaderTooLarge": ("RemoteProtocolError",),
    "ProxyError": ("TransportError",),
    "UnsupportedProtocol": ("TransportError",),
    "DecodingError": ("RequestError",),
    "TooManyRedirects": ("RequestError",),
    "HTTPStatusError": ("HTTPError",),
    "InvalidURL": ("Exception",),
}

REQUEST_ERRORS = [name for name in TREE if issubclass(getattr(nodelay, name), nodelay.RequestError)]


def _cls(name: str) -> type[BaseException]:
    builtin = {
        "Exception": Exception,
        "TimeoutError": TimeoutError,
        "RuntimeError": RuntimeError,
        "UserWarning": UserWarning,
    }
    if name in builtin:
        return builtin[name]
    cls = getattr(nodelay, name)
    assert isinstance(cls, type)
    return cls


@pytest.mark.parametrize("name", sorted(TREE))
def test_direct_bases(name: str) -> None:
    cls = _cls(name)
    assert cls.__bases__ == tuple(_cls(b) for b in TREE[name])
    assert cls.__module__ == "nodelay._exceptions"
    assert getattr(_exceptions, name) is cls
    assert cls.__doc__


def test_every_exception_is_public_and_in_the_tree() -> None:
    public = {
        n
        for n in nodelay.__all__
        if isinstance(getattr(nodelay, n), type) and issubclass(getattr(nodelay, n), BaseException)
    }
    assert public == set(TREE)
    assert set(_exceptions.__all__) == set(TREE)


def test_tree_docstring_names_every_class() -> None:
    doc = _exceptions.__doc__ or ""
    for name in TREE:
        assert name in doc


def test_timeouts_are_builtin_timeout_errors() -> None:
    for cls in (
        nodelay.ConnectTimeout,
        nodelay.ReadTimeout,
        nodelay.WriteTimeout,
        nodelay.PoolTimeout,
    ):
        exc = cls("slow", url="http://127.0.0.1:1/")
        assert isinstance(exc, TimeoutError)
        assert isinstance(exc, nodelay.TimeoutException)
        assert isinstance(exc, nodelay.TransportError)
        assert str(exc) == "slow"
        with pytest.raises(TimeoutError):
            raise exc


@pytest.mark.parametrize("name", REQUEST_ERRORS)
def test_request_error_constructor_like_the_engine(name: str) -> None:
    cls = getattr(nodelay, name)
    exc = cls("boom", url="http://127.0.0.1:9/x")
    assert str(exc) == "boom"
    assert exc.url == "http://127.0.0.1:9/x"
    assert exc.request is None
    plain = cls("only a message")
    assert plain.url is None and plain.request is None


@pytest.mark.parametrize("name", REQUEST_ERRORS)
def test_request_error_pickles(name: str) -> None:
    cls = getattr(nodelay, name)
    request = nodelay.Request("POST", "http://127.0.0.1:9/x", headers={"A": "1"}, content=b"hi")
    exc = cls("boom", url="http://127.0.0.1:9/x", request=request)
    back = pickle.loads(pickle.dumps(exc))
    assert type(back) is cls
    assert str(back) == "boom"
    assert back.url == "http://127.0.0.1:9/x"
    assert back.request is not None
    assert back.request.method == "POST"
    assert back.request.url == "http://127.0.0.1:9/x"
    assert back.request.headers == {"a": "1"}
    assert back.request.content == b"hi"


def test_url_defaults_to_the_request_url() -> None:
    request = nodelay.Request("GET", "http://127.0.0.1:9/y")
    assert nodelay.ReadError("x", request=request).url == "http://127.0.0.1:9/y"


def test_too_many_redirects_history_pickles() -> None:
    hop = nodelay.Response(302, headers={"Location": "/a"}, content=b"")
    exc = nodelay.TooManyRedirects("loop", url="http://127.0.0.1:9/", history=[hop])
    back = pickle.loads(pickle.dumps(exc))
    assert [r.status_code for r in back.history] == [302]
    assert back.history[0].headers["location"] == "/a"
    assert nodelay.TooManyRedirects("x").history == []


def test_http_status_error_attributes_and_pickling() -> None:
    request = nodelay.Request("GET", "http://127.0.0.1:9/missing")
    response = nodelay.Response(404, content=b"nope", request=request)
    exc = nodelay.HTTPStatusError("Client error", request=request, response=response)
    assert exc.request is request and exc.response is response
    assert str(exc) == "Client error"
    back = pickle.loads(pickle.dumps(exc))
    assert type(back) is nodelay.HTTPStatusError
    assert str(back) == "Client error"
    assert back.response.status_code == 404
    assert back.response.content == b"nope"
    assert back.request is not None and back.request.url == "http://127.0.0.1:9/missing"


def test_invalid_url() -> None:
    exc = nodelay.InvalidURL("bad", url="http://[::1")
    assert not isinstance(exc, nodelay.HTTPError)
    assert str(exc) == "bad"
    back = pickle.loads(pickle.dumps(exc))
    assert type(back) is nodelay.InvalidURL and back.url == "http://[::1" and str(back) == "bad"
