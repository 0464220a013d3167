"""What a run yields: loop steps (seed 003 ``AgentStep``) and, when streaming, the model's deltas.

Every item has a stable ``kind`` literal so callers can ``match step.kind`` (or ``isinstance``) without
importing private classes. Steps are frozen, slotted dataclasses: one small allocation each, no
validation on the hot path.
"""

from __future__ import annotations

from dataclasses import dataclass
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
    text: str = ""
    kind: Literal["thinking"] = "thinking"


@dataclass(frozen=True, slots=True)
class ToolCallStep:
    """The model asked for a tool call (seed 003 ``.toolCall``). Raw arguments are in ``call.arguments``."""

    step: int
    call: ToolCall
    kind: Literal["tool_call"] = "tool_call"


@dataclass(frozen=True, slots=True)
class ToolResultStep:
    """A tool call finished (seed 003 ``.toolResult``). Failures are results with ``is_error`` set,
    exactly as the model saw them; the details a model must not see are in ``result.detail``."""

    step: int
    result: ToolResult
    kind: Literal["tool_result"] = "tool_result"


@dataclass(frozen=True, slots=True)
class FinalResponse(Generic[OutputT]):
    """The run's answer (seed 003 ``.finalResponse``): the decoded ``output``, the model's raw ``text``
    and the usage summed over every request of the run so far."""

    step: int
    output: OutputT
    text: str
    usage: Usage
    kind: Literal["final_response"] = "final_response"


AgentStep: TypeAlias = Thinking | ToolCallStep | ToolResultStep | FinalResponse[OutputT]
"""A loop step; these are what ``RunResult.steps`` records."""

StreamDelta: TypeAlias = TextDelta | ReasoningDelta | ToolCallStarted | ToolCallArgsDelta
"""The model's live output, yielded only when the run streams."""

RunEvent: TypeAlias = Thinking | ToolCallStep | ToolResultStep | FinalResponse[OutputT] | StreamDelta
"""Anything a run yields."""

__all__ = [
    "AgentStep",
    "FinalResponse",
    "OutputT",
    "RunEvent",
    "StreamDelta",
    "Thinking",
    "ThinkingReason",
    "ToolCallStep",
    "ToolResultStep",
]
