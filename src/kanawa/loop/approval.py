"""Human approval: a run stops before a sensitive tool runs, and continues when a person decided.

The story of one approval:

1. A tool is marked ``@tool(requires_approval=True)``, or the agent has an ``approval_policy(call,
   context) -> bool``. When the model asks for such a call, *none* of that turn's calls run: the run
   yields :class:`~kanawa.loop.events.ApprovalRequired` and ends with termination reason
   ``approval_required``; ``RunResult.pending_approvals`` lists the calls waiting for a decision and
   ``RunResult.messages`` ends with the model's tool-call message.
2. The caller decides, per call: ``Approvals(approved=[...], rejected={call_id: "why"})``.
3. ``agent.run(approvals, history=result.messages)`` continues: the approved calls and the turn's
   calls that needed no approval run (through the same fail-closed invoker and guardrails as any
   call), each rejected call is answered with an error result quoting the reason, and the loop goes on
   with the next model request. Nothing the model already said is asked again and no call runs twice.

A call that needs approval and has no decision, or a decision for a call that is not waiting, is a
``ValueError`` before anything runs: a decision is never guessed.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

from kanawa.context import RunContext
from kanawa.tools.base import ToolErrorKind, ToolResult
from kanawa.types import AssistantMessage, Message, TextPart, ToolCall, ToolMessage

ApprovalPolicy = Callable[[ToolCall, RunContext[Any]], bool]
"""Decides whether a call needs a person's approval (``True``) before it runs."""

REJECTED_MESSAGE = "the user rejected this tool call: {reason}"
"""What the model sees for a rejected call (it never ran)."""


@dataclass(frozen=True, slots=True)
class Approvals:
    """A person's decisions on the calls of ``RunResult.pending_approvals``.

    ``approved``: ids of calls to run; ``rejected``: id → the reason the model is told.
    """

    _: KW_ONLY
    approved: Collection[str] = ()
    rejected: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        both = set(self.approved) & set(self.rejected)
        if both:
            raise ValueError(f"calls both approved and rejected: {sorted(both)}")


def unanswered_calls(messages: Sequence[Message]) -> tuple[ToolCall, ...]:
    """The tool calls of the last assistant message that have no tool result after it."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, AssistantMessage):
            answered = {m.tool_call_id for m in messages[index + 1 :] if isinstance(m, ToolMessage)}
            return tuple(call for call in message.tool_calls if call.id not in answered)
    return ()


def plan_resume(
    messages: Sequence[Message], approvals: Approvals, needs_approval: Callable[[ToolCall], bool]
) -> tuple[list[ToolCall], list[ToolCall]]:
    """Check ``approvals`` against the history: ``(calls to run, calls rejected)``, both in call order.

    Raises ``ValueError`` when nothing waits, when a waiting call that needs approval has no decision,
    or when a decision names a call that is not waiting.
    """
    waiting = unanswered_calls(messages)
    if not waiting:
        raise ValueError(
            "nothing is waiting for approval: pass the history of a run that ended with approval_required"
        )
    ids = {call.id for call in waiting}
    unknown = sorted((set(approvals.approved) | set(approvals.rejected)) - ids)
    if unknown:
        raise ValueError(f"decisions name calls that are not waiting for approval: {unknown}")
    undecided = [
        f"{call.id} ({call.name})"
        for call in waiting
        if needs_approval(call) and call.id not in approvals.approved and call.id not in approvals.rejected
    ]
    if undecided:
        raise ValueError(f"calls need a decision (approve or reject): {', '.join(undecided)}")
    to_run = [call for call in waiting if call.id not in approvals.rejected]
    rejected = [call for call in waiting if call.id in approvals.rejected]
    return to_run, rejected


def rejected_result(call: ToolCall, reason: str) -> ToolResult:
    """The error result a rejected call gets in place of running."""
    text = REJECTED_MESSAGE.format(reason=reason.strip() or "no reason given")
    return ToolResult(call.id, call.name, (TextPart(text),), is_error=True, error_kind=ToolErrorKind.REJECTED)


__all__ = [
    "REJECTED_MESSAGE",
    "ApprovalPolicy",
    "Approvals",
    "plan_resume",
    "rejected_result",
    "unanswered_calls",
]
