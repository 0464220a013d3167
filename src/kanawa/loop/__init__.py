"""The agent loop (seed 003): configuration, runner, termination policies, state, steps and errors.

Names are loaded on first use, so ``from kanawa.loop.config import AgentConfiguration`` does not pull in
the runner, pydantic or the tool invoker.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kanawa._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "AgentConfiguration": "kanawa.loop.config",
    "AgentLoopRunner": "kanawa.loop.runner",
    "Approvals": "kanawa.loop.approval",
    "RunResult": "kanawa.loop.result",
    "RunOptions": "kanawa.loop.options",
    "RunSpec": "kanawa.loop.spec",
    "AgentLoopState": "kanawa.loop.state",
    "ToolCallRecord": "kanawa.loop.state",
    "LoopCounters": "kanawa.loop.state",
    "LoopPhase": "kanawa.loop.state",
    "ToolUsePhase": "kanawa.loop.state",
    "FinalOutputPhase": "kanawa.loop.state",
    "CompletedPhase": "kanawa.loop.state",
    "input_hash": "kanawa.loop.state",
    "AgentStep": "kanawa.loop.events",
    "RunEvent": "kanawa.loop.events",
    "Thinking": "kanawa.loop.events",
    "ToolCallStep": "kanawa.loop.events",
    "ToolResultStep": "kanawa.loop.events",
    "FinalResponse": "kanawa.loop.events",
    "TerminationPolicy": "kanawa.loop.policies",
    "TerminationDecision": "kanawa.loop.policies",
    "TerminationReason": "kanawa.loop.policies",
    "StandardTerminationPolicy": "kanawa.loop.policies",
    "DuplicateDetectionPolicy": "kanawa.loop.policies",
    "ToolCallLimitPolicy": "kanawa.loop.policies",
    "ContinueWithTools": "kanawa.loop.policies",
    "ContinueWithThinking": "kanawa.loop.policies",
    "TerminateWithOutput": "kanawa.loop.policies",
    "TerminateImmediately": "kanawa.loop.policies",
    "default_policy": "kanawa.loop.policies",
    "AgentError": "kanawa.loop.errors",
    "MaxStepsExceeded": "kanawa.loop.errors",
    "GuardrailViolation": "kanawa.loop.errors",
    "BudgetExceeded": "kanawa.loop.errors",
    "HandoffDepthExceeded": "kanawa.loop.errors",
    "LLMCallFailed": "kanawa.loop.errors",
    "OutputDecodingFailed": "kanawa.loop.errors",
    "ToolExecutionFailed": "kanawa.loop.errors",
    "InvalidLoopState": "kanawa.loop.errors",
    "raise_for_tool_result": "kanawa.loop.errors",
    # moved to kanawa.tools (the tool layer's error); still importable from here, outside __all__
    "ToolNotFound": "kanawa.tools.errors",
}

if TYPE_CHECKING:
    from kanawa.loop.approval import Approvals
    from kanawa.loop.config import AgentConfiguration
    from kanawa.loop.errors import (
        AgentError,
        BudgetExceeded,
        GuardrailViolation,
        HandoffDepthExceeded,
        InvalidLoopState,
        LLMCallFailed,
        MaxStepsExceeded,
        OutputDecodingFailed,
        ToolExecutionFailed,
        raise_for_tool_result,
    )
    from kanawa.loop.events import AgentStep, FinalResponse, RunEvent, Thinking, ToolCallStep, ToolResultStep
    from kanawa.loop.options import RunOptions
    from kanawa.loop.policies import (
        ContinueWithThinking,
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
    from kanawa.loop.result import RunResult
    from kanawa.loop.runner import AgentLoopRunner
    from kanawa.loop.spec import RunSpec
    from kanawa.loop.state import (
        AgentLoopState,
        CompletedPhase,
        FinalOutputPhase,
        LoopCounters,
        LoopPhase,
        ToolCallRecord,
        ToolUsePhase,
        input_hash,
    )


__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)


__all__ = [
    "AgentConfiguration",
    "AgentError",
    "AgentLoopRunner",
    "AgentLoopState",
    "AgentStep",
    "Approvals",
    "BudgetExceeded",
    "CompletedPhase",
    "ContinueWithThinking",
    "ContinueWithTools",
    "DuplicateDetectionPolicy",
    "FinalOutputPhase",
    "FinalResponse",
    "GuardrailViolation",
    "HandoffDepthExceeded",
    "InvalidLoopState",
    "LLMCallFailed",
    "LoopCounters",
    "LoopPhase",
    "MaxStepsExceeded",
    "OutputDecodingFailed",
    "RunEvent",
    "RunOptions",
    "RunResult",
    "RunSpec",
    "StandardTerminationPolicy",
    "TerminateImmediately",
    "TerminateWithOutput",
    "TerminationDecision",
    "TerminationPolicy",
    "TerminationReason",
    "Thinking",
    "ToolCallLimitPolicy",
    "ToolCallRecord",
    "ToolCallStep",
    "ToolExecutionFailed",
    "ToolResultStep",
    "ToolUsePhase",
    "default_policy",
    "input_hash",
    "raise_for_tool_result",
]
