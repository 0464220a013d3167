"""A 200 answer without the provider's response shape is an ``LLMError`` naming the provider: never an
empty success, never a raw Python exception. Every adapter, against a real loopback server."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kanawa.llm.adapter import LLMAdapter
from kanawa.llm.anthropic.adapter import AnthropicAdapter
from kanawa.llm.errors import LLMError
from kanawa.llm.gemini.adapter import GeminiAdapter
from kanawa.llm.openai.chat import OpenAIChatAdapter
from kanawa.llm.openai.responses import OpenAIResponsesAdapter
from kanawa.types import LLMResponse, UserMessage
from tests.wire.server import WireServer, json_reply

Build = Callable[[str], LLMAdapter]

ADAPTERS: dict[str, tuple[str, Build]] = {
    "openai-responses": (
        "openai",
        lambda base: OpenAIResponsesAdapter("gpt-5", api_key="sk-test-1", base_url=base, timeout=5.0),
    ),
    "openai-chat": (
        "openai-chat",
        lambda base: OpenAIChatAdapter("m", api_key="sk-test-1", base_url=f"{base}/v1", timeout=5.0),
    ),
    "anthropic": (
        "anthropic",
        lambda base: AnthropicAdapter("claude-sonnet-5", api_key="sk-ant-1", base_url=base, timeout=5.0),
    ),
    "gemini": (
        "gemini",
        lambda base: GeminiAdapter("gemini-2.5-flash", api_key="AIza-test-1", base_url=base, timeout=5.0),
    ),
}

MALFORMED: dict[str, list[Any]] = {
    "openai-responses": [{}, {"output": 5}, {"output": "x"}, {"output": [5]}, [], "x", 5, None],
    "openai-chat": [{}, {"choices": "x"}, {"choices": []}, {"choices": [5]}, {"choices": [{}]}, [], 5, None],
    "anthropic": [{}, [], {"content": "x"}, {"content": [5]}, {"content": None}, "x", 5],
    "gemini": [{}, {"candidates": "x"}, {"candidates": 5}, {"candidates": [5]}, [], "x", 5],
}

CASES = [(name, body) for name, bodies in MALFORMED.items() for body in bodies]


async def _ask(wire_server: WireServer, name: str, body: Any) -> LLMResponse | LLMError:
    _provider, build = ADAPTERS[name]
    wire_server.enqueue(json_reply(body))
    adapter = build(wire_server.base_url)
    try:
        return await adapter.chat([UserMessage("hi")])
    except LLMError as exc:
        return exc
    finally:
        await adapter.aclose()


@pytest.mark.parametrize(("name", "body"), CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
async def test_a_body_without_the_response_shape_is_an_llm_error_naming_the_provider(
    wire_server: WireServer, name: str, body: Any
) -> None:
    outcome = await _ask(wire_server, name, body)
    assert isinstance(outcome, LLMError), f"{name} turned {body!r} into {outcome!r}"
    assert outcome.provider == ADAPTERS[name][0]


json_bodies = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(
            st.sampled_from(["output", "choices", "content", "candidates", "message", "type", "text", "x"]),
            children,
            max_size=3,
        )
    ),
    max_leaves=8,
)


@settings(deadline=None, max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(sorted(ADAPTERS)), body=json_bodies)
async def test_any_json_body_gives_a_response_or_an_llm_error(
    wire_server: WireServer, name: str, body: Any
) -> None:
    outcome = await _ask(wire_server, name, body)
    assert isinstance(outcome, LLMResponse | LLMError)
