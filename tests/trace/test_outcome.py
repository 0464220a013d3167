"""A trace's outcome is what its runs' ``agent_end`` records say, not whether any record is an error."""

from __future__ import annotations

from kanawa.trace.outcome import run_outcome, trace_outcome
from kanawa.trace.records import TraceRecord
from kanawa.types import JsonValue


def _start(run_id: str, **data: JsonValue) -> TraceRecord:
    return TraceRecord("agent_start", 0.0, agent="a", run_id=run_id, data=data)


def _end(run_id: str, reason: str | None = "completed", error: str | None = None) -> TraceRecord:
    data: dict[str, JsonValue] = {"termination_reason": reason}
    if error is not None:
        data["error_type"] = error.split(":", 1)[0]
    return TraceRecord("agent_end", 1.0, agent="a", run_id=run_id, error=error, data=data)


def test_a_run_that_recovered_from_a_refused_tool_call_completed() -> None:
    records = [
        _start("r"),
        TraceRecord("tool_end", 0.5, run_id="r", tool="leaky", error="tool invoke error: refused"),
        TraceRecord("llm_error", 0.6, run_id="r", error="429 rate limited"),  # retried, then answered
        _end("r"),
    ]
    assert trace_outcome(records) == "completed"


def test_a_run_that_ended_with_an_error_failed() -> None:
    assert trace_outcome([_start("r"), _end("r", None, "LLMCallFailed: step 1")]) == "failed"


def test_a_cancelled_run_an_approval_pause_and_a_run_that_never_ended() -> None:
    assert trace_outcome([_start("r"), _end("r", None, "CancelledError: ")]) == "cancelled"
    assert trace_outcome([_start("r"), _end("r", "approval_required")]) == "awaiting_approval"
    assert trace_outcome([_start("r"), TraceRecord("llm_start", 0.1, run_id="r")]) == "unfinished"
    assert run_outcome(None) == "unfinished"


def test_a_failed_sub_run_does_not_fail_the_parent_that_carried_on() -> None:
    records = [
        _start("parent"),
        _start("child", parent_run_id="parent", parent_step=1, parent_call_id="c1"),
        _end("child", None, "ValueError: bad"),
        _end("parent"),
    ]
    assert trace_outcome(records) == "completed"


def test_several_top_level_runs_show_the_least_happy_outcome() -> None:
    assert trace_outcome([_start("a"), _end("a"), _start("b"), _end("b", None, "X: y")]) == "failed"
    assert trace_outcome([_start("a"), _end("a"), _start("b")]) == "unfinished"
    assert trace_outcome([TraceRecord("tool_end", 0.0, run_id="r")]) is None
