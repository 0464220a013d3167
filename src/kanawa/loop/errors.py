"""The loop's exception hierarchy (seed 003 "エラーハンドリング").

Every error a run raises is an :class:`AgentError` carrying what a caller needs to act on it, and the
run's state at the moment it failed in :attr:`AgentError.partial_result` (conversation so far, usage,
steps) when the runner raised it. Messages never contain prompt text, model output or tool arguments;
those stay in attributes.

Tool failures normally do *not* raise: an unknown tool, bad arguments or a tool exception become a
fail-closed tool result the model sees with ``is_error`` set, and the run goes on (seed 000 §6).
:class:`StrictToolNotFound` and :class:`ToolExecutionFailed` are raised only with
``AgentConfiguration(strict_tools=True)``, or by :func:`raise_for_tool_result` for callers that run
tools themselves (``auto_execute_tools=False``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kanawa.llm.errors import LLMError
from kanawa.tools.base import ToolErrorKind, ToolResult
from kanawa.tools.errors import StopRun, ToolNotFound

if TYPE_CHECKING:
    from kanawa.loop.events import GuardrailTripped
    from kanawa.loop.result import RunResult


class AgentError(Exception):
    """Base class of every error the agent loop raises."""

    partial_result: RunResult[Any] | None = None
    """The run as far as it got (set by the runner before raising). ``Any``: the output type of the run
    that failed, which this class cannot know."""


class MaxStepsExceeded(AgentError):  # noqa: N818 (seed 003 names)
    """The run needed more model requests than ``AgentConfiguration.max_steps`` allows."""

    def __init__(self, steps: int) -> None:
        super().__init__(f"the agent loop reached its limit of {steps} steps without a final answer")
        self.steps = steps


class LLMCallFailed(AgentError):  # noqa: N818 (seed 003 names)
    """A model request failed. The :class:`~kanawa.llm.errors.LLMError` is ``__cause__`` (and
    :attr:`error`); status, retry hint and retryability are copied here for convenience."""

    def __init__(self, error: LLMError, *, step: int) -> None:
        super().__init__(f"model request at step {step} failed: {error}")
        self.error = error
        self.step = step
        self.status_code = error.status_code
        self.retry_after = error.retry_after
        self.retryable = error.retryable
        self.provider = error.provider
        self.model = error.model


class OutputDecodingFailed(AgentError):  # noqa: N818 (seed 003 names)
    """The final answer did not decode into the output type (after ``attempts`` tries).

    ``errors`` is the validation summary (locations and messages, no input values); ``text`` is the
    model's last answer, kept as an attribute and never put into the message.
    """

    def __init__(self, output_type: str, errors: str, *, text: str, attempts: int) -> None:
        noun = "attempt" if attempts == 1 else "attempts"
        super().__init__(
            f"the final output did not decode as {output_type} after {attempts} {noun}: {errors}"
        )
        self.output_type = output_type
        self.errors = errors
        self.text = text
        self.attempts = attempts


class StrictToolNotFound(AgentError, ToolNotFound):  # noqa: N818 (seed 003 names)
    """Seed 003's ``AgentError.toolNotFound``: with ``strict_tools=True`` the model called a tool the
    run does not have. The tool layer's :class:`~kanawa.tools.errors.ToolNotFound` (what the registry
    raises; ``except ToolNotFound`` catches either) that is also a run's error, so ``except
    AgentError`` catches it and :attr:`~AgentError.partial_result` holds the run so far."""


class ToolExecutionFailed(AgentError):  # noqa: N818 (seed 003 names)
    """A tool raised (or timed out). ``detail`` is the invoker's trace-only description of the failure."""

    def __init__(self, name: str, *, call_id: str = "", detail: str | None = None) -> None:
        super().__init__(f"tool {name!r} failed to execute")
        self.name = name
        self.call_id = call_id
        self.detail = detail


class InvalidLoopState(AgentError):  # noqa: N818 (seed 003 names)
    """The loop was asked to do something its phase does not allow (e.g. a request after completion)."""


class GuardrailViolation(AgentError, StopRun):  # noqa: N818 (seed 002 §7 names)
    """A guardrail with ``action="block"`` stopped the run (seed 002 §3-4, §7) before the model call or
    tool it guarded ran. ``event`` is the :class:`~kanawa.loop.events.GuardrailTripped` the stream
    yielded just before; its ``reasons`` never quote the checked text."""

    def __init__(self, event: GuardrailTripped) -> None:
        reasons = "; ".join(event.reasons) or "no reason given"
        super().__init__(
            f"guardrail {event.guardrail!r} blocked the {event.stage.replace('_', ' ')}: {reasons}"
        )
        self.event = event
        self.preceding: tuple[GuardrailTripped, ...] = ()
        """Warnings of guardrails checked before the blocking one at the same boundary."""
        self.stage = event.stage
        self.guardrail = event.guardrail
        self.reasons = event.reasons


class BudgetExceeded(GuardrailViolation):
    """A :class:`~kanawa.agents.budget.TokenGuard` budget (tokens, requests or money) is spent; the
    model request it guarded was not sent."""


class HandoffDepthExceeded(AgentError, StopRun):  # noqa: N818 (seed 002 §7 names)
    """A handoff would go deeper than the limit (seed 002 §3-1: ``MAX=3``): the whole run is aborted
    (seed 002 §7 "Coordinator abort"), however deep it was raised. ``chain`` names the agents from the
    outermost run to the one that tried to hand off, then the target."""

    def __init__(self, *, depth: int, limit: int, chain: tuple[str, ...]) -> None:
        super().__init__(
            f"handoff depth {depth} exceeds the limit of {limit} ({' -> '.join(chain)}); "
            "check the agents' handoffs for a routing loop"
        )
        self.depth = depth
        self.limit = limit
        self.chain = chain


def raise_for_tool_result(result: ToolResult) -> None:
    """Raise :class:`StrictToolNotFound` / :class:`ToolExecutionFailed` for a failed result of that kind.

    Other failures (bad JSON, argument validation, suppressed duplicates) are the model's to fix and do
    not raise; neither do successful results.
    """
    if not result.is_error:
        return
    if result.error_kind is ToolErrorKind.UNKNOWN_TOOL:
        raise StrictToolNotFound(result.name, call_id=result.call_id)
    if result.error_kind is ToolErrorKind.EXECUTION_ERROR:
        raise ToolExecutionFailed(result.name, call_id=result.call_id, detail=result.detail)


__all__ = [
    "AgentError",
    "BudgetExceeded",
    "GuardrailViolation",
    "HandoffDepthExceeded",
    "InvalidLoopState",
    "LLMCallFailed",
    "MaxStepsExceeded",
    "OutputDecodingFailed",
    "StrictToolNotFound",
    "ToolExecutionFailed",
    "raise_for_tool_result",
]
