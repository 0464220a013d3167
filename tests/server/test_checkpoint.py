"""Checkpoints: what a continuation needs survives the round trip through JSON text, and a checkpoint
saved before the loop's counters, its phase, the cost and approval decisions were kept still loads."""

from __future__ import annotations

import json

from kanawa.loop.approval import Approvals
from kanawa.loop.state import AgentLoopState, ToolCallRecord, input_hash
from kanawa.server.checkpoint import Checkpoint
from kanawa.types import AssistantMessage, SystemMessage, ToolCall, ToolMessage, Usage, UserMessage

MESSAGES = (
    SystemMessage("Be brief."),
    UserMessage("count"),
    AssistantMessage(tool_calls=(ToolCall("c1", "count", '{"n": 1}'),)),
    ToolMessage("c1", "one", name="count"),
    AssistantMessage(tool_calls=(ToolCall("c2", "count", '{"n": 2}'), ToolCall("s1", "send", "{}"))),
)


def test_counters_cost_and_decisions_survive_the_round_trip() -> None:
    calls = (
        ToolCallRecord("count", input_hash('{"n": 1}'), 1700000000.5, call_id="c1", step=1),
        ToolCallRecord("count", input_hash('{"n": 2}'), 1700000001.25, call_id="c2", step=2),
        ToolCallRecord("send", input_hash("{}"), 1700000001.25, call_id="s1", step=2),
    )
    point = Checkpoint(
        "counter",
        MESSAGES,
        next_seq=17,
        usage=Usage(
            input_tokens=120,
            output_tokens=30,
            reasoning_tokens=4,
            cached_tokens=8,
            cache_write_tokens=5,
            requests=2,
        ),
        steps=2,
        tool_calls=calls,
        cost_usd=0.00042,
        approvals=Approvals(approved=("s1",), rejected={"c2": "not now"}),
        decode_retries=1,
    )
    back = Checkpoint.loads(point.dumps())
    assert back.messages == MESSAGES
    assert back.tool_calls == calls
    assert back.cost_usd == 0.00042
    assert back.approvals is not None
    assert list(back.approvals.approved) == ["s1"]
    assert dict(back.approvals.rejected) == {"c2": "not now"}
    assert (back.next_seq, back.usage, back.steps, back.fresh) == (
        17,
        Usage(
            input_tokens=120,
            output_tokens=30,
            reasoning_tokens=4,
            cached_tokens=8,
            cache_write_tokens=5,
            requests=2,
        ),
        2,
        False,
    )
    assert back.decode_retries == 1
    unknown = Checkpoint.loads(Checkpoint("counter", MESSAGES, 3, cost_usd=None).dumps())
    assert unknown.cost_usd is None, "an unknown cost stays unknown, never 0"
    assert unknown.approvals is None


def test_restored_tool_calls_count_towards_the_runs_limits() -> None:
    state = AgentLoopState()
    state.restore_tool_calls(
        [
            ToolCallRecord("count", input_hash('{"n": 1}'), 1.0, call_id="c1", step=1),
            ToolCallRecord("count", input_hash('{"n": 1}'), 2.0, call_id="c2", step=2),
            ToolCallRecord("send", input_hash("{}"), 2.0, call_id="s1", step=2),
        ]
    )
    assert state.count_tool_calls("count") == 2
    assert state.count_tool_calls("send") == 1
    assert state.count_duplicate_tool_calls("count", input_hash('{ "n" : 1 }')) == 2
    assert [r.call_id for r in state.tool_call_history] == ["c1", "c2", "s1"]
    state.record_tool_call(ToolCall("c3", "count", '{"n": 3}'))
    assert state.count_tool_calls("count") == 3


def test_a_checkpoint_from_before_the_counters_still_loads() -> None:
    old = json.loads(
        Checkpoint(
            "counter",
            MESSAGES,
            9,
            Usage(input_tokens=10, output_tokens=2, reasoning_tokens=0, cached_tokens=0, requests=1),
            1,
        ).dumps()
    )
    for key in ("tool_calls", "cost_usd", "approvals", "decode_retries"):
        del old[key]
    point = Checkpoint.loads(json.dumps(old))
    assert point.messages == MESSAGES
    assert (point.next_seq, point.usage, point.steps) == (
        9,
        Usage(input_tokens=10, output_tokens=2, reasoning_tokens=0, cached_tokens=0, requests=1),
        1,
    )
    assert point.tool_calls == ()
    assert point.cost_usd == 0.0
    assert point.approvals is None
    assert point.decode_retries is None, "the tool-use phase"
