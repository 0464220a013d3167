"""Compaction across a handoff: the target agent gets a valid, compacted conversation, and a target
without its own ``compaction=`` keeps its long tool loop under the window with the source's."""

from __future__ import annotations

from kanawa import Agent, AgentConfiguration, Compaction, FunctionLLM, tool
from kanawa.llm.testing import ModelRequest
from kanawa.llm.tokens import count_message_tokens
from kanawa.types import AssistantMessage, Message, ToolCall, ToolMessage
from tests.loop.compaction.histories import pairing_errors

WINDOW = 2_000
FILLER = "lorem ipsum dolor sit amet " * 40


@tool
def fetch_page(n: int) -> str:
    """Fetch one page.

    Args:
        n: the page number
    """
    return f"page {n}: {FILLER}"


def team(compaction: Compaction | None, seen: list[ModelRequest]) -> Agent[str]:
    def read(request: ModelRequest) -> AssistantMessage | str:
        seen.append(request)
        last = request.messages[-1]
        done = int(last.tool_call_id.split("_")[1]) + 1 if isinstance(last, ToolMessage) else 0
        if done >= 40:
            return f"read {done} pages"
        return AssistantMessage(tool_calls=(ToolCall(f"r_{done}", "fetch_page", f'{{"n": {done}}}'),))

    def coordinate(request: ModelRequest) -> AssistantMessage | str:
        last = request.messages[-1]
        if isinstance(last, ToolMessage) and last.name == "transfer_to_reader":
            return f"coordinator: {last.text}"
        return AssistantMessage(
            tool_calls=(ToolCall("h_1", "transfer_to_reader", '{"message": "read it all"}'),)
        )

    reader = Agent(
        "reader",
        "Read every page.",
        tools=[fetch_page],
        model=FunctionLLM(read, model="reader"),
        config=AgentConfiguration(max_steps=50, max_tool_calls_per_tool=None),
    )
    return Agent(
        "coordinator",
        "Hand reading to the reader.",
        model=FunctionLLM(coordinate, model="coordinator"),
        handoffs=[reader],
        compaction=compaction,
    )


def long_history() -> list[Message]:
    history: list[Message] = []
    for n in range(20):
        call = ToolCall(f"old_{n}", "fetch_page", f'{{"n": {n}}}')
        history += [
            AssistantMessage(tool_calls=(call,)),
            ToolMessage(call.id, f"page {n}: {FILLER}", name=call.name),
        ]
    return history


async def test_a_handoff_target_without_compaction_uses_the_sources() -> None:
    seen: list[ModelRequest] = []
    agent = team(Compaction(context_window=WINDOW), seen)
    result = await agent.arun("Read the document.", history=long_history())
    assert result.output.startswith("coordinator: ")
    assert "read 40 pages" in result.output
    assert len(seen) == 41
    for request in seen:
        assert pairing_errors(request.messages) == []
        assert count_message_tokens(list(request.messages)) <= 0.8 * WINDOW
    assert pairing_errors(result.messages) == []


async def test_without_compaction_the_handed_over_conversation_grows_past_the_window() -> None:
    seen: list[ModelRequest] = []
    await team(None, seen).arun("Read the document.", history=long_history())
    assert count_message_tokens(list(seen[-1].messages)) > 5 * WINDOW
