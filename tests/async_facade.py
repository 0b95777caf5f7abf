"""``AsyncClient`` behind ``Client``'s blocking API, so the main ``Client`` test modules run
unchanged against ``AsyncClient`` (the ``test_async_as_*.py`` modules re-run them).

Every awaited method runs on one event loop owned by this module; everything else (settings,
cookies, ``_engine``) is the ``AsyncClient``'s own.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import nodelay
import pytest

T = TypeVar("T")

_AWAITED = frozenset(
    ("request", "send", "get", "head", "options", "delete", "post", "put", "patch")
)
_LOOP = asyncio.new_event_loop()
_RealAsyncClient = nodelay.AsyncClient


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to its end. A Ctrl-C (or any exception) that escapes the loop while the
    coroutine is still pending cancels it and lets the cancellation finish, as
    ``asyncio.run`` does: left pending, an interrupted request would hold its connection
    until some later test happens to run the loop again."""
    task = _LOOP.create_task(coro)
    try:
        return _LOOP.run_until_complete(task)
    except BaseException:
        if not task.done():
            task.cancel()
            try:
                _LOOP.run_until_complete(task)
            except BaseException:  # the cancellation itself, or what the task raised
                pass
        raise


async def _warm_up() -> None:
    """Start the process-wide pieces (tokio runtime, this loop's wake-up socket) before any
    test counts its file descriptors (hostile/conftest.py): they live for the process."""
    refused = nodelay._core.AsyncEngine().request(
        "GET", "http://127.0.0.1:1/", [], None, (1.0, 1.0, 1.0, 1.0, None)
    )
    try:
        await refused
    except nodelay.ConnectError:
        pass


run(_warm_up())


class FacadeClient:
    """Looks like ``nodelay.Client``; is an ``AsyncClient`` driven with ``run``."""

    _follow_default = False

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("follow_redirects", self._follow_default)
        object.__setattr__(self, "_client", _RealAsyncClient(**kwargs))

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._client, name)
        if name in _AWAITED:
            return lambda *args, **kwargs: run(attr(*args, **kwargs))
        return attr

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._client, name, value)

    def close(self) -> None:
        run(self._client.aclose())

    def __enter__(self) -> FacadeClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @contextmanager
    def stream(self, method: str, url: str, **kwargs: Any) -> Iterator[nodelay.Response]:
        manager = self._client.stream(method, url, **kwargs)
        response = run(manager.__aenter__())
        try:
            yield response
        finally:
            run(manager.__aexit__(None, None, None))


class FacadeSession(FacadeClient):
    """``nodelay.Session``: redirects followed by default."""

    _follow_default = True


@pytest.fixture(autouse=True)
def async_clients(monkeypatch: pytest.MonkeyPatch) -> None:
    """``nodelay.Client``/``Session`` built inside a test are ``AsyncClient`` facades."""
    monkeypatch.setattr(nodelay, "Client", FacadeClient)
    monkeypatch.setattr(nodelay, "Session", FacadeSession)


@pytest.fixture
def client() -> Iterator[FacadeClient]:
    with FacadeClient() as c:
        yield c
