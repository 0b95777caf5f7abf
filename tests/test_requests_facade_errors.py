"""Errors of ``nodelay.requests`` caught by code written against the real requests.

``except requests.exceptions.X`` matches by subclassing; nodelay.requests makes its errors
instances of twin classes derived from requests' class of the same name whenever requests
is imported (``nodelay/requests/exceptions.py``). Proved with the class tree, with
``except`` around real requests made through the facade, and with an SDK built on requests
(stripe) whose retries depend on it, against a refused port and a slow server. The SDK
checks run on requests' own Session too (the oracle) and on ``nodelay.ext.requests``.
"""

from __future__ import annotations

import inspect
import json
import pickle
import socket
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import nodelay.requests
import nodelay.requests.exceptions as nd_exceptions
import pytest
import requests
import requests.exceptions as rq_exceptions
from nodelay import _core
from scripted import Recv, ScriptedServer, Send, Sleep, response

SHORT_TIMEOUT_S = 0.5
SLOW_S = 3
"""The slow server's stall: far above the SDK's timeout."""


def _exception_classes() -> list[str]:
    return [
        name
        for name, value in vars(nd_exceptions).items()
        if inspect.isclass(value)
        and issubclass(value, nd_exceptions.RequestException)
        and hasattr(rq_exceptions, name)
    ]


@pytest.fixture
def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@pytest.mark.parametrize("name", _exception_classes())
def test_every_class_is_also_requests_class(name: str) -> None:
    cls = getattr(nd_exceptions, name)
    args: tuple[Any, ...] = ("boom", "doc", 0) if name == "JSONDecodeError" else ("boom",)
    error = cls(*args)
    assert isinstance(error, cls)
    assert isinstance(error, getattr(rq_exceptions, name))
    assert isinstance(error, rq_exceptions.RequestException)
    assert type(error).__name__ == name
    assert type(error).__module__ == "nodelay.requests.exceptions"
    again = pickle.loads(pickle.dumps(error))
    assert isinstance(again, cls) and isinstance(again, getattr(rq_exceptions, name))
    assert str(again) == str(error)


def test_request_and_response_keywords_survive() -> None:
    sentinel = object()
    error = nd_exceptions.HTTPError("bad", request=sentinel)
    assert error.request is sentinel
    assert error.response is None


def test_except_clauses_of_requests_catch_facade_errors(closed_port: int) -> None:
    with pytest.raises(rq_exceptions.ConnectionError):
        nodelay.requests.get(f"http://127.0.0.1:{closed_port}/")
    try:
        nodelay.requests.get(f"http://127.0.0.1:{closed_port}/")
    except requests.exceptions.RequestException as exc:
        assert isinstance(exc, nodelay.requests.ConnectionError)
    else:
        pytest.fail("no error")


def test_raise_for_status_is_requests_http_error(server: _core.TestServer) -> None:
    r = nodelay.requests.get(f"{server.url}/status/503")
    with pytest.raises(requests.exceptions.HTTPError) as info:
        r.raise_for_status()
    assert info.value.response is r


def test_read_timeout_is_requests_timeout(server: _core.TestServer) -> None:
    with pytest.raises(requests.exceptions.Timeout):
        nodelay.requests.get(f"{server.url}/delay/{SLOW_S * 1000}", timeout=SHORT_TIMEOUT_S)


def test_json_error_is_requests_json_error(server: _core.TestServer) -> None:
    r = nodelay.requests.get(f"{server.url}/bytes/5")
    with pytest.raises(requests.exceptions.JSONDecodeError):
        r.json()
    with pytest.raises(json.JSONDecodeError):
        r.json()


def test_without_requests_imported_nothing_imports_it() -> None:
    code = (
        "import sys, nodelay.requests as r\n"
        "e = r.exceptions.ConnectionError('x')\n"
        "assert type(e) is r.exceptions.ConnectionError, type(e).__mro__\n"
        "print('requests' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# -- an SDK built on requests: stripe -------------------------------------------------------

SESSIONS: dict[str, Callable[[], Any]] = {
    "requests": requests.Session,
    "nodelay.requests": nodelay.requests.Session,
}


def _ext_session() -> Any:
    from nodelay.ext.requests import Session

    return Session()


SESSIONS["nodelay.ext.requests"] = _ext_session


def _stripe_client(stripe: Any, base: str, session: Any, retries: int) -> Any:
    http_client = stripe.RequestsClient(timeout=SHORT_TIMEOUT_S, session=session)
    return stripe.StripeClient(
        "sk_test_nodelay",
        base_addresses={"api": base},
        http_client=http_client,
        max_network_retries=retries,
    )


@pytest.mark.parametrize("kind", list(SESSIONS))
def test_stripe_retries_a_refused_connection(kind: str, closed_port: int) -> None:
    stripe = pytest.importorskip("stripe")
    client = _stripe_client(stripe, f"http://127.0.0.1:{closed_port}", SESSIONS[kind](), 1)
    with pytest.raises(stripe.APIConnectionError) as info:
        client.v1.customers.retrieve("cus_1")
    assert info.value.should_retry is True
    assert "Network error: ConnectionError" in str(info.value)


@pytest.mark.parametrize("kind", list(SESSIONS))
def test_stripe_retries_a_slow_server(kind: str) -> None:
    stripe = pytest.importorskip("stripe")
    customer = json.dumps({"id": "cus_1", "object": "customer"}).encode()
    answer = response(body=customer, headers=[("Content-Type", "application/json")])
    with ScriptedServer([Recv(), Sleep(SLOW_S)], [Recv(), Send(answer)]) as srv:
        client = _stripe_client(stripe, f"http://127.0.0.1:{srv.port}", SESSIONS[kind](), 2)
        found = client.v1.customers.retrieve("cus_1")
        assert found.id == "cus_1"
        assert srv.connections == 2  # the first attempt timed out, the retry was answered
