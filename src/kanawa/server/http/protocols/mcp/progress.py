"""What an MCP call's run chunks tell the host (``notifications/progress``) and the call's outcome.

The same story as over stdio (:mod:`kanawa.mcp_server.progress`), told from stored chunks: each piece
of the answer text, each tool call and result, each handoff; a handed-off agent's with its name in
brackets. Reasoning, tool-argument deltas and bookkeeping chunks are not shown.

A tool call is told when it *starts* (``tool_call_start``, which the model's stream gives before
the tool runs), not when the loop records it with its result — a host would otherwise see
"calling X" only once X has returned. A call recorded without a start (a rejected approval's
answer) is told then. Text deltas that arrive together are one message per agent
(:meth:`McpProgress.messages`): a host reading behind the run gets the same text in fewer
notifications.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from kanawa.server.http.protocols.framing import (
    ApprovalChunk,
    ChunkHooks,
    DoneChunk,
    ErrorChunk,
    FinalChunk,
    HandoffChunk,
    OtherChunk,
    ReasoningChunk,
    RunChunk,
    TextChunk,
    ToolArgsChunk,
    ToolCallChunk,
    ToolResultChunk,
    ToolStartChunk,
    UsageChunk,
)


@dataclass(slots=True)
class Outcome:
    """What the call learns from the run's chunks."""

    status: str = "failed"
    answer: list[str] = field(default_factory=list)
    """The served agent's text deltas, every step's, in order: the answer."""
    text: str = ""
    """Its ``final`` chunk's text: the answer of a model that streamed no deltas."""
    output: object = None
    approvals: tuple[str, ...] = ()
    error: Mapping[str, Any] | None = None
    """The top agent's ``error`` chunk's data (``code``, ``message``)."""


class McpProgress(ChunkHooks[str]):
    """An MCP call's chunks → its :class:`Outcome` and the progress messages held for the host.

    The hooks note the outcome and give the messages a chunk is told as (text is held by
    :meth:`hold_text`, so the text of one agent that arrives together joins up)."""

    __slots__ = ("_announced", "_held", "_pieces", "_reporting", "_text_of", "outcome", "top")

    NESTED: ClassVar[frozenset[type[RunChunk]]] = frozenset(
        {
            TextChunk,
            ReasoningChunk,
            ToolStartChunk,
            ToolArgsChunk,
            ToolCallChunk,
            ToolResultChunk,
            FinalChunk,
            UsageChunk,
            ErrorChunk,
            DoneChunk,
            HandoffChunk,
            ApprovalChunk,
            OtherChunk,
        }
    )
    """Every kind: a handed-off agent's progress is shown too (its name in brackets)."""

    def __init__(self, top: str, outcome: Outcome, *, reporting: bool = True) -> None:
        self.top = top
        """The called agent: chunks of any other come from a handed-off one."""
        self.outcome = outcome
        self._reporting = reporting
        """The host asked for progress; without it nothing is held, only the outcome noted."""
        self._announced: set[str] = set()
        """Calls already told at their start."""
        self._held: list[str] = []
        self._pieces: list[str] = []
        """The latest text of agent ``_text_of``, not joined yet."""
        self._text_of: str | None = None

    # holding ---------------------------------------------------------------------------------------

    @property
    def holding(self) -> bool:
        return bool(self._pieces or self._held)

    def take(self, chunk: RunChunk) -> bool:
        """Note ``chunk`` and hold what it tells; whether it is to be reported now (anything but a
        delta: a tool call, a handoff, the end)."""
        for message in self.feed(chunk):
            self.hold(message)
        return not isinstance(chunk, TextChunk | ReasoningChunk)

    def hold_text(self, agent: str, text: str) -> None:
        """Hold a text delta of ``agent`` (joined to the text of the same agent just before it)."""
        if self._reporting and text:
            if agent != self._text_of:
                self._join()
                self._text_of = agent
            self._pieces.append(text)

    def hold(self, message: str) -> None:
        if self._reporting:
            self._join()
            self._text_of = None
            self._held.append(message)

    def _join(self) -> None:
        if self._pieces:
            text = "".join(self._pieces)
            self._held.append(text if self._text_of == self.top else f"[{self._text_of}] {text}")
            self._pieces = []

    def messages(self) -> list[str]:
        """What is held, as messages; nothing is held after."""
        self._join()
        held, self._held = self._held, []
        self._text_of = None
        return held

    # the hooks -------------------------------------------------------------------------------------

    def _told(self, chunk: RunChunk, message: str) -> tuple[str]:
        return (message,) if chunk.agent == self.top else (f"[{chunk.agent}] {message}",)

    def on_text(self, chunk: TextChunk) -> tuple[str, ...]:
        if chunk.agent == self.top:
            self.outcome.answer.append(chunk.text)
        self.hold_text(chunk.agent, chunk.text)
        return ()

    def on_tool_call_start(self, chunk: ToolStartChunk) -> tuple[str, ...]:
        self._announced.add(chunk.id)
        return self._told(chunk, f"calling {chunk.name}")

    def on_tool_call(self, chunk: ToolCallChunk) -> tuple[str, ...]:
        if chunk.id in self._announced:
            return ()
        return self._told(chunk, f"calling {chunk.name}")

    def on_tool_result(self, chunk: ToolResultChunk) -> tuple[str, ...]:
        return self._told(chunk, f"{chunk.name} {'failed' if chunk.is_error else 'answered'}")

    def on_handoff(self, chunk: HandoffChunk) -> tuple[str, ...]:
        said = f"handed over to {chunk.target}" if chunk.started else f"back from {chunk.target}"
        return self._told(chunk, said)

    def on_final(self, chunk: FinalChunk) -> tuple[str, ...]:
        if chunk.agent == self.top:
            self.outcome.text = chunk.text
            self.outcome.output = chunk.output
        return ()

    def on_approval(self, chunk: ApprovalChunk) -> tuple[str, ...]:
        if chunk.agent == self.top:
            names = [str(call.get("name")) for call in chunk.calls if isinstance(call, dict)]
            self.outcome.approvals = (*self.outcome.approvals, *names)
        return ()

    def on_error(self, chunk: ErrorChunk) -> tuple[str, ...]:
        if chunk.agent == self.top:  # a handed-off agent's error is not the call's
            self.outcome.error = chunk.data
        return ()

    def on_done(self, chunk: DoneChunk) -> tuple[str, ...]:
        self.outcome.status = chunk.status
        return ()


__all__ = ["McpProgress", "Outcome"]
