"""Seed 003 "終了ポリシーシステム": the stop-reason table, duplicate detection and the per-tool cap."""

from __future__ import annotations

import pytest

from kanawa.loop.config import AgentConfiguration
from kanawa.loop.policies import (
    ContinueWithTools,
    DuplicateDetectionPolicy,
    StandardTerminationPolicy,
    TerminateImmediately,
    TerminateWithOutput,
    TerminationDecision,
    TerminationPolicy,
    TerminationReason,
    ToolCallLimitPolicy,
    default_policy,
)
from kanawa.loop.state import AgentLoopState
from kanawa.types import LLMResponse, StopReason
from tests.loop.helpers import call, text_response, tools_response

STANDARD = StandardTerminationPolicy()


def decide(response: LLMResponse, state: AgentLoopState | None = None) -> TerminationDecision:
    return STANDARD.decide(response, state or AgentLoopState())


# ------------------------------------------------------------------------------- stop-reason table


def test_tool_use_with_calls_continues_with_tools() -> None:
    c = call("search", '{"q": "x"}')
    assert decide(tools_response(c)) == ContinueWithTools((c,))


def test_tool_use_without_calls_terminates_immediately() -> None:
    decision = decide(tools_response(stop=StopReason.TOOL_USE))
    assert decision == TerminateImmediately(TerminationReason.TOOL_USE_WITHOUT_CALLS)


def test_end_turn_with_text_terminates_with_output() -> None:
    assert decide(text_response("done")) == TerminateWithOutput("done")


def test_end_turn_with_tool_calls_continues_with_tools_gemini_stop() -> None:
    c = call("lookup")
    assert decide(tools_response(c, stop=StopReason.END_TURN, text="let me check")) == ContinueWithTools((c,))


def test_end_turn_without_text_or_tools_is_completed() -> None:
    assert decide(text_response("")) == TerminateImmediately(TerminationReason.COMPLETED)


def test_whitespace_only_text_counts_as_no_text() -> None:
    assert decide(text_response("  \n")) == TerminateImmediately(TerminationReason.COMPLETED)


def test_max_tokens_with_text_terminates_with_output() -> None:
    assert decide(text_response("partial", StopReason.MAX_TOKENS)) == TerminateWithOutput("partial")


def test_max_tokens_without_text_terminates_immediately_with_max_tokens() -> None:
    decision = decide(text_response("", StopReason.MAX_TOKENS))
    assert decision == TerminateImmediately(TerminationReason.MAX_TOKENS)


def test_max_tokens_ignores_possibly_truncated_tool_calls() -> None:
    decision = decide(tools_response(call("x", '{"a": '), stop=StopReason.MAX_TOKENS))
    assert decision == TerminateImmediately(TerminationReason.MAX_TOKENS)


def test_stop_sequence_with_text_terminates_with_output() -> None:
    assert decide(text_response("cut", StopReason.STOP_SEQUENCE)) == TerminateWithOutput("cut")


def test_stop_sequence_without_text_is_completed() -> None:
    decision = decide(text_response("", StopReason.STOP_SEQUENCE))
    assert decision == TerminateImmediately(TerminationReason.COMPLETED)


def test_none_stop_reason_falls_back_to_tools_first() -> None:
    c = call("x")
    assert decide(tools_response(c, stop=None, text="also text")) == ContinueWithTools((c,))


def test_none_stop_reason_falls_back_to_text_second() -> None:
    assert decide(text_response("answer", None)) == TerminateWithOutput("answer")


def test_none_stop_reason_falls_back_to_empty_last() -> None:
    assert decide(text_response("", None)) == TerminateImmediately(TerminationReason.COMPLETED)


# ------------------------------------------------------------------------------ duplicate detection


def _record(state: AgentLoopState, name: str, args: str, times: int) -> None:
    for _ in range(times):
        state.record_tool_call(call(name, args))


def test_duplicate_detection_allows_max_duplicates_identical_calls_then_terminates() -> None:
    policy = DuplicateDetectionPolicy(STANDARD, max_duplicates=2)
    state = AgentLoopState()
    response = tools_response(call("search", '{"q": "a"}'))
    assert isinstance(policy.decide(response, state), ContinueWithTools)  # count 0
    _record(state, "search", '{"q": "a"}', 1)
    assert isinstance(policy.decide(response, state), ContinueWithTools)  # count 1 < 2
    _record(state, "search", '{"q": "a"}', 1)
    decision = policy.decide(response, state)  # count 2 >= 2
    assert decision == TerminateImmediately(TerminationReason.DUPLICATE_TOOL_CALL_DETECTED, tool="search")
    assert isinstance(decision, TerminateImmediately)
    assert decision.reason == "duplicate_tool_call_detected"


def test_duplicate_detection_compares_canonical_arguments_not_text() -> None:
    policy = DuplicateDetectionPolicy(STANDARD, max_duplicates=1)
    state = AgentLoopState()
    _record(state, "search", '{"q": "a", "n": 1}', 1)
    decision = policy.decide(tools_response(call("search", '{ "n": 1,  "q": "a" }')), state)
    assert isinstance(decision, TerminateImmediately)


