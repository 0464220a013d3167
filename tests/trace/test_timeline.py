"""The timeline model behind ``kanawa trace show``: runs, steps, tool and LLM spans, token totals."""

from __future__ import annotations

from kanawa.trace.records import TraceRecord
from kanawa.trace.timeline import build_timeline

T0 = 1_750_000_000.0


def _run() -> list[TraceRecord]:
    """One run, two steps: an LLM call asking for two tools (one fails), then the final answer."""
    return [
        TraceRecord("agent_start", T0, session="s", agent="calc", run_id="r1"),
        TraceRecord("llm_start", T0 + 0.010, session="s", agent="calc", run_id="r1", step=1, model="gpt-5"),
        TraceRecord(
            "llm_end",
            T0 + 0.210,
            session="s",
            agent="calc",
            run_id="r1",
            step=1,
            model="gpt-5",
            tok_prompt=100,
            tok_completion=20,
        ),
        TraceRecord(
            "tool_start", T0 + 0.220, session="s", agent="calc", run_id="r1", step=1, tool="add", call_id="c1"
        ),
        TraceRecord(
            "tool_start", T0 + 0.221, session="s", agent="calc", run_id="r1", step=1, tool="div", call_id="c2"
        ),
        TraceRecord(
            "tool_end",
            T0 + 0.250,
            session="s",
            agent="calc",
            run_id="r1",
            step=1,
            tool="add",
            call_id="c1",
            duration_ms=29.0,
        ),
        TraceRecord(
            "tool_end",
            T0 + 0.260,
            session="s",
            agent="calc",
            run_id="r1",
            step=1,
            tool="div",
            call_id="c2",
            error="ZeroDivisionError",
        ),
        TraceRecord("llm_start", T0 + 0.300, session="s", agent="calc", run_id="r1", step=2, model="gpt-5"),
        TraceRecord(
            "llm_end",
            T0 + 0.500,
            session="s",
            agent="calc",
            run_id="r1",
            step=2,
            model="gpt-5",
            tok_prompt=150,
            tok_completion=30,
            duration_ms=200.0,
        ),
        TraceRecord(
            "agent_end",
            T0 + 0.510,
            session="s",
            agent="calc",
            run_id="r1",
            tok_prompt=250,
            tok_completion=50,
            duration_ms=510.0,
        ),
    ]


def test_rows_have_offsets_subjects_and_status() -> None:
    timeline = build_timeline(_run())
    rows = timeline.rows
    assert len(rows) == 10
    assert rows[0].offset_ms == 0.0
    assert round(rows[2].offset_ms) == 210
    assert rows[2].subject == "gpt-5"
    assert rows[3].subject == "add"
    assert rows[3].status == ""
    assert rows[5].status == "ok"
    assert rows[6].status == "error"
    assert round(timeline.wall_ms) == 510


def test_tools_are_paired_by_call_id_with_durations_and_errors() -> None:
    tools = build_timeline(_run()).tools
    assert [(t.name, t.status) for t in tools] == [("add", "ok"), ("div", "error")]
    assert tools[0].duration_ms == 29.0  # the recorded duration wins
    assert tools[1].duration_ms is not None
    assert round(tools[1].duration_ms) == 39  # else end time minus start time
    assert tools[1].error == "ZeroDivisionError"


def test_llm_calls_carry_model_tokens_and_duration() -> None:
    calls = build_timeline(_run()).llm_calls
    assert [(c.step, c.tok_prompt, c.tok_completion) for c in calls] == [(1, 100, 20), (2, 150, 30)]
    assert calls[0].duration_ms is not None
    assert round(calls[0].duration_ms) == 200


def test_token_totals_count_each_model_call_once() -> None:
    tokens = build_timeline(_run()).tokens
    # agent_end repeats the run's totals; they must not be added on top of the llm_end counts
    assert (tokens.prompt, tokens.completion, tokens.total) == (250, 50, 300)
    assert tokens.by_model == {"gpt-5": (250, 50)}


def test_token_totals_fall_back_to_agent_end_then_to_any_record() -> None:
    only_run = [r for r in _run() if not r.event.startswith("llm")]
    assert build_timeline(only_run).tokens.total == 300
    app_c_style = [
        TraceRecord(
            "tool_end",
            T0,
            session="s",
            agent="DraftAgent",
            tool="generate_draft",
            tok_prompt=812,
            tok_completion=74,
        )
    ]
    assert build_timeline(app_c_style).tokens.total == 886


def test_runs_and_steps_have_spans() -> None:
    (run,) = build_timeline(_run()).runs
    assert (run.run_id, run.agent, run.status) == ("r1", "calc", "ok")
    assert run.duration_ms == 510.0
    assert [s.step for s in run.steps] == [1, 2]
    step1, step2 = run.steps
    assert (step1.tool_calls, step1.llm_calls, step1.errors) == (2, 1, 1)
    assert round(step1.start_ms) == 10
    assert round(step1.duration_ms) == 250
    assert round(step2.start_ms) == 300
    assert round(step2.duration_ms) == 200


def test_unfinished_work_is_marked_unfinished() -> None:
    records = _run()[:5]  # crashed while two tools were running
    timeline = build_timeline(records)
    assert [t.status for t in timeline.tools] == ["unfinished", "unfinished"]
    assert timeline.runs[0].status == "unfinished"


def test_failed_run_and_llm_error_are_errors() -> None:
    records = [
        TraceRecord("agent_start", T0, session="s", agent="a", run_id="r"),
        TraceRecord("llm_start", T0 + 0.1, session="s", agent="a", run_id="r", step=1, model="m"),
        TraceRecord("llm_error", T0 + 0.2, session="s", agent="a", run_id="r", step=1, model="m"),
        TraceRecord("agent_end", T0 + 0.3, session="s", agent="a", run_id="r", error="LLMCallFailed"),
    ]
    timeline = build_timeline(records)
    assert timeline.errors == 2
    assert timeline.llm_calls[0].error == "error"
    assert timeline.runs[0].status == "error"


def test_end_without_start_reaches_back_by_its_duration() -> None:
    records = [TraceRecord("tool_end", T0 + 1.0, session="s", agent="a", tool="t", duration_ms=500.0)]
    timeline = build_timeline(records)
    assert timeline.tools[0].start_ms == 0.0
    assert timeline.wall_ms == 500.0


def test_several_runs_and_sessions_are_kept_apart() -> None:
    records = [
        TraceRecord("agent_start", T0, session="s1", agent="a", run_id="r1"),
        TraceRecord("agent_start", T0 + 1, session="s2", agent="b", run_id="r2"),
        TraceRecord("agent_end", T0 + 2, session="s1", agent="a", run_id="r1"),
    ]
    timeline = build_timeline(records)
    assert [(r.run_id, r.status) for r in timeline.runs] == [("r1", "ok"), ("r2", "unfinished")]
    assert timeline.sessions == ("s1", "s2")


def test_empty_trace_gives_an_empty_timeline() -> None:
    timeline = build_timeline([])
    assert timeline.started_at is None
    assert timeline.rows == ()
    assert timeline.tokens.total == 0
