"""Seed 002 §7 over the wire: retries, ``Retry-After``, fallback and broken streams against a real
loopback HTTP server, through a real adapter and its official SDK (``openai`` Chat Completions)."""

from __future__ import annotations

import time

import pytest

from kanawa.llm.errors import LLMBadRequestError, LLMConnectionError, LLMStreamInterruptedError
from kanawa.llm.models import resolve_model
from kanawa.llm.retry import RetryingLLM, RetryPolicy
from kanawa.types import TextDelta, UserMessage
from tests.llm.openai_chat.wire import chunk, completion, error_body, stream
from tests.wire.server import Disconnect, WireServer, json_reply

FAST = RetryPolicy(initial_delay=0.0, max_delay=0.0)


def chat_model(server: WireServer, model: str = "primary-model", **kwargs: object) -> RetryingLLM:
    llm = resolve_model(
        f"openai-chat:{model}@{server.base_url}/v1", api_key="sk-wire-test", timeout=5.0, **kwargs
    )
    assert isinstance(llm, RetryingLLM)
    return llm


async def test_429_with_retry_after_is_waited_out_then_retried(wire_server: WireServer) -> None:
    wire_server.enqueue(
        json_reply(
            error_body("slow down", kind="rate_limit_error"), status=429, headers={"retry-after": "0.2"}
        ),
        completion({"content": "ok after waiting"}),
    )
    started = time.monotonic()
    response = await chat_model(wire_server).chat([UserMessage("hi")])
    assert response.message.text == "ok after waiting"
    assert len(wire_server.requests) == 2
    assert time.monotonic() - started >= 0.2  # the server's Retry-After was honoured


async def test_502_three_times_then_the_fallback_model(wire_server: WireServer) -> None:
    failure = json_reply(error_body("bad gateway", kind="server_error"), status=502)
    wire_server.enqueue(failure, failure, failure, completion({"content": "from the fallback"}))
    fallback = resolve_model(f"openai-chat:fallback-model@{wire_server.base_url}/v1", api_key="sk-wire-test")
    llm = chat_model(wire_server, fallback_model=fallback, retry_policy=FAST)
    response = await llm.chat([UserMessage("hi")])
    assert response.message.text == "from the fallback"
    sent_models = [request.json()["model"] for request in wire_server.requests]
    assert sent_models == ["primary-model"] * 3 + ["fallback-model"]


async def test_bad_request_is_not_retried_and_not_sent_to_the_fallback(wire_server: WireServer) -> None:
    wire_server.enqueue(json_reply(error_body("unknown parameter"), status=400))
    fallback = resolve_model(f"openai-chat:fallback-model@{wire_server.base_url}/v1", api_key="sk-wire-test")
    with pytest.raises(LLMBadRequestError):
        await chat_model(wire_server, fallback_model=fallback, retry_policy=FAST).chat([UserMessage("hi")])
    assert len(wire_server.requests) == 1


async def test_stream_dropped_before_output_is_retried(wire_server: WireServer) -> None:
    wire_server.enqueue(
        stream(Disconnect(), done=False),
        stream(chunk({"role": "assistant", "content": "hello"}), chunk(finish="stop")),
    )
    events = [e async for e in chat_model(wire_server, retry_policy=FAST).stream([UserMessage("hi")])]
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["hello"]
    assert len(wire_server.requests) == 2


async def test_stream_dropped_after_output_is_not_resent_and_the_client_saw_the_text_once(
    wire_server: WireServer,
) -> None:
    wire_server.enqueue(stream(chunk({"role": "assistant", "content": "partial "}), Disconnect(), done=False))
    wire_server.default = stream(chunk({"content": "SHOULD NOT BE SENT"}), chunk(finish="stop"))
    seen: list[str] = []

    async def consume() -> None:
        async for event in chat_model(wire_server, retry_policy=FAST).stream([UserMessage("hi")]):
            if isinstance(event, TextDelta):
                seen.append(event.text)

    with pytest.raises(LLMStreamInterruptedError) as info:
        await consume()
    assert seen == ["partial "]
    assert isinstance(info.value.__cause__, LLMConnectionError)
    assert len(wire_server.requests) == 1
