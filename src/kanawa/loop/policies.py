"""Termination policies: after each model response, decide whether the loop goes on (seed 003
"終了ポリシーシステム").

A policy is anything with ``decide(response, state) -> TerminationDecision`` (:class:`TerminationPolicy`).
:class:`StandardTerminationPolicy` reads the stop reason, and the guards wrap a base policy (decorator
pattern) to stop runaway tool use: :class:`DuplicateDetectionPolicy` (same tool, same input) and
:class:`ToolCallLimitPolicy` (same tool, any input). :func:`default_policy` chains all three from an
:class:`~kanawa.loop.config.AgentConfiguration`. Policies only read :class:`AgentLoopState`; the runner
records the calls a policy let through.
"""

from __future__ import annotations

import enum
from dataclasses import KW_ONLY, dataclass
from typing import Literal, Protocol, TypeAlias, assert_never, runtime_checkable

from kanawa.loop.config import AgentConfiguration
from kanawa.loop.state import AgentLoopState
from kanawa.types import LLMResponse, StopReason, ToolCall


class TerminationReason(enum.StrEnum):
    """Why a run ended (``RunResult.termination_reason``)."""

    COMPLETED = "completed"
    """A final output was produced, or the model ended its turn with nothing to say."""
    MAX_TOKENS = "max_tokens"
    """The model hit its output limit before writing any text."""
    TOOL_USE_WITHOUT_CALLS = "tool_use_without_calls"
    """The stop reason said ``tool_use`` but the response held no tool call."""
    DUPLICATE_TOOL_CALL_DETECTED = "duplicate_tool_call_detected"
    """The same tool with the same input was requested more than ``max_duplicate_tool_calls`` times."""
    MAX_TOOL_CALLS_PER_TOOL_EXCEEDED = "max_tool_calls_per_tool_exceeded"
    """One tool was requested more than ``max_tool_calls_per_tool`` times."""
    TOOLS_PENDING = "tools_pending"
    """``auto_execute_tools=False`` and the model asked for tools; the caller runs them."""
    MAX_STEPS_FINALIZED = "max_steps_finalized"
    """``on_max_steps="finalize"``: the answer came from the last, tool-less request of the budget."""
    APPROVAL_REQUIRED = "approval_required"
    """The model asked for a tool that needs a person's approval; see ``RunResult.pending_approvals``."""


# ----------------------------------------------------------------------------------------- decisions


@dataclass(frozen=True, slots=True)
class ContinueWithTools:
    """Run these tool calls, then ask the model again."""

    calls: tuple[ToolCall, ...]
    _: KW_ONLY
    kind: Literal["continue_with_tools"] = "continue_with_tools"


@dataclass(frozen=True, slots=True)
class ContinueWithThinking:
    """Ask the model again without a tool round (the runner yields a ``Thinking`` step)."""

    _: KW_ONLY
    kind: Literal["continue_with_thinking"] = "continue_with_thinking"


@dataclass(frozen=True, slots=True)
class TerminateWithOutput:
    """The model answered with ``text``; decode it as the final output (phase rules apply)."""

    text: str
    _: KW_ONLY
    kind: Literal["terminate_with_output"] = "terminate_with_output"


@dataclass(frozen=True, slots=True)
class TerminateImmediately:
    """End the run now, without a final output. ``tool`` names the tool a guard tripped on."""

    reason: TerminationReason | str
    _: KW_ONLY
    tool: str | None = None
    kind: Literal["terminate_immediately"] = "terminate_immediately"


TerminationDecision: TypeAlias = (
    ContinueWithTools | ContinueWithThinking | TerminateWithOutput | TerminateImmediately
)
"""Seed 003 ``TerminationDecision``."""


@runtime_checkable
class TerminationPolicy(Protocol):
    """Decides what the loop does after a model response. Must not mutate ``state``.

    One policy object serves every run of an agent, concurrently: keep per-run facts in ``state``
    (which is per run), not on the policy.
    """

    def decide(self, response: LLMResponse, state: AgentLoopState) -> TerminationDecision: ...


# -------------------------------------------------------------------------------------------- policies


