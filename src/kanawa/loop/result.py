"""The outcome of one run: :class:`RunResult` (re-exported as ``kanawa.RunResult``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass
from typing import Generic

from kanawa.loop.events import AgentStep, OutputT
from kanawa.loop.policies import TerminationReason
from kanawa.types import Message, ToolCall, Usage


@dataclass(frozen=True, slots=True)
class RunResult(Generic[OutputT]):
    """What a finished run produced.

    Attributes:
        output: the decoded final output; ``None`` when the run ended without one (see
            ``termination_reason``: a guard tripped, tools are pending, or the model said nothing).
        text: the model's text of the final answer (``""`` without one).
        usage: token usage summed over every model request of the run; ``usage.requests`` counts them.
        steps: the loop steps in the order they were yielded (streaming deltas are not kept).
        messages: the whole conversation as sent and received, system message first, including the
            messages the loop added (final-output request, decode retries, max-steps instruction). When
            a guard stopped the run, each unrun tool call got an ``is_error`` answer, so the list is a
            valid history: pass it as ``history=`` to continue the conversation.
        termination_reason: why the run ended (a :class:`TerminationReason`, or a custom policy's string;
            ``"error"`` in the ``partial_result`` of an :class:`~kanawa.loop.errors.AgentError`).
        run_id: the id this run's trace events carry.
        pending_tool_calls: with ``termination_reason == "tools_pending"``, the calls the caller must
            run; append a ``ToolMessage`` per call to ``messages`` and continue.
        cost: USD spent on the run's model requests, each priced by the model that answered
            (:mod:`kanawa.llm.pricing`); ``None`` when a model has no known price.
        pending_approvals: with ``termination_reason == "approval_required"``, the calls waiting for a
            person's decision; continue with ``agent.run(Approvals(...), history=messages)``.
    """

    output: OutputT | None
    text: str
    usage: Usage
    steps: Sequence[AgentStep[OutputT]]
    messages: Sequence[Message]
    termination_reason: TerminationReason | str
    run_id: str
    _: KW_ONLY
    pending_tool_calls: tuple[ToolCall, ...] = ()
    pending_approvals: tuple[ToolCall, ...] = ()
    cost: float | None = None

    @property
    def completed(self) -> bool:
        """``True`` when the run ended with a final answer (its last step is a ``FinalResponse``)."""
        return bool(self.steps) and self.steps[-1].kind == "final_response"


__all__ = ["RunResult"]
