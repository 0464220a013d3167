"""Properties of the strategy's conversions: what goes to Dify comes back unchanged, and streamed tool
calls reassemble exactly however the host splits them (seed 001 §4.5, §4.7)."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from kanawa.types import AssistantMessage, Message, SystemMessage, ToolCall, ToolMessage, UserMessage
from tests.gpt5_agent_strategies.conftest import PLUGIN
from tests.wire.dify_paths import plugin_modules

(flow,) = plugin_modules(PLUGIN, "internal.flow")

texts = st.text(max_size=40)
ids = st.text(alphabet="abcdefghij0123456789_", min_size=1, max_size=8)
calls = st.lists(
    st.builds(ToolCall, ids, st.sampled_from(["lookup", "weather"]), texts),
    max_size=3,
    unique_by=lambda c: c.id,
)
opaque = st.none() | st.dictionaries(
    st.sampled_from(["kanawa_responses", "other"]), st.integers() | texts, max_size=2
)
messages = st.lists(
    st.one_of(
        st.builds(SystemMessage, texts),
        st.builds(UserMessage, texts),
        st.builds(
            lambda text, tool_calls, body: AssistantMessage(
                text=text,
                tool_calls=tuple(tool_calls),
                provider_details={flow.OPAQUE_DETAIL: body} if body is not None else None,
            ),
            texts,
            calls,
            opaque,
        ),
        st.builds(lambda i, t, n: ToolMessage(i, t, name=n), ids, texts, st.sampled_from(["lookup", ""])),
    ),
    max_size=6,
)


@settings(deadline=None)
@given(messages)
def test_messages_survive_the_trip_to_dify_and_back(conversation: list[Message]) -> None:
    back = flow.to_kanawa_messages(flow.to_prompt_messages(conversation))
    expected = [
        ToolMessage(m.tool_call_id, m.text, name=m.name) if isinstance(m, ToolMessage) else m
        for m in conversation
    ]
    assert back == expected


@settings(deadline=None)
@given(calls, st.data())
def test_streamed_tool_calls_reassemble_however_they_are_split(
    expected: list[ToolCall], data: st.DataObject
) -> None:
    assembler = flow._Calls()
    for call in expected:
        cuts = sorted(data.draw(st.sets(st.integers(0, len(call.arguments)), max_size=3)))
        bounds = [0, *cuts, len(call.arguments)]
        pieces = [call.arguments[a:b] for a, b in itertools.pairwise(bounds)]
        first, *rest = pieces
        assembler.feed([{"id": call.id, "function": {"name": call.name, "arguments": first}}])
        for piece in rest:
            assembler.feed([{"id": "", "function": {"name": "", "arguments": piece}}])
    assert assembler.calls() == tuple(expected)