class StandardTerminationPolicy:
    """The stop-reason table of seed 003.

    ============== ======================================================================================
    stop reason    decision
    ============== ======================================================================================
    tool_use       tool calls → continue_with_tools; none → terminate (``tool_use_without_calls``)
    end_turn       tool calls → continue_with_tools (Gemini reports STOP for function calls);
                   else text → terminate_with_output; else terminate (``completed``)
    max_tokens     text → terminate_with_output; else terminate (``max_tokens``)
    stop_sequence  text → terminate_with_output; else terminate (``completed``)
    None           tool calls → continue; else text → output; else terminate (``completed``)
    ============== ======================================================================================

    "Text" means visible text that is not only whitespace. Tool calls that arrive with ``max_tokens`` or
    ``stop_sequence`` are ignored, as the table says: after ``max_tokens`` their arguments may be cut off.
    """

    __slots__ = ()

    def decide(self, response: LLMResponse, state: AgentLoopState) -> TerminationDecision:
        message = response.message
        stop = response.stop_reason
        if stop is StopReason.TOOL_USE:
            if message.tool_calls:
                return ContinueWithTools(message.tool_calls)
            return TerminateImmediately(TerminationReason.TOOL_USE_WITHOUT_CALLS)
        if stop is StopReason.END_TURN or stop is None:
            if message.tool_calls:
                return ContinueWithTools(message.tool_calls)
            return _output_or(message.text, TerminationReason.COMPLETED)
        if stop is StopReason.MAX_TOKENS:
            return _output_or(message.text, TerminationReason.MAX_TOKENS)
        if stop is StopReason.STOP_SEQUENCE:
            return _output_or(message.text, TerminationReason.COMPLETED)
        assert_never(stop)


def _output_or(text: str, reason: TerminationReason) -> TerminationDecision:
    if text and not text.isspace():
        return TerminateWithOutput(text)
    return TerminateImmediately(reason)


class DuplicateDetectionPolicy:
    """Ends the run when the model repeats a tool call (seed 003 ``DuplicateDetectionPolicy``).

    Counting, precisely: for each distinct call the base policy lets through, ``count`` is the number
    of calls with the same tool name and the same :func:`~kanawa.loop.state.input_hash` already
    recorded in this run (earlier responses). ``count >= max_duplicates`` ends the run with
    ``duplicate_tool_call_detected``. So an identical call runs at most ``max_duplicates`` times; the
    request for one more stops the run (with the default 2: run, run, stop). Identical calls *inside
    one response* are one call: the loop runs it once and gives every copy its result, so copies
    neither trip this guard nor count later.
    """

    __slots__ = ("base", "max_duplicates")

    def __init__(self, base: TerminationPolicy, *, max_duplicates: int = 2) -> None:
        if max_duplicates < 1:
            raise ValueError("max_duplicates must be >= 1")
        self.base = base
        self.max_duplicates = max_duplicates

    def decide(self, response: LLMResponse, state: AgentLoopState) -> TerminationDecision:
        decision = self.base.decide(response, state)
        if not isinstance(decision, ContinueWithTools):
            return decision
        for call in state.group_identical(decision.calls)[0]:
            key = (call.name, state.hash_input(call.arguments))
            if state.count_duplicate_tool_calls(*key) >= self.max_duplicates:
                return TerminateImmediately(TerminationReason.DUPLICATE_TOOL_CALL_DETECTED, tool=call.name)
        return decision


class ToolCallLimitPolicy:
    """Ends the run when one tool is requested more than ``max_calls_per_tool`` times in total.

    Counted like :class:`DuplicateDetectionPolicy` but by tool name alone (identical copies inside one
    response count once, as they run once; distinct calls of one response all count): a tool runs at most
    ``max_calls_per_tool`` times; the request for one more ends the run with
    ``max_tool_calls_per_tool_exceeded``.
    """

    __slots__ = ("base", "max_calls_per_tool")

    def __init__(self, base: TerminationPolicy, *, max_calls_per_tool: int = 5) -> None:
        if max_calls_per_tool < 1:
            raise ValueError("max_calls_per_tool must be >= 1")
        self.base = base
        self.max_calls_per_tool = max_calls_per_tool

    def decide(self, response: LLMResponse, state: AgentLoopState) -> TerminationDecision:
        decision = self.base.decide(response, state)
        if not isinstance(decision, ContinueWithTools):
            return decision
        batch: dict[str, int] = {}
        for call in state.group_identical(decision.calls)[0]:
            earlier = batch.get(call.name, 0)
            if state.count_tool_calls(call.name) + earlier >= self.max_calls_per_tool:
                return TerminateImmediately(
                    TerminationReason.MAX_TOOL_CALLS_PER_TOOL_EXCEEDED, tool=call.name
                )
            batch[call.name] = earlier + 1
        return decision


def default_policy(config: AgentConfiguration) -> TerminationPolicy:
    """Standard policy → duplicate detection → per-tool cap (when ``max_tool_calls_per_tool`` is set).

    When a response trips both guards, the duplicate reason wins (it is checked first).
    """
    policy: TerminationPolicy = DuplicateDetectionPolicy(
        StandardTerminationPolicy(), max_duplicates=config.max_duplicate_tool_calls
    )
    if config.max_tool_calls_per_tool is not None:
        policy = ToolCallLimitPolicy(policy, max_calls_per_tool=config.max_tool_calls_per_tool)
    return policy


__all__ = [
    "ContinueWithThinking",
    "ContinueWithTools",
    "DuplicateDetectionPolicy",
    "StandardTerminationPolicy",
    "TerminateImmediately",
    "TerminateWithOutput",
    "TerminationDecision",
    "TerminationPolicy",
    "TerminationReason",
    "ToolCallLimitPolicy",
    "default_policy",
]
