"""A small Flask app answering the two endpoints the openai and anthropic SDKs call most,
``POST /v1/chat/completions`` and ``POST /v1/messages``, plain (one JSON document) and
streamed (server-sent events, one event per piece of ``REPLY``), in the shapes their API
references give. Served by hypercorn on a loopback port (``serving()``); every request
it saw is kept in ``LlmApi.seen`` (path, headers, JSON body)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from hypercorn_server import serve

REPLY = ("Hel", "lo ", "there")
"""The answer's text, one piece per streamed event."""


@dataclass
class LlmApi:
    port: int
    seen: list[dict[str, Any]] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def _sse(events: list[tuple[str | None, object]]) -> Iterator[str]:
    for name, data in events:
        prefix = "" if name is None else f"event: {name}\n"
        text = data if isinstance(data, str) else json.dumps(data)
        yield f"{prefix}data: {text}\n\n"


def _chat(body: dict[str, Any]) -> tuple[dict[str, Any] | None, list[tuple[str | None, object]]]:
    base = {"id": "chatcmpl-1", "created": 1, "model": body["model"]}
    if not body.get("stream"):
        message = {"role": "assistant", "content": "".join(REPLY)}
        usage = {"prompt_tokens": 3, "completion_tokens": 3, "total_tokens": 6}
        choice = {"index": 0, "message": message, "finish_reason": "stop"}
        return {**base, "object": "chat.completion", "choices": [choice], "usage": usage}, []
    events: list[tuple[str | None, object]] = []
    for i, piece in enumerate(REPLY):
        delta = {"role": "assistant", "content": piece} if i == 0 else {"content": piece}
        choice = {"index": 0, "delta": delta, "finish_reason": None}
        events.append((None, {**base, "object": "chat.completion.chunk", "choices": [choice]}))
    last = {"index": 0, "delta": {}, "finish_reason": "stop"}
    events.append((None, {**base, "object": "chat.completion.chunk", "choices": [last]}))
    events.append((None, "[DONE]"))
    return None, events


def _messages(
    body: dict[str, Any],
) -> tuple[dict[str, Any] | None, list[tuple[str | None, object]]]:
    message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": body["model"],
        "stop_sequence": None,
    }
    if not body.get("stream"):
        return {
            **message,
            "content": [{"type": "text", "text": "".join(REPLY)}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 3, "output_tokens": 3},
        }, []
    start = {**message, "content": [], "stop_reason": None}
    start["usage"] = {"input_tokens": 3, "output_tokens": 0}
    events: list[tuple[str | None, object]] = [
        ("message_start", {"type": "message_start", "message": start}),
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        ),
    ]
    for piece in REPLY:
        delta = {"type": "text_delta", "text": piece}
        events.append(
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta})
        )
    events += [
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": 3},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return None, events


def make_app(api: LlmApi) -> Any:
    from flask import Flask, Response, request

    app = Flask("llm_api")
    lock = threading.Lock()

    def answer(build: Any) -> Any:
        body = request.get_json()
        with lock:
            headers = {name.lower(): value for name, value in request.headers.items()}
            api.seen.append({"path": request.path, "headers": headers, "body": body})
        document, events = build(body)
        if document is not None:
            return document
        return Response(_sse(events), mimetype="text/event-stream")

    app.add_url_rule("/v1/chat/completions", "chat", lambda: answer(_chat), methods=["POST"])
    app.add_url_rule("/v1/messages", "messages", lambda: answer(_messages), methods=["POST"])
    return app


def serving() -> Iterator[LlmApi]:
    """Runs the app under hypercorn until the generator is closed; yields its ``LlmApi``."""
    api = LlmApi(port=0)
    server = serve(make_app(api), "wsgi")
    api.port = next(server)
    yield api
    server.close()
