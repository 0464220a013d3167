"""Short-term memory: the bounded per-session window and token-aware trimming that never separates a
tool call from its result (seed 002 §2 "短期 (deque)")."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kanawa.agents.memory import ShortTermMemory, group_units, trim_messages
from kanawa.llm.tokens import count_message_tokens, estimate_text_tokens
from kanawa.types import AssistantMessage, Message, SystemMessage, ToolCall, ToolMessage, UserMessage
from tests.support.identity import same

WORDS = st.text(alphabet="abc xyz", min_size=0, max_size=40)


@st.composite
def conversations(draw: st.DrawFn) -> list[Message]:
    """A well-formed conversation: optional system message, then turns of a user message followed by
    assistant messages, some with parallel tool calls each answered by a tool message (the last
    assistant message may have unanswered calls, as a run paused for approval has)."""
    messages: list[Message] = []
    if draw(st.booleans()):
        messages.append(SystemMessage(draw(WORDS)))
    next_id = 0
    for _ in range(draw(st.integers(1, 6))):
        messages.append(UserMessage(draw(WORDS)))
        for _ in range(draw(st.integers(0, 3))):
            calls = []
            for _ in range(draw(st.integers(0, 3))):
                calls.append(ToolCall(f"call_{next_id}", "lookup", draw(WORDS)))
                next_id += 1
            messages.append(AssistantMessage(text=draw(WORDS), tool_calls=tuple(calls)))
            answers = [ToolMessage(c.id, draw(WORDS), name=c.name) for c in calls]
            messages.extend(draw(st.permutations(answers)))
    if draw(st.booleans()):
        messages.append(AssistantMessage(tool_calls=(ToolCall(f"call_{next_id}", "approve", "{}"),)))
    return messages


def answered_ids(messages: Sequence[Message]) -> set[str]:
    return {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}


def assert_pairs_intact(original: Sequence[Message], trimmed: Sequence[Message]) -> None:
    """Every kept tool result has its call kept, and every kept call that was answered in the original
    has its answer kept."""
    calls = {c.id for m in trimmed if isinstance(m, AssistantMessage) for c in m.tool_calls}
    results = answered_ids(trimmed)
    assert results <= calls
    assert calls & answered_ids(original) <= results


def tokens(messages: Sequence[Message]) -> int:
    return count_message_tokens(list(messages)) if messages else 0


@settings(deadline=None)
@given(conversations(), st.integers(0, 400))
def test_trimming_never_separates_a_tool_call_from_its_result(messages: list[Message], budget: int) -> None:
    trimmed = trim_messages(messages, max_tokens=budget, count=estimate_text_tokens)
    assert_pairs_intact(messages, trimmed)

    # the pinned system message, then a contiguous, ordered suffix of the rest
    pinned = [m for m in messages[:1] if isinstance(m, SystemMessage)]
    assert same(trimmed[: len(pinned)], pinned)
    rest = trimmed[len(pinned) :]
    assert same(rest, messages[len(messages) - len(rest) :])
    # the current turn (the last unit) is always kept
    last_unit = group_units(messages[len(pinned) :])[-1]
    assert same(trimmed[-len(last_unit) :], last_unit)


@settings(deadline=None)
@given(conversations(), st.integers(0, 400))
def test_trimmed_conversation_is_within_budget_whenever_possible(
    messages: list[Message], budget: int
) -> None:
    trimmed = trim_messages(messages, max_tokens=budget, count=estimate_text_tokens)
    pinned = [m for m in messages[:1] if isinstance(m, SystemMessage)]
    minimum = pinned + group_units(messages[len(pinned) :])[-1]
    if tokens(minimum) <= budget:
        assert tokens(trimmed) <= budget
    else:
        assert same(trimmed, minimum)
    if tokens(messages) <= budget:
        assert same(trimmed, messages)


def test_trimming_drops_the_oldest_turns_and_keeps_history_starting_at_a_user_message() -> None:
    call = ToolCall("c1", "lookup", '{"q": "weather"}')
    messages: list[Message] = [
        SystemMessage("be brief"),
        UserMessage("first question " * 20),
        AssistantMessage(tool_calls=(call,)),
        ToolMessage("c1", "sunny " * 20, name="lookup"),
        AssistantMessage(text="it is sunny"),
        UserMessage("second question"),
    ]
    budget = tokens([messages[0], *messages[4:]])
    trimmed = trim_messages(messages, max_tokens=budget)
    # the answer "it is sunny" alone would fit, but history must start at a user turn
    assert trimmed == [messages[0], messages[5]]
    assert trim_messages(messages, max_tokens=10_000) == messages


def test_a_tool_result_whose_call_is_gone_is_dropped() -> None:
    messages: list[Message] = [ToolMessage("gone", "orphan"), UserMessage("hi")]
    assert trim_messages(messages, max_tokens=10_000) == [UserMessage("hi")]


def test_negative_budget_is_refused() -> None:
    with pytest.raises(ValueError, match="max_tokens"):
        trim_messages([UserMessage("hi")], max_tokens=-1)


def turn(i: int, *, tools: int = 0) -> list[Message]:
    calls = tuple(ToolCall(f"t{i}_{j}", "lookup", "{}") for j in range(tools))
    out: list[Message] = [UserMessage(f"question {i}")]
    if calls:
        out.append(AssistantMessage(tool_calls=calls))
        out.extend(ToolMessage(c.id, "result", name="lookup") for c in calls)
    out.append(AssistantMessage(text=f"answer {i}"))
    return out


def test_session_windows_are_bounded_and_evict_whole_exchanges() -> None:
    memory = ShortTermMemory(max_messages=6)
    for i in range(5):
        memory.append("alice", turn(i, tools=2))  # 5 messages per turn
    window = memory.history("alice")
    assert len(window) <= 6
    assert window == turn(4, tools=2)  # the newest exchange, complete
    assert_pairs_intact(turn(4, tools=2), window)
    assert memory.history("bob") == []


def test_sessions_are_separate_and_the_least_recently_used_is_forgotten() -> None:
    memory = ShortTermMemory(max_sessions=2)
    memory.append("a", turn(1))
    memory.append("b", turn(2))
    memory.history("a")  # touch a
    memory.append("c", turn(3))
    assert "b" not in memory
    assert memory.history("a") == turn(1)
    assert memory.history("c") == turn(3)
    assert len(memory) == 2


def test_record_keeps_a_runs_conversation_without_system_messages() -> None:
    memory = ShortTermMemory()
    memory.record("s", [SystemMessage("sys"), SystemMessage("memory block"), *turn(1)])
    memory.record("s", [SystemMessage("sys"), *turn(1), *turn(2)])
    assert memory.history("s") == [*turn(1), *turn(2)]
    memory.clear("s")
    assert memory.history("s") == []


def test_history_is_trimmed_to_the_token_budget() -> None:
    memory = ShortTermMemory(max_tokens=40)
    for i in range(20):
        memory.append("s", turn(i))
    window = memory.history("s")
    assert tokens(window) <= 40
    assert window[-1] == AssistantMessage(text="answer 19")
    assert isinstance(window[0], UserMessage)
    assert len(memory.history("s", max_tokens=100_000)) == 40
