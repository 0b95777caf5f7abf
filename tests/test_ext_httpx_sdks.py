"""The openai and anthropic SDKs (built on httpx2) with ``http_client=`` a nodelay client:
plain, async and streamed calls against a local server that answers their endpoints
(``llm_api_server``). Each test also runs with httpx2's own client, the oracle."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from llm_api_server import REPLY, LlmApi, serving
from test_ext_httpx import Side, side_for

TEXT = "".join(REPLY)
SIDES = [side_for("httpx2", "nodelay"), side_for("httpx2", "own")]

pytestmark = pytest.mark.parametrize("side", SIDES, ids=["nodelay", "own"])


@pytest.fixture(scope="module")
def llm_api() -> Iterator[LlmApi]:
    yield from serving()


def test_sdks_accept_the_client(side: Side) -> None:
    import anthropic
    import openai

    with side.Client() as http_client:
        openai.OpenAI(api_key="k", http_client=http_client)
        anthropic.Anthropic(api_key="k", http_client=http_client)


def test_openai(side: Side, llm_api: LlmApi) -> None:
    import openai

    with side.Client() as http_client:
        client = openai.OpenAI(
            api_key="sk-test", base_url=f"{llm_api.url}/v1", http_client=http_client
        )
        messages: Any = [{"role": "user", "content": "hi"}]
        completion = client.chat.completions.create(model="gpt-test", messages=messages)
        stream = client.chat.completions.create(model="gpt-test", messages=messages, stream=True)
        pieces = [
            chunk.choices[0].delta.content for chunk in stream if chunk.choices[0].delta.content
        ]
    assert completion.choices[0].message.content == TEXT
    assert pieces == list(REPLY)
    request = llm_api.seen[-1]
    assert request["headers"]["authorization"] == "Bearer sk-test"
    assert request["body"]["stream"] is True


def test_openai_async(side: Side, llm_api: LlmApi) -> None:
    import openai

    async def main() -> tuple[str | None, list[str]]:
        async with side.AsyncClient() as http_client:
            client = openai.AsyncOpenAI(
                api_key="sk-test", base_url=f"{llm_api.url}/v1", http_client=http_client
            )
            messages: Any = [{"role": "user", "content": "hi"}]
            completion = await client.chat.completions.create(model="gpt-test", messages=messages)
            stream = await client.chat.completions.create(
                model="gpt-test", messages=messages, stream=True
            )
            pieces = [
                c.choices[0].delta.content async for c in stream if c.choices[0].delta.content
            ]
        return completion.choices[0].message.content, pieces

    assert asyncio.run(main()) == (TEXT, list(REPLY))


def test_anthropic(side: Side, llm_api: LlmApi) -> None:
    import anthropic

    with side.Client() as http_client:
        client = anthropic.Anthropic(
            api_key="ak-test", base_url=llm_api.url, http_client=http_client
        )
        messages: Any = [{"role": "user", "content": "hi"}]
        message = client.messages.create(model="claude-test", max_tokens=16, messages=messages)
        with client.messages.stream(
            model="claude-test", max_tokens=16, messages=messages
        ) as stream:
            pieces = list(stream.text_stream)
    assert message.content[0].text == TEXT  # type: ignore[union-attr]
    assert pieces == list(REPLY)
    headers = llm_api.seen[-1]["headers"]  # the key goes as x-api-key or as a bearer token
    assert "ak-test" in (headers.get("x-api-key"), headers["authorization"].removeprefix("Bearer "))


def test_anthropic_async(side: Side, llm_api: LlmApi) -> None:
    import anthropic

    async def main() -> tuple[str, list[str]]:
        async with side.AsyncClient() as http_client:
            client = anthropic.AsyncAnthropic(
                api_key="ak-test", base_url=llm_api.url, http_client=http_client
            )
            messages: Any = [{"role": "user", "content": "hi"}]
            message = await client.messages.create(
                model="claude-test", max_tokens=16, messages=messages
            )
            async with client.messages.stream(
                model="claude-test", max_tokens=16, messages=messages
            ) as stream:
                pieces = [piece async for piece in stream.text_stream]
        return message.content[0].text, pieces  # type: ignore[union-attr]

    assert asyncio.run(main()) == (TEXT, list(REPLY))
