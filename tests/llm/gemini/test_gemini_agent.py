"""End to end: ``kanawa.Agent`` over the Gemini wire (seed 003 provider table).

Gemini answers ``finishReason: STOP`` even when it calls functions. The adapter reports that as
``end_turn`` with tool calls, and the loop's ``StandardTerminationPolicy`` must still run the tools —
here two of them in parallel — then send both results back in one ``user`` content with the thought
signature replayed on the function call."""

from __future__ import annotations

import base64
from typing import Any

from pydantic import BaseModel

from kanawa import Agent
from kanawa.llm.gemini.adapter import GeminiAdapter
from kanawa.loop.events import ToolCallStep, ToolResultStep
from kanawa.types import TextDelta
from tests.llm.gemini.wire import (
    API_KEY,
    SIGNATURE,
    body,
    call,
    chunks,
    contents,
    field,
    signature_bytes,
    stream_reply,
    text,
)
from tests.wire.server import RecordedRequest, Reply, WireServer, json_reply


def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: first addend
        b: second addend
    """
    return a + b


def multiply(a: int, b: int) -> int:
    """Multiply two integers.

    Args:
        a: first factor
        b: second factor
    """
    return a * b


class Answer(BaseModel):
    value: int
    explanation: str


def function_responses(request: RecordedRequest) -> list[dict[str, Any]]:
    return [
        field(part, "functionResponse")
        for content in contents(request)
        for part in content["parts"]
        if "functionResponse" in part or "function_response" in part
    ]


def gemini(request: RecordedRequest, *, streamed: bool) -> Reply:
    """A scripted Gemini: both tools in parallel first (STOP), then the answer once results are in."""
    sent = request.json()
    if not function_responses(request):
        parts = [call("add", {"a": 2, "b": 3}, signature=SIGNATURE), call("multiply", {"a": 4, "b": 5})]
    elif "responseJsonSchema" in sent.get("generationConfig", {}) or "response_json_schema" in str(sent):
        parts = [text('{"value": 25, "explanation": "5 + 20"}')]
    else:
        parts = [text("2 + 3 = 5 and 4 × 5 = 20, so 25.")]
    return stream_reply(chunks(parts)) if streamed else json_reply(body(parts))


def adapter_for(wire_server: WireServer) -> GeminiAdapter:
    return GeminiAdapter("gemini-2.5-flash", api_key=API_KEY, base_url=wire_server.base_url, timeout=5.0)


async def test_stop_with_function_calls_runs_both_tools_and_finishes(wire_server: WireServer) -> None:
    wire_server.default = lambda request: gemini(request, streamed=False)
    adapter = adapter_for(wire_server)
    agent = Agent("calc", "Answer with arithmetic.", tools=[add, multiply], model=adapter)

    result = await agent.arun("What is 2 + 3 plus 4 × 5?")

    assert result.completed
    assert result.output == "2 + 3 = 5 and 4 × 5 = 20, so 25."
    calls = [s.call for s in result.steps if isinstance(s, ToolCallStep)]
    results = [s.result for s in result.steps if isinstance(s, ToolResultStep)]
    assert [c.name for c in calls] == ["add", "multiply"]
    assert [(r.name, r.is_error) for r in results] == [("add", False), ("multiply", False)]

    first, second = wire_server.requests[:2]
    assert "tools" in first.json()
    assert "systemInstruction" in first.json()
    model_turn, results_turn = contents(second)[1:3]
    assert model_turn["role"] == "model"
    assert signature_bytes(field(model_turn["parts"][0], "thoughtSignature")) == base64.b64decode(SIGNATURE)
    assert results_turn["role"] == "user"
    responses = function_responses(second)
    assert [(r["name"], r["response"]) for r in responses] == [
        ("add", {"result": "5"}),
        ("multiply", {"result": "20"}),
    ]
    assert result.usage.requests == len(wire_server.requests)


async def test_streamed_run_with_structured_output_over_gemini(wire_server: WireServer) -> None:
    wire_server.default = lambda request: gemini(request, streamed=True)
    agent = Agent(
        "calc",
        "Answer with arithmetic.",
        tools=[add, multiply],
        model=adapter_for(wire_server),
        output_type=Answer,
    )

    runner = agent.stream("What is 2 + 3 plus 4 × 5?")
    deltas = [event async for event in runner if isinstance(event, TextDelta)]
    result = runner.result

    assert result.output == Answer(value=25, explanation="5 + 20")
    assert deltas, "text deltas reach the caller while streaming"
    assert [s.call.name for s in result.steps if isinstance(s, ToolCallStep)] == ["add", "multiply"]
    paths = {r.path for r in wire_server.requests}
    assert paths == {"/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"}
    last = wire_server.requests[-1].json()
    assert "tools" not in last, "the response schema is never sent together with tools (seed 003)"
    assert field(last["generationConfig"], "responseJsonSchema")["required"] == ["value", "explanation"]
