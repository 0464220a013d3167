"""Trace events and the sink protocol (seed 002 §3-6, App. C).

Lower layers emit :class:`TraceEvent` objects through a :class:`Tracer`; sinks (JSONL files,
OpenTelemetry) decide where they go. Emitting is a non-blocking append: sinks must never do I/O on
the caller's path.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import Final, Literal, Protocol, TypeAlias, runtime_checkable

from kanawa._logging import get_logger
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
    "route",
    "compaction",
]


@dataclass(frozen=True, slots=True)
class TraceEvent:
    """One trace record. Field names follow seed 002 App. C (``tok_prompt``, ``tok_completion``,
    ``duration_ms``, ``result``/``error``); ``time`` is epoch seconds and is rendered as ISO-8601 by
    sinks. ``data`` holds event-specific extras (model, step, stop reason, arguments …)."""

    event: EventName
    session: str
    agent: str
    _: KW_ONLY
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


_log = get_logger("kanawa.trace")

_UUID4_CLEAR: Final = ~((0xF << 76) | (0xC << 60))
_UUID4_SET: Final = (0x4 << 76) | (0x8 << 60)


def new_trace_id() -> str:
    """A fresh random id in ``uuid.uuid4().hex``'s form (32 hex digits, version 4, RFC 4122 variant).

    Drawn from :mod:`random` (reseeded in a forked child) rather than the OS's entropy: a run's
    tracer and an eval's case runs take one each, and ``uuid4`` cost more than the rest of a traced
    run's bookkeeping. It names a trace session or run; it is not a secret and must never be one."""
    return "%032x" % ((random.getrandbits(128) & _UUID4_CLEAR) | _UUID4_SET)


class Tracer:
    """Fans events out to sinks after redaction. One per run context; cheap when it has no sinks.

    Tracing never breaks a run: if the redactor raises, the event is dropped (fail closed — an event
    that could not be redacted is never written) and if a sink raises, the other sinks still get it.
    Each kind of failure is logged once per tracer, without the event's payload.
    """

    __slots__ = ("_failures", "_redact", "_sinks", "session")

    def __init__(
        self,
        *,
        sinks: Sequence[TraceSink] = (),
        session: str | None = None,
        redact: Redactor | None = None,
    ) -> None:
        self._sinks = tuple(sinks)
        self._redact = redact
        self.session = session or new_trace_id()
        self._failures: set[str] = set()

    @property
    def enabled(self) -> bool:
        return bool(self._sinks)

    @property
    def sinks(self) -> tuple[TraceSink, ...]:
        """The sinks this tracer writes to, in order (e.g. to find a JSONL sink's file path)."""
        return self._sinks

    def emit(self, event: TraceEvent) -> None:
        if not self._sinks:
            return
        out: TraceEvent | None = event
        if self._redact is not None:
            try:
                out = self._redact(event)
            except Exception as exc:
                self._log_once("redactor", exc)
                return
        if out is None:
            return
        for sink in self._sinks:
            try:
                sink.emit(out)
            except Exception as exc:
                self._log_once(type(sink).__name__, exc)

    def _log_once(self, where: str, exc: Exception) -> None:
        if where not in self._failures:
            self._failures.add(where)
            _log.warning("trace %s failed (%s); events are being dropped", where, type(exc).__name__)

    async def aclose(self) -> None:
        """Flush and close every sink; one failing sink does not stop the others closing."""
        for sink in self._sinks:
            try:
                await sink.aclose()
            except Exception as exc:
                self._log_once(f"{type(sink).__name__}.aclose", exc)
