"""What a run yields: loop steps (seed 003 ``AgentStep``) and, when streaming, the model's deltas.

Every item has a stable ``kind`` literal so callers can ``match step.kind`` (or ``isinstance``) without
importing private classes. Steps are frozen, slotted dataclasses: one small allocation each, no
validation on the hot path.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass
from typing import Generic, Literal, TypeAlias

from typing_extensions import TypeVar

from kanawa.tools.base import ToolResult
from kanawa.types import ReasoningDelta, TextDelta, ToolCall, ToolCallArgsDelta, ToolCallStarted, Usage

OutputT = TypeVar("OutputT", default=str)
"""The type of a run's final output (``str`` for plain text)."""

ThinkingReason: TypeAlias = Literal["final_output_request", "decode_retry", "policy"]
"""Why the loop goes round again without running tools:

- ``final_output_request``: the model answered in the tool phase; the structured answer is asked for next;
- ``decode_retry``: the structured answer did not decode; it is asked for again, with the error;
- ``policy``: the termination policy said ``continue_with_thinking``.
"""


@dataclass(frozen=True, slots=True)
class Thinking:
    """The loop continues with another model request and no tool round (seed 003 ``.thinking``).

    ``text`` is the model's visible text of the step that led here (a draft answer, or the output that
    failed to decode).
    """

    step: int
    reason: ThinkingReason
    _: KW_ONLY
    text: str = ""
    kind: Literal["thinking"] = "thinking"


@dataclass(frozen=True, slots=True)
class ToolCallStep:
    """The model asked for a tool call (seed 003 ``.toolCall``). Raw arguments are in ``call.arguments``."""

    step: int
    call: ToolCall
    _: KW_ONLY
    kind: Literal["tool_call"] = "tool_call"


@dataclass(frozen=True, slots=True)
class ToolResultStep:
    """A tool call finished (seed 003 ``.toolResult``). Failures are results with ``is_error`` set,
    exactly as the model saw them; the details a model must not see are in ``result.detail``."""

    step: int
    result: ToolResult
    _: KW_ONLY
    kind: Literal["tool_result"] = "tool_result"


@dataclass(frozen=True, slots=True)
class FinalResponse(Generic[OutputT]):
    """The run's answer (seed 003 ``.finalResponse``): the decoded ``output``, the model's raw ``text``
    and the usage summed over every request of the run so far."""

    step: int
    output: OutputT
    text: str
    usage: Usage
    _: KW_ONLY
    kind: Literal["final_response"] = "final_response"


GuardrailStage: TypeAlias = Literal["input", "output", "tool_call", "tool_result", "model_call"]
"""Where a guardrail looked: the user's input, the final output, a tool call's arguments before it runs,
a tool's result before the model sees it, or the run's budget before a model request."""


@dataclass(frozen=True, slots=True)
class GuardrailTripped:
    """A guardrail found a problem (seed 002 §3-4). ``action="warn"``: the run goes on (a client shows
    it as a chat bubble); ``action="block"``: the run ends with
    :class:`~kanawa.loop.errors.GuardrailViolation` right after this event, before the model call or
    the tool it guarded runs. ``reasons`` are safe to show: they never quote the checked text."""

    step: int
    stage: GuardrailStage
    guardrail: str
    action: Literal["warn", "block"]
    reasons: tuple[str, ...]
    kind: Literal["guardrail"] = "guardrail"


@dataclass(frozen=True, slots=True)
class HandoffStarted:
    """``source`` handed the conversation to ``target`` (seed 002 §3-1); ``depth`` counts handoffs from
    the run the caller started (1 for the first). ``call_id`` is the ``transfer_to_…`` tool call."""

    step: int
    source: str
    target: str
    depth: int
    call_id: str
    kind: Literal["handoff_start"] = "handoff_start"


@dataclass(frozen=True, slots=True)
class HandoffEnded:
    """``target`` finished and the conversation came back to ``source``; ``text`` is what
    ``on_handoff_return`` made of the target's result (what the source's model sees)."""

    step: int
    source: str
    target: str
    depth: int
    call_id: str
    text: str
    kind: Literal["handoff_end"] = "handoff_end"


@dataclass(frozen=True, slots=True)
class ApprovalRequired:
    """The model asked for tools that need a person's approval; the run ends here with termination
    reason ``approval_required`` and the calls in ``RunResult.pending_approvals``. Continue with
    ``agent.run(Approvals(...), history=result.messages)`` (:mod:`kanawa.loop.approval`)."""

    step: int
    calls: tuple[ToolCall, ...]
    kind: Literal["approval_required"] = "approval_required"


AgentStep: TypeAlias = (
    Thinking
    | ToolCallStep
    | ToolResultStep
    | FinalResponse[OutputT]
    | GuardrailTripped
    | HandoffStarted
    | HandoffEnded
    | ApprovalRequired
)
"""A loop step; these are what ``RunResult.steps`` records."""

StreamDelta: TypeAlias = TextDelta | ReasoningDelta | ToolCallStarted | ToolCallArgsDelta
"""The model's live output, yielded only when the run streams."""


@dataclass(frozen=True, slots=True)
class NestedEvent:
    """An event of another agent's run inside this one — a handed-off agent, or an agent a
    ``Coordinator`` routed to (seed 002 §3-1: the target's chunks carry ``"agent": target.name``).
    ``agent`` names the agent that produced ``event``; events of deeper runs arrive already wrapped,
    with their own agent's name, never wrapped twice."""

    agent: str
    depth: int
    event: object
    kind: Literal["nested"] = "nested"


RunEvent: TypeAlias = (
    Thinking
    | ToolCallStep
    | ToolResultStep
    | FinalResponse[OutputT]
    | GuardrailTripped
    | HandoffStarted
    | HandoffEnded
    | ApprovalRequired
    | StreamDelta
    | NestedEvent
)
"""Anything a run yields."""

__all__ = [
    "AgentStep",
    "ApprovalRequired",
    "FinalResponse",
    "GuardrailStage",
    "GuardrailTripped",
    "HandoffEnded",
    "HandoffStarted",
    "NestedEvent",
    "OutputT",
    "RunEvent",
    "StreamDelta",
    "Thinking",
    "ThinkingReason",
    "ToolCallStep",
    "ToolResultStep",
]
