"""JsonlTraceSink (seed 002 §3-6, §6): enqueue-only emit, batching, flush on close and at interpreter
exit, per-session file names, and a run that never fails because of its trace."""

from __future__ import annotations

import gc
import json
import logging
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from kanawa.trace.events import TraceEvent
from kanawa.trace.jsonl import JsonlTraceSink, trace_file_name

GOLDEN = Path(__file__).parent / "golden" / "run.jsonl"


def _event(n: int, **fields: object) -> TraceEvent:
    return TraceEvent("tool_end", "sess", "agent", time=1_700_000_000 + n, tool=f"t{n}", **fields)  # type: ignore[arg-type]


def _lines(path: Path) -> list[dict[str, object]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _wait_for_lines(path: Path, count: int, *, limit: float = 10.0) -> list[dict[str, object]]:
    """Poll until the writer thread has written ``count`` lines (a bound for hangs, not a timing assert)."""
    deadline = time.monotonic() + limit
    while True:
        lines = _lines(path)
        if len(lines) >= count or time.monotonic() > deadline:
            return lines
        time.sleep(0.01)


def test_emit_only_enqueues_no_file_io_on_the_callers_path(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    sink = JsonlTraceSink(path, batch_size=1000, flush_interval=3600)
    for n in range(10):
        sink.emit(_event(n))
    assert not path.exists()  # nothing written yet: the writer waits for a batch, a flush or close
    assert sink.flush()
    assert len(_lines(path)) == 10
    sink.close()


def test_writes_a_batch_once_batch_size_events_are_waiting(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    sink = JsonlTraceSink(path, batch_size=3, flush_interval=3600)
    for n in range(3):
        sink.emit(_event(n))
    assert [line["tool"] for line in _wait_for_lines(path, 3)] == ["t0", "t1", "t2"]
    sink.emit(_event(3))
    sink.emit(_event(4))
    assert len(_lines(path)) == 3  # below batch size and long before the flush interval
    sink.close()
    assert [line["tool"] for line in _lines(path)] == ["t0", "t1", "t2", "t3", "t4"]


def test_flush_interval_writes_a_partial_batch(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    sink = JsonlTraceSink(path, batch_size=1000, flush_interval=0.05)
    sink.emit(_event(0))
    assert len(_wait_for_lines(path, 1)) == 1
    sink.close()


async def test_aclose_flushes_everything_and_is_idempotent(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    sink = JsonlTraceSink(path, batch_size=1000, flush_interval=3600)
    for n in range(25):
        sink.emit(_event(n))
    await sink.aclose()
    await sink.aclose()
    sink.close()
    assert len(_lines(path)) == 25
    assert sink.written == 25
    assert sink.closed


def test_events_after_close_are_dropped_and_counted(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    with JsonlTraceSink(path) as sink:
        sink.emit(_event(0))
    sink.emit(_event(1))
    assert len(_lines(path)) == 1
    assert sink.dropped == 1


def test_a_sink_that_saw_no_events_creates_no_file(tmp_path: Path) -> None:
    sink = JsonlTraceSink(tmp_path / "sub" / "t.jsonl")
    sink.close()
    assert not (tmp_path / "sub").exists()


def test_directory_target_gets_a_file_named_after_the_session(tmp_path: Path) -> None:
    sink = JsonlTraceSink(tmp_path / "traces", session="run-42")
    assert sink.path.parent == tmp_path / "traces"
    assert sink.path.name.endswith("_run-42.jsonl")
    sink.emit(_event(0))
    sink.close()
    assert sink.path.exists()  # parent directories were created


def test_existing_directory_is_used_as_a_directory(tmp_path: Path) -> None:
    target = tmp_path / "traces.d"
    target.mkdir()
    sink = JsonlTraceSink(target, session="s")
    assert sink.path.parent == target


def test_trace_file_name_is_sortable_and_filesystem_safe() -> None:
    name = trace_file_name("a/b c", when=0)
    assert name == "19700101T000000Z_a_b_c.jsonl"


def test_io_error_is_logged_once_and_never_raised(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    sink = JsonlTraceSink(blocker / "t.jsonl", batch_size=1)
    with caplog.at_level(logging.WARNING, logger="kanawa.trace"):
        for n in range(5):
            sink.emit(_event(n))
        sink.close()
    warnings = [r for r in caplog.records if "cannot write trace file" in r.getMessage()]
    assert len(warnings) == 1
    assert sink.dropped == 5


def test_unserialisable_result_is_written_as_repr(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    with JsonlTraceSink(path) as sink:
        sink.emit(_event(0, result={"value": object()}))
        sink.emit(_event(1))
    lines = _lines(path)
    assert str(lines[0]["result"]).startswith("{'value': '<object object")
    assert lines[1]["tool"] == "t1"


def test_emit_from_many_threads_loses_nothing(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    sink = JsonlTraceSink(path, batch_size=7)

    def worker(base: int) -> None:
        for n in range(100):
            sink.emit(_event(base + n))

    threads = [threading.Thread(target=worker, args=(k * 1000,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    sink.close()
    assert len({line["tool"] for line in _lines(path)}) == 400


def test_garbage_collected_unclosed_sink_still_flushes(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    sink = JsonlTraceSink(path, batch_size=1000, flush_interval=3600)
    sink.emit(_event(0))
    del sink
    gc.collect()
    assert len(_lines(path)) == 1


def test_a_crashing_script_still_gets_its_trace_at_interpreter_exit(tmp_path: Path) -> None:
    path = tmp_path / "crash.jsonl"
    script = textwrap.dedent(
        f"""
        from kanawa.trace.events import TraceEvent
        from kanawa.trace.jsonl import JsonlTraceSink

        sink = JsonlTraceSink({str(path)!r}, batch_size=10_000, flush_interval=3600)
        for n in range(5):
            sink.emit(TraceEvent("tool_end", "s", "a", tool=f"t{{n}}"))
        raise RuntimeError("the script crashes before closing its sink")
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert "RuntimeError" in proc.stderr
    assert [line["tool"] for line in _lines(path)] == ["t0", "t1", "t2", "t3", "t4"]


def test_matches_the_golden_jsonl_snapshot(tmp_path: Path) -> None:
    """Seed 002 §8: trace completeness is checked against a golden JSONL file."""
    path = tmp_path / "run.jsonl"
    with JsonlTraceSink(path) as sink:
        base = 1747973673.0
        sink.emit(TraceEvent("agent_start", "f3a", "DraftAgent", time=base, run_id="r1"))
        sink.emit(
            TraceEvent("llm_start", "f3a", "DraftAgent", time=base + 0.01, run_id="r1", step=1, model="gpt-5")
        )
        sink.emit(
            TraceEvent(
                "llm_end",
                "f3a",
                "DraftAgent",
                time=base + 0.5,
                run_id="r1",
                step=1,
                model="gpt-5",
                tok_prompt=812,
                tok_completion=74,
                duration_ms=490.0,
                data={"stop_reason": "tool_use"},
            )
        )
        sink.emit(
            TraceEvent(
                "tool_start",
                "f3a",
                "DraftAgent",
                time=base + 0.51,
                run_id="r1",
                step=1,
                tool="generate_draft",
                call_id="call_1",
                data={"arguments": '{"depth":2}'},
            )
        )
        sink.emit(
            TraceEvent(
                "tool_end",
                "f3a",
                "DraftAgent",
                time=base + 0.892,
                run_id="r1",
                step=1,
                tool="generate_draft",
                call_id="call_1",
                duration_ms=382.0,
                result={"new_text": "...", "change_map": []},
            )
        )
        sink.emit(
            TraceEvent(
                "agent_end",
                "f3a",
                "DraftAgent",
                time=base + 1.2,
                run_id="r1",
                tok_prompt=812,
                tok_completion=74,
                duration_ms=1200.0,
                data={"termination_reason": "completed"},
            )
        )
    assert path.read_text(encoding="utf-8") == GOLDEN.read_text(encoding="utf-8")


def test_a_forked_child_writes_through_its_own_writer_thread(tmp_path: Path) -> None:
    path = tmp_path / "fork.jsonl"
    script = textwrap.dedent(
        f"""
        import os, warnings
        from kanawa.trace.events import TraceEvent
        from kanawa.trace.jsonl import JsonlTraceSink

        warnings.simplefilter("ignore", DeprecationWarning)  # fork() with a live thread
        sink = JsonlTraceSink({str(path)!r}, batch_size=10_000, flush_interval=3600)
        sink.emit(TraceEvent("agent_start", "s", "parent", tool="before-fork"))
        sink.flush()
        pid = os.fork()
        if pid == 0:
            sink.emit(TraceEvent("tool_end", "s", "child", tool="in-child"))
            sink.close()
            os._exit(0)
        os.waitpid(pid, 0)
        sink.emit(TraceEvent("agent_end", "s", "parent", tool="after-fork"))
        sink.close()
        """
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)
    assert sorted(str(line["tool"]) for line in _lines(path)) == ["after-fork", "before-fork", "in-child"]