def test_duplicate_detection_different_input_or_tool_is_not_a_duplicate() -> None:
    policy = DuplicateDetectionPolicy(STANDARD, max_duplicates=1)
    state = AgentLoopState()
    _record(state, "search", '{"q": "a"}', 1)
    assert isinstance(policy.decide(tools_response(call("search", '{"q": "b"}')), state), ContinueWithTools)
    assert isinstance(policy.decide(tools_response(call("fetch", '{"q": "a"}')), state), ContinueWithTools)


def test_identical_calls_inside_one_response_are_one_call_unless_history_is_at_the_limit() -> None:
    policy = DuplicateDetectionPolicy(STANDARD, max_duplicates=2)
    state = AgentLoopState()
    three = tools_response(call("s", "{}", "a"), call("s", "{}", "b"), call("s", "{ }", "c"))
    assert isinstance(policy.decide(three, state), ContinueWithTools)  # copies do not count
    state.record_tool_call(call("s", "{}", "a"))
    assert isinstance(policy.decide(three, state), ContinueWithTools)  # 1 earlier run < 2
    state.record_tool_call(call("s", "{}", "d"))
    decision = policy.decide(three, state)  # history already holds 2 runs of it
    assert decision == TerminateImmediately(TerminationReason.DUPLICATE_TOOL_CALL_DETECTED, tool="s")


def test_tool_call_limit_counts_identical_copies_once_and_distinct_calls_each() -> None:
    policy = ToolCallLimitPolicy(STANDARD, max_calls_per_tool=2)
    copies = tools_response(call("s", '{"q":1}', "a"), call("s", '{"q":1}', "b"), call("s", '{"q":1}', "c"))
    assert isinstance(policy.decide(copies, AgentLoopState()), ContinueWithTools)
    distinct = tools_response(call("s", '{"q":1}', "a"), call("s", '{"q":2}', "b"), call("s", '{"q":3}', "c"))
    assert isinstance(policy.decide(distinct, AgentLoopState()), TerminateImmediately)


def test_duplicate_detection_passes_non_tool_decisions_through() -> None:
    policy = DuplicateDetectionPolicy(STANDARD, max_duplicates=1)
    assert policy.decide(text_response("x"), AgentLoopState()) == TerminateWithOutput("x")


# ----------------------------------------------------------------------------------- per-tool cap


def test_max_tool_calls_per_tool_terminates_on_the_call_beyond_the_cap() -> None:
    policy = ToolCallLimitPolicy(STANDARD, max_calls_per_tool=3)
    state = AgentLoopState()
    for i in range(3):
        assert isinstance(policy.decide(tools_response(call("s", f'{{"i": {i}}}')), state), ContinueWithTools)
        _record(state, "s", f'{{"i": {i}}}', 1)
    decision = policy.decide(tools_response(call("s", '{"i": 99}')), state)
    assert decision == TerminateImmediately(TerminationReason.MAX_TOOL_CALLS_PER_TOOL_EXCEEDED, tool="s")


def test_max_tool_calls_per_tool_counts_other_tools_separately() -> None:
    policy = ToolCallLimitPolicy(STANDARD, max_calls_per_tool=1)
    state = AgentLoopState()
    _record(state, "a", "{}", 1)
    assert isinstance(policy.decide(tools_response(call("b")), state), ContinueWithTools)
    assert isinstance(policy.decide(tools_response(call("a", '{"x": 1}')), state), TerminateImmediately)


def test_default_policy_chains_duplicates_then_cap_and_cap_none_means_unlimited() -> None:
    state = AgentLoopState()
    _record(state, "s", "{}", 2)
    both = default_policy(AgentConfiguration(max_duplicate_tool_calls=2, max_tool_calls_per_tool=2))
    decision = both.decide(tools_response(call("s")), state)
    assert decision == TerminateImmediately(TerminationReason.DUPLICATE_TOOL_CALL_DETECTED, tool="s")
    unlimited = default_policy(AgentConfiguration(max_duplicate_tool_calls=100, max_tool_calls_per_tool=None))
    _record(state, "s", '{"i": 1}', 50)
    assert isinstance(unlimited.decide(tools_response(call("s", '{"i": 2}')), state), ContinueWithTools)


def test_policies_validate_their_limits() -> None:
    with pytest.raises(ValueError, match="max_duplicates"):
        DuplicateDetectionPolicy(STANDARD, max_duplicates=0)
    with pytest.raises(ValueError, match="max_calls_per_tool"):
        ToolCallLimitPolicy(STANDARD, max_calls_per_tool=0)


def test_termination_policy_is_a_protocol_users_can_implement() -> None:
    class Never:
        def decide(self, response: LLMResponse, state: AgentLoopState) -> TerminationDecision:
            return TerminateImmediately("custom")

    policy: TerminationPolicy = Never()
    assert isinstance(policy, TerminationPolicy)
    assert isinstance(StandardTerminationPolicy(), TerminationPolicy)
