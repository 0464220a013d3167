"""What every provider's stream assembler shares: one :class:`DeltaAccumulator` that turns the text,
reasoning and tool-argument fragments of a stream into kanawa's stream events and keeps them for the
final response — and the two wire helpers every assembler needs (:func:`malformed`, :func:`wire_int`).

Each provider's assembler (OpenAI Responses, OpenAI Chat Completions, Anthropic Messages, Gemini)
reads its own wire format and *feeds* the accumulator: a part is named by the provider's own key (a
content block index, an output index, a tool-call slot), so fragments of one part join however the
provider interleaves them. A tool call is announced (``ToolCallStarted``) once its name is known;
arguments that came before are sent with it, later ones as ``ToolCallArgsDelta``, so the deltas of a
call always add up to its final arguments.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from kanawa.llm.errors import LLMConnectionError
from kanawa.types import ReasoningDelta, StreamEvent, TextDelta, ToolCallArgsDelta, ToolCallStarted

PartKind = Literal["text", "reasoning", "tool_call"]


def wire_int(value: object, key: str | None = None) -> int:
    """A count from the wire: ``value`` (or, given ``key``, ``value[key]`` when ``value`` is an object)
    when it is an int (never a bool), else 0."""
    if key is not None:
        value = value.get(key) if isinstance(value, Mapping) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def malformed(what: str, detail: str, *, provider: str) -> LLMConnectionError:
    """An answer that breaks the provider's protocol (``what``: the thing that was malformed): an
    error naming the provider, never an empty success (retryable: the next attempt may be clean)."""
    return LLMConnectionError(f"malformed {what}: {detail}", provider=provider)


@dataclass(slots=True)
class StreamPart:
    """One part of the answer: its kind, its fragments in order; a tool call's id, name, ordinal
    (``position``, in the order calls were announced) and whether it was announced. ``extra`` holds
    what a provider keeps beside the text (a block's own fields, a reasoning signature)."""

    kind: PartKind
    fragments: list[str] = field(default_factory=list)
    call_id: str = ""
    name: str = ""
    position: int = -1
    started: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def content(self) -> str:
        return "".join(self.fragments)


class DeltaAccumulator:
    """The parts of one streamed answer (module docstring), keyed by the provider's own part keys,
    in the order they began; and the usage the stream reported."""

    __slots__ = ("_calls", "parts", "usage")

    def __init__(self) -> None:
        self.parts: dict[Hashable, StreamPart] = {}
        self._calls = 0
        self.usage: dict[str, Any] = {}

    def part(self, key: Hashable, kind: PartKind) -> StreamPart:
        """The part ``key`` names, begun as a ``kind`` part when it is new."""
        found = self.parts.get(key)
        if found is None:
            found = self.parts[key] = StreamPart(kind)
        return found

    def text(self, key: Hashable, delta: str) -> list[StreamEvent]:
        """A fragment of visible text."""
        if not delta:
            return []
        self.part(key, "text").fragments.append(delta)
        return [TextDelta(delta)]

    def reasoning(self, key: Hashable, delta: str) -> list[StreamEvent]:
        """A fragment of the model's reasoning."""
        if not delta:
            return []
        self.part(key, "reasoning").fragments.append(delta)
        return [ReasoningDelta(delta)]

    def tool_call(
        self, key: Hashable, *, call_id: str = "", name: str = "", whole: bool = False
    ) -> list[StreamEvent]:
        """A tool call's id and name as they arrive: the call is announced once it has a name (with the
        arguments that came before it) — at once when the provider sent it ``whole``, named or not;
        its id is the given one, else ``call_<position>``."""
        part = self.part(key, "tool_call")
        if call_id and not part.call_id:
            part.call_id = call_id
        if name and not part.started:
            part.name = name
        if part.started or not (part.name or whole):
            return []
        part.started = True
        part.position = self._calls
        self._calls += 1
        part.call_id = part.call_id or f"call_{part.position}"
        events: list[StreamEvent] = [ToolCallStarted(part.position, part.call_id, part.name)]
        if part.fragments:
            events.append(ToolCallArgsDelta(part.position, part.call_id, part.content))
        return events

    def arguments(self, key: Hashable, delta: str) -> list[StreamEvent]:
        """A fragment of a tool call's arguments: sent at once when the call was announced, else with
        its announcement."""
        if not delta:
            return []
        part = self.part(key, "tool_call")
        part.fragments.append(delta)
        return [ToolCallArgsDelta(part.position, part.call_id, delta)] if part.started else []

    def merge_usage(self, usage: object) -> None:
        """Usage fields a stream reports, the latest value of each winning (``None`` never erases)."""
        if isinstance(usage, Mapping):
            self.usage.update({key: value for key, value in usage.items() if value is not None})

    def joined(self, kind: PartKind) -> str:
        """Every ``kind`` fragment, in order."""
        return "".join(part.content for part in self.parts.values() if part.kind == kind)

    def calls(self) -> list[StreamPart]:
        """The tool calls, in the order they began."""
        return [part for part in self.parts.values() if part.kind == "tool_call"]


__all__ = ["DeltaAccumulator", "PartKind", "StreamPart", "malformed", "wire_int"]
