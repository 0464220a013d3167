"""Trace events and the sink protocol (seed 002 §3-6, App. C).

Lower layers emit :class:`TraceEvent` objects through a :class:`Tracer`; sinks (JSONL files,
OpenTelemetry) decide where they go. Emitting is a non-blocking append: sinks must never do I/O on
the caller's path.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import KW_ONLY, dataclass, field, fields
from typing import Any, Final, Literal, Protocol, TypeAlias, runtime_checkable

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


@dataclass(frozen=True, slots=True, init=False)
class TraceEvent:
    """One trace record. Field names follow seed 002 App. C (``tok_prompt``, ``tok_completion``,
    ``duration_ms``, ``result``/``error``); ``time`` is epoch seconds and is rendered as ISO-8601 by
    sinks. ``data`` holds event-specific extras (model, step, stop reason, arguments …).

    Frozen, so one event may go to every sink. Its ``__init__`` is written out rather than generated:
    a frozen dataclass's own sets each of the fifteen fields through ``object.__setattr__``, which
    made building the events the largest part of what tracing a run cost; this one stores them
    through the slots' own setters (same arguments, same defaults, same frozen object)."""

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

    def __init__(
        self,
        event: EventName,
        session: str,
        agent: str,
        *,
        time: float | None = None,
        run_id: str = "",
        step: int | None = None,
        tool: str | None = None,
        call_id: str | None = None,
        model: str | None = None,
        tok_prompt: int | None = None,
        tok_completion: int | None = None,
        duration_ms: float | None = None,
        result: JsonValue = None,
        error: str | None = None,
        data: dict[str, JsonValue] | None = None,
    ) -> None:
        """``time`` defaults to now and ``data`` to a new empty dict, as the fields' factories say."""
        (
            set_event,
            set_session,
            set_agent,
            set_time,
            set_run_id,
            set_step,
            set_tool,
            set_call_id,
            set_model,
            set_tok_prompt,
            set_tok_completion,
            set_duration_ms,
            set_result,
            set_error,
            set_data,
        ) = _EVENT_SETTERS
        set_event(self, event)
        set_session(self, session)
        set_agent(self, agent)
        set_time(self, _now() if time is None else time)
        set_run_id(self, run_id)
        set_step(self, step)
        set_tool(self, tool)
        set_call_id(self, call_id)
        set_model(self, model)
        set_tok_prompt(self, tok_prompt)
        set_tok_completion(self, tok_completion)
        set_duration_ms(self, duration_ms)
        set_result(self, result)
        set_error(self, error)
        set_data(self, {} if data is None else data)


_now = time.time
_EVENT_FIELDS: Final = tuple(f.name for f in fields(TraceEvent))
_EVENT_SETTERS: Final[tuple[Callable[[TraceEvent, Any], None], ...]] = tuple(
    getattr(TraceEvent, name).__set__ for name in _EVENT_FIELDS
)
"""The slot setters, in field order (``TraceEvent.__init__`` unpacks them in the same order)."""


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
