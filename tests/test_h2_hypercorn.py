"""HTTP/2 against a real server nobody here wrote: hypercorn (h2c, prior knowledge).

- It ends every response with an empty DATA frame carrying END_STREAM, which the sync
  client's non-streamed read used to reject ("HTTP/2 body length differs from
  Content-Length: received 16384 of 16384 bytes").
- It recycles connections after ``keep_alive_max_requests`` requests with a GOAWAY whose
  last stream id covers the request it just received, then may close the connection
  without answering it (a broken promise, which used to surface as "broken pipe").

The byte-level tests of the same cases are in crates/nodelay-core/tests/h2_empty_data.rs
and h2_goaway.rs; these check the user-visible paths. Skipped, with the reason, when
hypercorn is not installed."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import hypercorn_server
import nodelay
import pytest

hypercorn_asyncio = pytest.importorskip(
    "hypercorn.asyncio", reason="hypercorn is not installed (pip install hypercorn)"
)
hypercorn_config = pytest.importorskip("hypercorn.config")

#: A body of exactly one default-size DATA frame (Go and Caddy end these with an empty
#: frame too), and a small one.
SIZES = (16_384, 43)

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


def body_of(size: int) -> bytes:
    return bytes(i % 251 for i in range(size))


async def app(scope: Scope, receive: Receive, send: Send) -> None:
    """`/<n>`: n bytes with their Content-Length; `/204`: No Content."""
    if scope["type"] != "http":
        return
    name = scope["path"].strip("/")
    if name == "204":
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})
        return
    body = body_of(int(name))
    headers = [(b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


#: Requests a recycling hypercorn serves per connection (its default is 1,000), and how
#: many each test sends: the batch (32 in flight, `get_many`'s default) crosses several
#: recyclings, each dropping the requests in flight on the connection it closes.
MAX_REQUESTS_PER_CONNECTION = 100
RECYCLED_REQUESTS = 400

#: hypercorn keeps a connection it stopped serving open until its keep-alive timeout
#: (5 s by default), leaving the requests it dropped waiting that long: shortened.
KEEP_ALIVE_TIMEOUT_S = 1


def serve(**settings: Any) -> Iterator[str]:
    """Runs hypercorn with ``app`` (h2c) until the generator is closed."""
    for port in hypercorn_server.serve(app, **settings):
        yield f"http://127.0.0.1:{port}"


@pytest.fixture(scope="module")
def hypercorn_url() -> Iterator[str]:
    yield from serve()


@pytest.fixture(scope="module")
def recycling_url() -> Iterator[str]:
    yield from serve(
        keep_alive_max_requests=MAX_REQUESTS_PER_CONNECTION,
        keep_alive_timeout=KEEP_ALIVE_TIMEOUT_S,
    )


@pytest.mark.parametrize("size", SIZES)
def test_get_of_a_body_ended_by_an_empty_data_frame(hypercorn_url: str, size: int) -> None:
    with nodelay.Client(http2="prior_knowledge", timeout=10) as client:
        response = client.get(f"{hypercorn_url}/{size}")
    assert response.http_version == "HTTP/2"
    assert response.status_code == 200
    assert response.content == body_of(size)


def test_head_and_204_ended_by_an_empty_data_frame(hypercorn_url: str) -> None:
    with nodelay.Client(http2="prior_knowledge", timeout=10) as client:
        head = client.head(f"{hypercorn_url}/16384")
        no_content = client.get(f"{hypercorn_url}/204")
    assert (head.status_code, head.headers["content-length"], head.content) == (200, "16384", b"")
    assert (no_content.status_code, no_content.content) == (204, b"")


def assert_ok_or_says_why(outcomes: list[nodelay.Response | Exception]) -> None:
    """Each request succeeded, or failed saying what the server did.

    hypercorn sends GOAWAY covering the requests in flight, then may drop them, even in
    the middle of a body, and may reset the connection (which discards what it sent
    before, the GOAWAY included). A request dropped before its head goes again when it
    is idempotent; one dropped in its body fails, its error naming the broken GOAWAY
    promise or the reset. Never the bare "broken pipe" h2 reports for a closed socket."""
    for outcome in outcomes:
        if isinstance(outcome, Exception):
            message = str(outcome)
            assert "broken pipe" not in message, message
            assert isinstance(outcome, nodelay.TransportError), repr(outcome)
            assert "GOAWAY" in message or "connection reset" in message, message
        else:
            assert (outcome.status_code, outcome.content) == (200, body_of(43))


def test_sequential_gets_against_a_server_recycling_its_connections(recycling_url: str) -> None:
    outcomes: list[nodelay.Response | Exception] = []
    with nodelay.Client(http2="prior_knowledge", timeout=10) as client:
        for _ in range(RECYCLED_REQUESTS):
            try:
                outcomes.append(client.get(f"{recycling_url}/43"))
            except nodelay.RequestError as exc:
                outcomes.append(exc)
    assert_ok_or_says_why(outcomes)


def test_a_batch_against_a_server_recycling_its_connections(recycling_url: str) -> None:
    urls = [f"{recycling_url}/43"] * RECYCLED_REQUESTS
    with nodelay.Client(http2="prior_knowledge", timeout=10) as client:
        outcomes = client.get_many(urls, return_exceptions=True)
    assert_ok_or_says_why(outcomes)
