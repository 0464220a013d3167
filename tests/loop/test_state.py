"""Seed 003 "状態管理": steps, phases and the tool-call history with input hashes."""

from __future__ import annotations

from kanawa.loop.state import (
    COMPLETED,
    TOOL_USE,
    AgentLoopState,
    CompletedPhase,
    FinalOutputPhase,
    input_hash,
)
from kanawa.types import ToolCall


def test_input_hash_is_canonical_json_of_parsed_arguments() -> None:
    assert input_hash('{"a": 1, "b": [1, 2]}') == input_hash('{ "b":[1,2],"a":1 }')
    assert input_hash('{"a": 1}') != input_hash('{"a": 2}')


def test_input_hash_treats_empty_arguments_as_empty_object() -> None:
    assert input_hash("") == input_hash("{}") == input_hash("  ")


def test_input_hash_falls_back_to_the_raw_string_for_bad_json() -> None:
    assert input_hash("{not json") == input_hash("{not json")
    assert input_hash("{not json") != input_hash("{not  json")


def test_record_tool_call_keeps_name_hash_timestamp_and_counts() -> None:
    state = AgentLoopState()
    state.increment_step()
    record = state.record_tool_call(ToolCall("c1", "search", '{"q": "x"}'))
    state.record_tool_call(ToolCall("c2", "search", '{"q":"x"}'))
    state.record_tool_call(ToolCall("c3", "search", '{"q": "y"}'))
    assert record.name == "search"
    assert record.input_hash == input_hash('{"q": "x"}')
    assert record.timestamp > 0
    assert record.step == 1
    assert record.call_id == "c1"
    assert len(state.tool_call_history) == 3
    assert state.count_duplicate_tool_calls("search", input_hash('{"q": "x"}')) == 2
    assert state.count_tool_calls("search") == 3
    assert state.count_tool_calls("other") == 0


def test_phases_start_in_tool_use_and_complete() -> None:
    state = AgentLoopState()
    assert state.phase == TOOL_USE
    assert state.current_step == 0
    state.phase = FinalOutputPhase(retry_count=1)
    assert state.phase.kind == "final_output"
    assert not state.is_completed
    state.mark_completed()
    phase: object = state.phase
    assert phase == COMPLETED
    assert isinstance(phase, CompletedPhase)
    assert state.is_completed


def test_group_identical_groups_one_calls_object_once_and_a_new_one_afresh() -> None:
    state = AgentLoopState()
    calls = (ToolCall("1", "f", '{"a": 1, "b": 2}'), ToolCall("2", "f", '{"b": 2, "a": 1}'))
    first = state.group_identical(calls)
    assert first == ([calls[0]], [0, 0])
    assert state.group_identical(calls) is first  # the policy and the turn share one grouping
    other = (ToolCall("3", "g", "{}"), ToolCall("4", "f", '{"a": 1, "b": 2}'))
    assert state.group_identical(other) == ([other[0], other[1]], [0, 1])
    assert state.group_identical(list(calls)) == first  # equal calls in another object: grouped again
