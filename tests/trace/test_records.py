"""Reading JSONL traces back: forgiving per line, clear errors for files that cannot be read."""

from __future__ import annotations

from pathlib import Path

import pytest

from kanawa.trace.events import TraceEvent
from kanawa.trace.jsonl import JsonlTraceSink
from kanawa.trace.records import TraceFileError, TraceRecord, parse_trace_lines, read_trace


def test_reads_back_what_the_sink_wrote(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    with JsonlTraceSink(path) as sink:
        sink.emit(
            TraceEvent(
                "tool_end", "s", "a", time=1.5, run_id="r", step=2, tool="t", duration_ms=3.0, data={"k": 1}
            )
        )
    log = read_trace(path)
    assert log.skipped == 0
    assert log.records == (
        TraceRecord(
            "tool_end",
            1.5,
            session="s",
            agent="a",
            run_id="r",
            step=2,
            tool="t",
            duration_ms=3.0,
            data={"k": 1},
        ),
    )


def test_corrupt_lines_are_skipped_and_counted() -> None:
    lines = [
        '{"event":"agent_start","time":"2025-01-01T00:00:00.000Z","agent":"a"}',
        "",
        '{"event":"tool_end","time":"2025-01-01T00:00:01',  # torn line from a killed process
        "[1, 2]",
        '{"time":"2025-01-01T00:00:00.000Z"}',
        '{"event":"agent_end","time":"not a time"}',
        '{"event":"agent_end","time":1735689602,"tok_prompt":"many","step":true}',
    ]
    log = parse_trace_lines(lines)
    assert [r.event for r in log.records] == ["agent_start", "agent_end"]
    assert log.skipped == 4
    assert log.records[1].tok_prompt is None  # ill-typed optional fields are dropped, not fatal
    assert log.records[1].step is None


def test_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(TraceFileError, match="trace file not found"):
        read_trace(tmp_path / "nope.jsonl")


def test_directory_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(TraceFileError, match="is a directory"):
        read_trace(tmp_path)


def test_binary_file_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(TraceFileError, match="not a UTF-8 text file"):
        read_trace(path)


def test_error_flag_covers_error_field_and_error_events() -> None:
    assert TraceRecord("tool_end", 0, error="x").is_error
    assert TraceRecord("llm_error", 0).is_error
    assert not TraceRecord("tool_end", 0).is_error
