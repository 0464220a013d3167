"""Random conversation histories for the compaction tests, and the pairing rules the providers apply.

:func:`histories` draws valid histories: leading system messages, then user turns, assistant answers,
and assistant turns with tool calls (reasoning included, parallel calls answered in any order).
:func:`pairing_errors` lists what a provider would reject in a history: a tool result whose call is not
in the assistant message before it, a call without its result, a reasoning-only turn cut from its call.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from hypothesis import strategies as st

from kanawa.types import (
    AssistantMessage,
    Message,
    ReasoningPart,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)

_words = st.text(alphabet="abcdefghij klmnop", min_size=0, max_size=400)


@st.composite
def _tool_turn(draw: st.DrawFn, turn: int) -> list[Message]:
    count = draw(st.integers(min_value=1, max_value=3))
    calls = tuple(
        ToolCall(f"call_{turn}_{i}", f"tool{i}", json.dumps({"q": draw(_words)[:40]})) for i in range(count)
    )
    item = {"type": "reasoning", "id": f"rs_{turn}"}
    reasoning = (
        (ReasoningPart(text="thinking", provider="openai", payload=item),) if draw(st.booleans()) else ()
    )
    results: list[Message] = [ToolMessage(c.id, draw(_words), name=c.name) for c in calls]
    order = draw(st.permutations(results))
    return [AssistantMessage(text=draw(_words)[:50], tool_calls=calls, reasoning=reasoning), *order]


@st.composite
def histories(draw: st.DrawFn, *, min_turns: int = 1, max_turns: int = 25) -> list[Message]:
    """A valid history: 0-2 system messages, then turns of user text, answers and tool rounds."""
    messages: list[Message] = [SystemMessage(draw(_words)) for _ in range(draw(st.integers(0, 2)))]
    messages.append(UserMessage(draw(_words)))
    for turn in range(draw(st.integers(min_turns, max_turns))):
        kind = draw(st.sampled_from(["user", "answer", "tools", "tools"]))
        if kind == "user":
            messages.append(UserMessage(draw(_words)))
        elif kind == "answer":
            messages.append(AssistantMessage(text=draw(_words)))
        else:
            messages.extend(draw(_tool_turn(turn)))
    return messages


def pairing_errors(messages: Sequence[Message]) -> list[str]:
    """What a provider would refuse: orphaned results, calls without results (before the next
    non-tool message), duplicate results."""
    errors: list[str] = []
    open_calls: set[str] = set()
    for index, message in enumerate(messages):
        if isinstance(message, ToolMessage):
            if message.tool_call_id not in open_calls:
                errors.append(f"message {index}: tool result {message.tool_call_id} has no call before it")
            open_calls.discard(message.tool_call_id)
            continue
        if open_calls:
            errors.append(f"message {index}: calls {sorted(open_calls)} have no result")
        open_calls = {c.id for c in message.tool_calls} if isinstance(message, AssistantMessage) else set()
    if open_calls:
        errors.append(f"end: calls {sorted(open_calls)} have no result")
    return errors
