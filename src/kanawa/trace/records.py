"""Reading JSONL trace files back (seed 002 App. C) — the input of :mod:`kanawa.trace.timeline`.

Reading is forgiving line by line and strict about the file: a missing, unreadable or non-UTF-8 file
raises :class:`TraceFileError` with a sentence a user can act on; a line that is not a JSON object with
an ``event`` and a ``time`` is skipped and counted, so one torn line (a killed process) does not hide
the rest of the run.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path

from kanawa.trace.serialize import parse_iso_time
from kanawa.types import JsonValue


class TraceFileError(Exception):
    """The trace file cannot be read at all (missing, a directory, unreadable, not UTF-8 text)."""


@dataclass(frozen=True, slots=True)
class TraceRecord:
    """One parsed trace line. ``time`` is epoch seconds; absent fields are ``None`` (``""`` for
    ``run_id``, ``{}`` for ``data``), mirroring :class:`~kanawa.trace.events.TraceEvent`."""

    event: str
    time: float
    _: KW_ONLY
    session: str = ""
    agent: str = ""
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

    @property
    def is_error(self) -> bool:
        return self.error is not None or self.event.endswith("_error")

    @classmethod
    def from_json(cls, obj: JsonValue) -> TraceRecord:
        """Build a record from a decoded line. Raises :class:`ValueError` when ``obj`` is not an object
        with a string ``event`` and a parseable ``time``; ill-typed optional fields become ``None``."""
        if not isinstance(obj, dict):
            raise ValueError("a trace line must be a JSON object")
        event = obj.get("event")
        if not isinstance(event, str) or not event:
            raise ValueError("a trace line needs an 'event'")
        raw_time = obj.get("time")
        if isinstance(raw_time, str):
            when = parse_iso_time(raw_time)
        elif isinstance(raw_time, int | float) and not isinstance(raw_time, bool):
            when = float(raw_time)
        else:
            raise ValueError("a trace line needs a 'time'")
        data = obj.get("data")
        return cls(
            event=event,
            time=when,
            session=_str(obj.get("session")) or "",
            agent=_str(obj.get("agent")) or "",
            run_id=_str(obj.get("run_id")) or "",
            step=_int(obj.get("step")),
            tool=_str(obj.get("tool")),
            call_id=_str(obj.get("call_id")),
            model=_str(obj.get("model")),
            tok_prompt=_int(obj.get("tok_prompt")),
            tok_completion=_int(obj.get("tok_completion")),
            duration_ms=_float(obj.get("duration_ms")),
            result=obj.get("result"),
            error=_str(obj.get("error")),
            data=data if isinstance(data, dict) else {},
        )


def _str(value: JsonValue) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: JsonValue) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _float(value: JsonValue) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


@dataclass(frozen=True, slots=True)
class TraceLog:
    """The readable records of a trace file, in file order, and how many lines were skipped."""

    path: Path | None
    records: tuple[TraceRecord, ...]
    _: KW_ONLY
    skipped: int = 0


def parse_trace_lines(lines: Iterable[str], *, path: Path | None = None) -> TraceLog:
    """Parse JSONL text line by line; blank lines are ignored, bad lines counted in ``skipped``."""
    records: list[TraceRecord] = []
    skipped = 0
    for line in lines:
        text = line.strip()
        if not text:
            continue
        try:
            records.append(TraceRecord.from_json(json.loads(text)))
        except (ValueError, RecursionError):
            skipped += 1
    return TraceLog(path, tuple(records), skipped=skipped)


def read_trace(path: str | os.PathLike[str]) -> TraceLog:
    """Read a JSONL trace file. Raises :class:`TraceFileError` if the file cannot be read as text."""
    file = Path(path)
    if not file.exists():
        raise TraceFileError(f"trace file not found: {file}")
    if file.is_dir():
        raise TraceFileError(f"{file} is a directory; give a .jsonl trace file inside it")
    try:
        text = file.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise TraceFileError(f"{file} is not a UTF-8 text file; is it a JSONL trace?") from None
    except OSError as exc:
        raise TraceFileError(f"cannot read {file}: {exc.strerror or exc}") from None
    return parse_trace_lines(text.splitlines(), path=file)


__all__ = ["TraceFileError", "TraceLog", "TraceRecord", "parse_trace_lines", "read_trace"]
