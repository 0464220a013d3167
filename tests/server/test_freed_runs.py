"""A served run and its stream are freed when they end, by reference counting: no reference cycle
keeps the runner, its messages and trace, or the stream's sender (and the server's ``send`` it holds)
alive until the garbage collector's next full pass — on a busy server, thousands of finished runs."""

from __future__ import annotations

import gc

import httpx

from kanawa import Agent, tool
from kanawa.llm.testing import FunctionLLM
from kanawa.llm.testing.models import ModelRequest, Script
from kanawa.server.http.app import create_app
from kanawa.types import AssistantMessage, ToolCall
from tests.server.conftest import settings_for
from tests.server.sse import AUTH_A


@tool
def look_up(topic: str) -> str:
    """Look a topic up.

    Args:
        topic: what to look up
    """
    return f"notes on {topic}"


def _reader(request: ModelRequest) -> Script:
    if not request.tool_results:
        return AssistantMessage(tool_calls=(ToolCall("call_1", "look_up", '{"topic": "joinery"}'),))
    return f"Joinery: {request.tool_results[-1].text}."


async def test_finished_runs_and_their_streams_leave_no_cycles_for_the_collector() -> None:
    agent = Agent("reader", "Reads.", tools=[look_up], model=FunctionLLM(_reader))
    app = create_app(agents={"reader": agent}, settings=settings_for("memory", None, sse_ping=0.05))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            body = {"agent": "reader", "input": "joinery?"}
            await http.post("/v1/runs", json=body, headers=AUTH_A)  # first-use caches
            gc.collect()
            gc.disable()
            try:
                for _ in range(5):
                    answered = await http.post("/v1/runs", json=body, headers=AUTH_A)
                    assert '"type":"done"' in answered.text
                gc.set_debug(gc.DEBUG_SAVEALL)
                gc.collect()
                left = {type(thing).__name__ for thing in gc.garbage}
            finally:
                gc.set_debug(0)
                gc.garbage.clear()
                gc.enable()
    assert not left & {"AgentLoopRunner", "RunContext", "DirectSender", "RunEventStream"}, sorted(left)
