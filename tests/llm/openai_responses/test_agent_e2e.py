"""End to end: ``kanawa.Agent`` with two tools and a structured answer, talking to a scripted Responses
API server over the wire — parallel function calls, tool outputs, reasoning replay, final JSON."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel

from kanawa import Agent, tool
from kanawa.llm.openai.responses import OpenAIResponsesAdapter
from tests.llm.openai_responses.wire import ResponseScript
from tests.wire.server import RecordedRequest, Reply, WireServer


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: first addend
        b: second addend
    """
    return a + b


@tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers.

    Args:
        a: first factor
        b: second factor
    """
    return a * b


class Answer(BaseModel):
    sum: int
    product: int


def scripted_api(request: RecordedRequest) -> Reply:
    """Answer like the model would, from what the request contains (so call order is not assumed)."""
    body: dict[str, Any] = request.json()
    items = body["input"]
    script = ResponseScript(response_id=f"resp_{len(items)}")
    fmt = body.get("text", {}).get("format", {})
    if fmt.get("type") == "json_schema":
        script.message(json.dumps({"sum": 42, "product": 42}))
    elif any(item.get("type") == "function_call_output" for item in items):
        script.message("40 + 2 = 42 and 6 × 7 = 42.")
    else:
        script.reasoning("Two independent calculations; call both tools.", encrypted="gAAAA-e2e-reasoning")
        script.function_call("add", '{"a": 40, "b": 2}', call_id="call_add")
        script.function_call("multiply", '{"a": 6, "b": 7}', call_id="call_mul")
    script.completed()
    return script.sse() if body["stream"] else script.json()


@pytest.mark.parametrize("stream", [False, True], ids=["chat", "stream"])
async def test_agent_runs_a_two_tool_conversation_over_the_wire(
    stream: bool, wire_server: WireServer, make_adapter: Any
) -> None:
    wire_server.default = scripted_api
    adapter: OpenAIResponsesAdapter = make_adapter("gpt-5")
    agent = Agent(
        "calc", "Use the tools for arithmetic.", tools=[add, multiply], model=adapter, output_type=Answer
    )

    result = await agent.arun("What are 40+2 and 6*7?", stream=stream)

    assert result.output == Answer(sum=42, product=42)
    assert result.usage.requests == len(wire_server.requests) == 3
    assert result.usage.reasoning_tokens == 3 * 48
    first, second, final = (r.json() for r in wire_server.requests)
    assert first["instructions"] == second["instructions"] == "Use the tools for arithmetic."
    assert [t["name"] for t in first["tools"]] == ["add", "multiply"]
    assert all(r.json()["stream"] is stream for r in wire_server.requests)
    replay = second["input"]
    assert replay[1]["type"] == "reasoning"
    assert replay[1]["encrypted_content"] == "gAAAA-e2e-reasoning"
    outputs = {i["call_id"]: i["output"] for i in replay if i.get("type") == "function_call_output"}
    assert outputs == {"call_add": "42", "call_mul": "42"}
    assert "tools" not in final
    assert final["text"]["format"]["type"] == "json_schema"
