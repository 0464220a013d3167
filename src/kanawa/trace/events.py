"""Trace events and the sink protocol (seed 002 §3-6, App. C).

Lower layers emit :class:`TraceEvent` objects through a :class:`Tracer`; sinks (JSONL files,
OpenTelemetry) decide where they go. Emitting is a non-blocking append: sinks must never do I/O on
the caller's path.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol, TypeAlias, runtime_checkable

from kanawa.types import JsonValue

EventName: TypeAlias = Literal[
    "agent_start",
    "agent_end",
    "tool_start",
    "tool_end",
    "handoff_start",
    "handoff_end",
    "llm_start",
    "llm_end",
    "llm_error",
]


@dataclass(frozen=True, slots=True)
class TraceEvent:
    """One trace record. Field names follow seed 002 App. C (``tok_prompt``, ``tok_completion``,
    ``duration_ms``, ``result``/``error``); ``time`` is epoch seconds and is rendered as ISO-8601 by
    sinks. ``data`` holds event-specific extras (model, step, stop reason, arguments …)."""

    event: EventName
    session: str
    agent: str
    time: float = field(default_factory=time.time)
    run_id: str = ""
    step: int | None = None
    tool: str | None = None
    call_id: str | None = None
    model: str | None = None
    tok_prompt: int | None = None
    tok_completion: int | None = None
    duration_ms: float | None = None
    result: JsonValue = None
    error: str | None = None
    data: dict[str, JsonValue] = field(default_factory=dict)


@runtime_checkable
class TraceSink(Protocol):
    """Receives trace events. ``emit`` must return at once (queue, don't write); ``aclose`` flushes."""

    def emit(self, event: TraceEvent) -> None: ...

    async def aclose(self) -> None: ...


Redactor: TypeAlias = Callable[[TraceEvent], TraceEvent | None]
"""Rewrites (or, returning ``None``, drops) an event before any sink sees it."""


class Tracer:
    """Fans events out to sinks after redaction. One per run context; cheap when it has no sinks."""

    __slots__ = ("_redact", "_sinks", "session")

    def __init__(
        self,
        sinks: Sequence[TraceSink] = (),
        *,
        session: str | None = None,
        redact: Redactor | None = None,
    ) -> None:
        self._sinks = tuple(sinks)
        self._redact = redact
        self.session = session or uuid.uuid4().hex

    @property
    def enabled(self) -> bool:
        return bool(self._sinks)

    def emit(self, event: TraceEvent) -> None:
        if not self._sinks:
            return
        out: TraceEvent | None = self._redact(event) if self._redact is not None else event
        if out is None:
            return
        for sink in self._sinks:
            sink.emit(out)

    async def aclose(self) -> None:
        for sink in self._sinks:
            await sink.aclose()
