"""An agent's turn mixing an inline sync tool (run on the event loop) and a plain sync tool (run in a
worker thread): both answer the model, in call order, and the run's steps are the same either way."""

from __future__ import annotations

import threading

from kanawa import Agent, tool
from kanawa.llm.testing import FunctionLLM, ModelRequest
from kanawa.loop.events import ToolCallStep, ToolResultStep
from kanawa.types import AssistantMessage, ToolCall, ToolMessage


async def test_inline_and_threaded_sync_tools_answer_in_call_order() -> None:
    threads: dict[str, int] = {}

    @tool(inline=True)
    def double(n: int) -> int:
        """Double a number."""
        threads["double"] = threading.get_ident()
        return 2 * n

    @tool
    def square(n: int) -> int:
        """Square a number."""
        threads["square"] = threading.get_ident()
        return n * n

    def respond(request: ModelRequest) -> AssistantMessage | str:
        if not any(m.role == "tool" for m in request.messages):
            return AssistantMessage(
                tool_calls=(ToolCall("a", "square", '{"n": 3}'), ToolCall("b", "double", '{"n": 4}'))
            )
        answers = [m for m in request.messages if isinstance(m, ToolMessage)]
        return " ".join(f"{m.tool_call_id}={m.text}" for m in answers)

    agent = Agent("mixed", instructions="Compute.", tools=[double, square], model=FunctionLLM(respond))
    result = await agent.arun("go")
    assert result.output == "a=9 b=8"
    assert threads["double"] == threading.get_ident()
    assert threads["square"] != threading.get_ident()
    kinds = [(type(s).__name__, getattr(getattr(s, "call", None), "id", None)) for s in result.steps]
    assert kinds[:4] == [
        (ToolCallStep.__name__, "a"),
        (ToolResultStep.__name__, None),
        (ToolCallStep.__name__, "b"),
        (ToolResultStep.__name__, None),
    ]
    results = [s.result for s in result.steps if isinstance(s, ToolResultStep)]
    assert [(r.call_id, r.is_error) for r in results] == [("a", False), ("b", False)]
