"""``Client``, ``AsyncClient`` and ``Session`` are one definition (docs/python-client.md):
one constructor, whose signature each class reports with its own defaults."""

from __future__ import annotations

import asyncio
import gc
import inspect
import weakref
from collections.abc import Callable

import nodelay

CONSTRUCTOR_ARGUMENTS = (
    "base_url",
    "headers",
    "params",
    "timeout",
    "follow_redirects",
    "max_redirects",
    "limits",
    "verify",
    "cert",
    "cookies",
    "auth",
    "trust_env",
    "retries",
    "event_hooks",
    "max_decoded_size",
    "proxy",
    "http2",
    "transport",
    "mounts",
    "default_encoding",
    "rate_limit",
)


def test_the_clients_take_the_same_keyword_arguments() -> None:
    for cls in (nodelay.Client, nodelay.AsyncClient, nodelay.Session):
        parameters = inspect.signature(cls).parameters
        assert tuple(parameters) == CONSTRUCTOR_ARGUMENTS, cls
        assert all(p.kind is p.KEYWORD_ONLY for p in parameters.values()), cls


def test_session_reports_and_has_its_own_redirect_default() -> None:
    client, session = inspect.signature(nodelay.Client), inspect.signature(nodelay.Session)
    assert client.parameters["follow_redirects"].default is False
    assert session.parameters["follow_redirects"].default is True
    others = [name for name in CONSTRUCTOR_ARGUMENTS if name != "follow_redirects"]
    for name in others:
        assert session.parameters[name] == client.parameters[name], name
    with nodelay.Session() as s, nodelay.Client() as c:
        assert s.follow_redirects is True and c.follow_redirects is False
    with nodelay.Session(follow_redirects=False) as s:
        assert s.follow_redirects is False


REFUSED = "http://127.0.0.1:1/"
"""Nothing listens on port 1: every request fails at once with ``ConnectError``."""


def _freed_without_the_cycle_collector(fail: Callable[[], weakref.ref[BaseException]]) -> bool:
    gc.disable()
    try:
        return fail()() is None
    finally:
        gc.enable()


def test_an_error_a_driver_hands_to_the_flow_is_not_kept_alive() -> None:
    # The flow path (params to merge): the engine's error goes through ``_drive``, which
    # must not keep it in a frame its own traceback holds (a cycle only gc would free).
    def sync_failure() -> weakref.ref[BaseException]:
        with nodelay.Client() as client:
            try:
                client.get(REFUSED, params={"a": "1"})
            except nodelay.ConnectError as exc:
                return weakref.ref(exc)
        raise AssertionError("the request did not fail")

    async def async_failure() -> weakref.ref[BaseException]:
        async with nodelay.AsyncClient() as client:
            try:
                await client.get(REFUSED, params={"a": "1"})
            except nodelay.ConnectError as exc:
                return weakref.ref(exc)
        raise AssertionError("the request did not fail")

    assert _freed_without_the_cycle_collector(sync_failure)
    assert _freed_without_the_cycle_collector(lambda: asyncio.run(async_failure()))
