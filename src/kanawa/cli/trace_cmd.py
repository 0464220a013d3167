"""``kanawa trace show``: a JSONL trace as a readable timeline (seed 002 §3-6, App. C).

The numbers come from :func:`kanawa.trace.timeline.build_timeline`; this module only lays them out:
one row per record (offset, event, agent, tool/model, step, duration, tokens, status), then per-run
step spans, then a footer with token totals and wall time.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console, RenderableType
from rich.table import Table
from rich.text import Text

from kanawa.cli.render import format_duration
from kanawa.cli.tables import Column, fitted_table
from kanawa.trace.config import trace_directory
from kanawa.trace.records import TraceFileError, TraceLog, read_trace
from kanawa.trace.serialize import iso_time
from kanawa.trace.timeline import Timeline, TimelineRow, build_timeline

_STATUS_STYLE = {"ok": "green", "error": "bold red", "unfinished": "yellow", "": "dim"}


def find_trace(target: Path | None) -> Path:
    """``target`` itself when it is a file; the newest ``*.jsonl`` in it when it is a directory; the
    newest trace in the configured trace directory when it is ``None``. Raises :class:`TraceFileError`."""
    if target is not None and not target.is_dir():
        return target
    directory = target if target is not None else trace_directory()
    if not directory.is_dir():
        raise TraceFileError(f"no trace directory at {directory}; run an agent with tracing on first")
    files = sorted(directory.glob("*.jsonl"), key=lambda p: (p.stat().st_mtime, p.name))
    if not files:
        raise TraceFileError(f"no .jsonl traces in {directory}")
    return files[-1]


def _tokens(row: TimelineRow) -> str:
    if row.tok_prompt is None and row.tok_completion is None:
        return ""
    return f"{row.tok_prompt or 0}/{row.tok_completion or 0}"


TIMELINE_COLUMNS = (
    Column("+time", "right", drop=2, style="dim"),
    Column("event", key=True),
    Column("agent", key=True),
    Column("tool / model", key=True, style="cyan"),
    Column("step", "right", drop=5),
    Column("duration", "right", drop=3),
    Column("tokens p/c", "right", drop=4),
    Column("status", wrap=True, drop=1),
)
"""A row is read by its event, agent and tool or model (kept whole); at 80 columns the step, the
tokens and the duration give way first, then the offset and the status."""

STEP_COLUMNS = (
    Column("run", key=True),
    Column("agent", key=True),
    Column("step", "right", key=True),
    Column("start", "right", drop=4),
    Column("duration", "right", drop=1),
    Column("llm calls", "right", drop=3),
    Column("tool calls", "right", drop=2),
    Column("errors", "right"),
)


def timeline_table(console: Console, timeline: Timeline) -> Table:
    rows: list[list[RenderableType]] = []
    for row in timeline.rows:
        status = Text(row.status or "·", style=_STATUS_STYLE[row.status])
        if row.error:
            status.append(f" {row.error[:60]}", style="red")
        rows.append(
            [
                f"{row.offset_ms:,.1f} ms",
                row.event,
                row.agent,
                row.subject,
                "" if row.step is None else str(row.step),
                "" if row.duration_ms is None else format_duration(row.duration_ms),
                _tokens(row),
                status,
            ]
        )
    return fitted_table(console, TIMELINE_COLUMNS, rows, title="Trace timeline", header_style="bold")


def steps_table(console: Console, timeline: Timeline) -> Table | None:
    steps = [(run, step) for run in timeline.runs for step in run.steps]
    if not steps:
        return None
    rows: list[list[RenderableType]] = [
        [
            run.run_id[:12],
            run.agent,
            str(step.step),
            f"{step.start_ms:,.1f} ms",
            format_duration(step.duration_ms),
            str(step.llm_calls),
            str(step.tool_calls),
            Text(str(step.errors), style="red" if step.errors else ""),
        ]
        for run, step in steps
    ]
    return fitted_table(console, STEP_COLUMNS, rows, title="Steps", header_style="bold")


def footer(timeline: Timeline, log: TraceLog) -> Text:
    tokens = timeline.tokens
    text = Text()
    if timeline.started_at is not None:
        text.append(f"started {iso_time(timeline.started_at)} · ")
    text.append(f"wall time {format_duration(timeline.wall_ms)} · ", style="bold")
    text.append(
        f"tokens {tokens.prompt} prompt + {tokens.completion} completion = {tokens.total}", style="bold"
    )
    runs = len(timeline.runs)
    text.append(
        f"\n{runs} run{'s' if runs != 1 else ''} · {len(timeline.llm_calls)} model calls · "
        f"{len(timeline.tools)} tool calls · "
    )
    text.append(
        f"{timeline.errors} error{'s' if timeline.errors != 1 else ''}",
        style="red" if timeline.errors else "",
    )
    for model, (prompt, completion) in sorted(tokens.by_model.items()):
        text.append(f"\n  {model}: {prompt} prompt + {completion} completion", style="dim")
    if log.skipped:
        text.append(
            f"\nwarning: skipped {log.skipped} corrupt line{'s' if log.skipped != 1 else ''}", style="yellow"
        )
    return text


def show_trace(console: Console, err: Console, target: Path | None) -> int:
    """Print the timeline of a trace; returns the exit code (1, with one line on ``err``, when the file
    cannot be read or holds no records)."""
    try:
        path = find_trace(target)
        log = read_trace(path)
    except TraceFileError as exc:
        err.print(Text(f"kanawa: {exc}", style="bold red"), soft_wrap=True)
        return 1
    if not log.records:
        detail = f" ({log.skipped} corrupt lines)" if log.skipped else ""
        err.print(Text(f"kanawa: {path} holds no trace records{detail}", style="bold red"), soft_wrap=True)
        return 1
    timeline = build_timeline(log.records)
    console.print(Text(f"trace {path}", style="bold"))
    console.print(timeline_table(console, timeline))
    steps = steps_table(console, timeline)
    if steps is not None:
        console.print(steps)
    console.print(footer(timeline, log))
    return 0


__all__ = ["find_trace", "show_trace"]
