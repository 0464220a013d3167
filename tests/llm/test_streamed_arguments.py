"""For every adapter's stream assembler: the ``ToolCallArgsDelta`` texts of a call add up to exactly
the final ``ToolCall.arguments``, for any arguments JSON and any chunking of it."""

from __future__ import annotations

import itertools
import json
from typing import Any

from google.genai import types as genai_types
from hypothesis import given
from hypothesis import strategies as st

from kanawa.llm.anthropic.response import StreamAssembler
from kanawa.llm.gemini.response import ResponseAssembler
from kanawa.llm.openai.chat_response import ChunkAssembler
from kanawa.llm.openai.responses_output import ResponsesStreamAssembler
from kanawa.types import LLMResponse, ResponseCompleted, StreamEvent, ToolCallArgsDelta

values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=6),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=4), children, max_size=3)
    ),
    max_leaves=8,
)
argument_texts = st.builds(
    lambda obj, spaced, ascii_only: json.dumps(
        obj, separators=(", ", ": ") if spaced else (",", ":"), ensure_ascii=ascii_only
    ),
    st.dictionaries(st.text(max_size=5), values, max_size=4),
    st.booleans(),
    st.booleans(),
)


def _pieces(text: str, cuts: list[int]) -> list[str]:
    bounds = sorted({0, len(text), *(min(c, len(text)) for c in cuts)})
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


def _deltas(events: list[StreamEvent]) -> str:
    return "".join(e.delta for e in events if isinstance(e, ToolCallArgsDelta))


def _final(events: list[StreamEvent] | LLMResponse) -> str:
    response = (
        events
        if isinstance(events, LLMResponse)
        else next(e.response for e in events if isinstance(e, ResponseCompleted))
    )
    (call,) = response.message.tool_calls
    return call.arguments


cuts = st.lists(st.integers(0, 200), max_size=6)


@given(arguments=argument_texts, cuts=cuts)
def test_anthropic_deltas_add_up_to_the_arguments(arguments: str, cuts: list[int]) -> None:
    assembler = StreamAssembler()
    events = assembler.feed("message_start", {"message": {"id": "m", "model": "c", "content": []}})
    block = {"type": "tool_use", "id": "t1", "name": "f", "input": {}}
    events += assembler.feed("content_block_start", {"index": 0, "content_block": block})
    for piece in _pieces(arguments, cuts):
        delta = {"type": "input_json_delta", "partial_json": piece}
        events += assembler.feed("content_block_delta", {"index": 0, "delta": delta})
    events += assembler.feed("content_block_stop", {"index": 0})
    events += assembler.feed("message_delta", {"delta": {"stop_reason": "tool_use"}, "usage": {}})
    events += assembler.feed("message_stop", {})
    final = _final(assembler.finish())
    assert _deltas(events) == final
    assert json.loads(final) == json.loads(arguments)


@given(arguments=argument_texts, cuts=cuts)
def test_chat_completions_deltas_add_up_to_the_arguments(arguments: str, cuts: list[int]) -> None:
    assembler = ChunkAssembler()
    events: list[StreamEvent] = []
    for position, piece in enumerate(_pieces(arguments, cuts) or [""]):
        fragment: dict[str, Any] = {"index": 0, "function": {"arguments": piece}}
        if position == 0:
            fragment.update(id="call_1", type="function")
            fragment["function"]["name"] = "f"
        events += assembler.feed({"choices": [{"index": 0, "delta": {"tool_calls": [fragment]}}]})
    events += assembler.feed({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    assert _deltas(events) == _final(assembler.finish())


@given(arguments=argument_texts, cuts=cuts)
def test_responses_deltas_add_up_to_the_arguments(arguments: str, cuts: list[int]) -> None:
    assembler = ResponsesStreamAssembler(model="gpt-5")
    item: dict[str, Any] = {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": "f",
        "arguments": "",
    }
    events = assembler.feed({"type": "response.output_item.added", "output_index": 0, "item": item})
    for piece in _pieces(arguments, cuts):
        events += assembler.feed(
            {"type": "response.function_call_arguments.delta", "output_index": 0, "delta": piece}
        )
    done = {**item, "arguments": arguments}
    events += assembler.feed(
        {"type": "response.function_call_arguments.done", "output_index": 0, "arguments": arguments}
    )
    events += assembler.feed({"type": "response.output_item.done", "output_index": 0, "item": done})
    completed = {"id": "r", "status": "completed", "output": [done]}
    events += assembler.feed({"type": "response.completed", "response": completed})
    assert _deltas(events) == _final(events)


@given(arguments=st.dictionaries(st.text(max_size=5), values, max_size=4))
def test_gemini_deltas_add_up_to_the_arguments(arguments: dict[str, Any]) -> None:
    assembler = ResponseAssembler(model="gemini-2.5-flash")
    chunk = genai_types.GenerateContentResponse(
        candidates=[
            genai_types.Candidate(
                content=genai_types.Content(
                    role="model",
                    parts=[
                        genai_types.Part(function_call=genai_types.FunctionCall(name="f", args=arguments))
                    ],
                ),
                finish_reason=genai_types.FinishReason.STOP,
            )
        ]
    )
    events = assembler.feed(chunk)
    assert _deltas(events) == _final(assembler.finish(streamed=True))
