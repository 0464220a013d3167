"""A timeline model of one trace: rows, runs, steps, tool calls, LLM calls and token totals.

Pure functions over :class:`~kanawa.trace.records.TraceRecord` sequences — no I/O, no rendering (the
``kanawa trace show`` command renders it). Times are milliseconds from the first record.

How records are paired:

* ``tool_start``/``tool_end`` by ``(run_id, call_id)`` (falling back to ``(run_id, step, tool)``);
* ``llm_start`` with the next ``llm_end``/``llm_error`` of the same ``(run_id, step)``;
* ``agent_start``/``agent_end`` by ``run_id``.

A duration is the end record's ``duration_ms`` when present, else the time between start and end.
An end without a start is placed ``duration_ms`` before its own time; a start without an end is
"unfinished" (``duration_ms is None``).

Token totals count each model call once: from the LLM events when any carries tokens, otherwise from
``agent_end`` records (a run's total), otherwise from whatever records carry tokens (App. C puts them
on ``tool_end``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from kanawa.trace.records import TraceRecord

Status: TypeAlias = Literal["ok", "error", "unfinished", ""]

_END_EVENTS = frozenset({"agent_end", "tool_end", "handoff_end", "llm_end", "llm_error"})
_LLM_END = frozenset({"llm_end", "llm_error"})


@dataclass(frozen=True, slots=True)
class TimelineRow:
    """One record as a row: when, what, who, on which tool or model, how long, tokens, status."""

    offset_ms: float
    event: str
    agent: str
    subject: str
    run_id: str
    step: int | None
    duration_ms: float | None
    tok_prompt: int | None
    tok_completion: int | None
    status: Status
    error: str | None


@dataclass(frozen=True, slots=True)
class ToolSpan:
    name: str
    call_id: str | None
    run_id: str
    step: int | None
    start_ms: float
    duration_ms: float | None
    error: str | None

    @property
    def status(self) -> Status:
        return "error" if self.error is not None else "unfinished" if self.duration_ms is None else "ok"


@dataclass(frozen=True, slots=True)
class LLMCall:
    model: str
    run_id: str
    step: int | None
    start_ms: float
    duration_ms: float | None
    tok_prompt: int
    tok_completion: int
    error: str | None


@dataclass(frozen=True, slots=True)
class StepSpan:
    run_id: str
    step: int
    start_ms: float
    duration_ms: float
    tool_calls: int
    llm_calls: int
    errors: int


@dataclass(frozen=True, slots=True)
class RunSpan:
    run_id: str
    agent: str
    start_ms: float
    duration_ms: float
    status: Status
    error: str | None
    steps: tuple[StepSpan, ...]


@dataclass(frozen=True, slots=True)
class TokenTotals:
    prompt: int = 0
    completion: int = 0
    by_model: dict[str, tuple[int, int]] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return self.prompt + self.completion


@dataclass(frozen=True, slots=True)
class Timeline:
    """Everything ``kanawa trace show`` prints. ``started_at`` is epoch seconds of the first record."""

    started_at: float | None
    wall_ms: float
    sessions: tuple[str, ...]
    rows: tuple[TimelineRow, ...]
    runs: tuple[RunSpan, ...]
    tools: tuple[ToolSpan, ...]
    llm_calls: tuple[LLMCall, ...]
    tokens: TokenTotals
    errors: int


def _start_of(record: TraceRecord) -> float:
    """When the work a record describes began: end records reach back by their duration."""
    if record.event in _END_EVENTS and record.duration_ms is not None:
        return record.time - record.duration_ms / 1000.0
    return record.time


def _duration(start: TraceRecord | None, end: TraceRecord) -> float:
    if end.duration_ms is not None:
        return end.duration_ms
    return (end.time - start.time) * 1000.0 if start is not None else 0.0


def _status(record: TraceRecord) -> Status:
    if record.is_error:
        return "error"
    return "ok" if record.event in _END_EVENTS else ""


def _rows(records: Sequence[TraceRecord], origin: float) -> tuple[TimelineRow, ...]:
    return tuple(
        TimelineRow(
            offset_ms=(r.time - origin) * 1000.0,
            event=r.event,
            agent=r.agent,
            subject=r.tool or r.model or "",
            run_id=r.run_id,
            step=r.step,
            duration_ms=r.duration_ms,
            tok_prompt=r.tok_prompt,
            tok_completion=r.tok_completion,
            status=_status(r),
            error=r.error,
        )
        for r in records
    )


def _tools(records: Sequence[TraceRecord], origin: float) -> tuple[ToolSpan, ...]:
    """Tool calls in start order; a start without an end stays in the list as unfinished."""
    open_calls: dict[tuple[str, str], int] = {}
    spans: list[ToolSpan] = []
    for r in records:
        key = (r.run_id, r.call_id) if r.call_id else (r.run_id, f"step {r.step}: {r.tool}")
        if r.event == "tool_start":
            open_calls[key] = len(spans)
            spans.append(
                ToolSpan(r.tool or "?", r.call_id, r.run_id, r.step, (r.time - origin) * 1000.0, None, None)
            )
        elif r.event == "tool_end":
            index = open_calls.pop(key, None)
            if index is not None:
                started = spans[index]
                spans[index] = ToolSpan(
                    started.name if started.name != "?" else (r.tool or "?"),
                    r.call_id or started.call_id,
                    r.run_id,
                    r.step if r.step is not None else started.step,
                    started.start_ms,
                    r.duration_ms
                    if r.duration_ms is not None
                    else (r.time - origin) * 1000.0 - started.start_ms,
                    r.error,
                )
            else:
                spans.append(
                    ToolSpan(
                        r.tool or "?",
                        r.call_id,
                        r.run_id,
                        r.step,
                        (_start_of(r) - origin) * 1000.0,
                        _duration(None, r),
                        r.error,
                    )
                )
    return tuple(spans)


def _llm_calls(records: Sequence[TraceRecord], origin: float) -> tuple[LLMCall, ...]:
    pending: dict[tuple[str, int | None], list[TraceRecord]] = {}
    calls: list[LLMCall] = []
    for r in records:
        key = (r.run_id, r.step)
        if r.event == "llm_start":
            pending.setdefault(key, []).append(r)
        elif r.event in _LLM_END:
            starts = pending.get(key)
            start = starts.pop(0) if starts else None
            begin = start.time if start is not None else _start_of(r)
            calls.append(
                LLMCall(
                    r.model or (start.model if start else None) or "?",
                    r.run_id,
                    r.step,
                    (begin - origin) * 1000.0,
                    _duration(start, r),
                    r.tok_prompt or 0,
                    r.tok_completion or 0,
                    r.error if r.error is not None else ("error" if r.event == "llm_error" else None),
                )
            )
    return tuple(calls)


def _steps(records: Sequence[TraceRecord], run_id: str, origin: float) -> tuple[StepSpan, ...]:
    grouped: dict[int, list[TraceRecord]] = {}
    for r in records:
        if r.run_id == run_id and r.step is not None:
            grouped.setdefault(r.step, []).append(r)
    steps = []
    for step, items in sorted(grouped.items()):
        begin = min(_start_of(r) for r in items)
        end = max(r.time for r in items)
        steps.append(
            StepSpan(
                run_id,
                step,
                (begin - origin) * 1000.0,
                (end - begin) * 1000.0,
                sum(1 for r in items if r.event == "tool_end"),
                sum(1 for r in items if r.event in _LLM_END),
                sum(1 for r in items if r.is_error),
            )
        )
    return tuple(steps)


def _runs(records: Sequence[TraceRecord], origin: float) -> tuple[RunSpan, ...]:
    order: list[str] = []
    by_run: dict[str, list[TraceRecord]] = {}
    for r in records:
        if r.run_id not in by_run:
            order.append(r.run_id)
            by_run[r.run_id] = []
        by_run[r.run_id].append(r)
    runs = []
    for run_id in order:
        items = by_run[run_id]
        start = next((r for r in items if r.event == "agent_start"), None)
        end = next((r for r in reversed(items) if r.event == "agent_end"), None)
        begin = start.time if start is not None else min(_start_of(r) for r in items)
        if end is not None:
            duration = _duration(start, end) if start is not None else (end.time - begin) * 1000.0
            status: Status = "error" if end.error is not None else "ok"
            error = end.error
        else:
            duration = (max(r.time for r in items) - begin) * 1000.0
            status, error = "unfinished", None
        agent = (start or end or items[0]).agent
        runs.append(
            RunSpan(
                run_id,
                agent,
                (begin - origin) * 1000.0,
                duration,
                status,
                error,
                _steps(items, run_id, origin),
            )
        )
    return tuple(runs)


def _tokens(records: Sequence[TraceRecord]) -> TokenTotals:
    def has_tokens(r: TraceRecord) -> bool:
        return r.tok_prompt is not None or r.tok_completion is not None

    counted = [r for r in records if r.event in _LLM_END and has_tokens(r)]
    if not counted:
        counted = [r for r in records if r.event == "agent_end" and has_tokens(r)]
    if not counted:
        counted = [r for r in records if has_tokens(r)]
    by_model: dict[str, tuple[int, int]] = {}
    for r in counted:
        if r.model:
            prompt, completion = by_model.get(r.model, (0, 0))
            by_model[r.model] = (prompt + (r.tok_prompt or 0), completion + (r.tok_completion or 0))
    return TokenTotals(
        sum(r.tok_prompt or 0 for r in counted), sum(r.tok_completion or 0 for r in counted), by_model
    )


def build_timeline(records: Sequence[TraceRecord]) -> Timeline:
    """Aggregate records (in emission order) into a :class:`Timeline`. An empty input gives an empty
    timeline with ``started_at=None``.

    Time zero is the first ``*_start`` record (so the first row of a normal trace is at +0 ms); a trace
    without start records begins where its earliest end record reaches back to.
    """
    if not records:
        return Timeline(None, 0.0, (), (), (), (), (), TokenTotals(), 0)
    starts = [r.time for r in records if r.event.endswith("_start")]
    origin = min(starts) if starts else min(_start_of(r) for r in records)
    end = max(r.time for r in records)
    sessions = tuple(dict.fromkeys(r.session for r in records if r.session))
    return Timeline(
        started_at=origin,
        wall_ms=(end - origin) * 1000.0,
        sessions=sessions,
        rows=_rows(records, origin),
        runs=_runs(records, origin),
        tools=_tools(records, origin),
        llm_calls=_llm_calls(records, origin),
        tokens=_tokens(records),
        errors=sum(1 for r in records if r.is_error),
    )


__all__ = [
    "LLMCall",
    "RunSpan",
    "StepSpan",
    "Timeline",
    "TimelineRow",
    "TokenTotals",
    "ToolSpan",
    "build_timeline",
]
