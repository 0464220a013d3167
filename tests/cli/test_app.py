"""The ``kanawa`` command through typer's CliRunner: demo, run, trace show, --version."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kanawa import __version__
from kanawa.cli import app
from tests.cli.conftest import traces
from tests.wire.server import WireServer, json_reply


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_version(runner: CliRunner) -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.output.strip() == f"kanawa {__version__}"


def test_help_lists_the_commands(runner: CliRunner) -> None:
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    for command in ("demo", "run", "trace"):
        assert command in result.output


# -------------------------------------------------------------------------------------------- demo


def test_demo_is_driven_by_test_llm_calling_real_tools_with_their_example_arguments(
    runner: CliRunner, workdir: Path
) -> None:
    result = runner.invoke(app, ["demo"])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "model   test:test" in out
    # live events: three parallel calls with the schemas' example arguments, and their real results
    assert 'calculator(expression="(17 * 23) + sqrt(144)")' in out
    assert 'current_time(timezone="Asia/Tokyo")' in out
    assert 'read_file(path="notes.txt")' in out
    assert "✓ calculator" in out
    assert "✓ current_time" in out
    assert "✓ read_file" in out
    assert "403" in out
    assert "✗" not in out
    # the structured final answer, its summary quoting the tools, and the trace path
    assert "Final answer · DemoReport" in out
    assert "calculator → 403.0; current_time → " in out
    assert "read_file → kanawa demo notes" in out
    assert "confidence" in out
    (trace,) = traces(workdir)
    assert f"trace: {trace.relative_to(workdir)}" in out
    assert (workdir / ".kanawa" / "demo-files" / "notes.txt").is_file()


def test_demo_trace_records_the_three_tool_calls_and_the_structured_answer(
    runner: CliRunner, workdir: Path
) -> None:
    assert runner.invoke(app, ["demo"]).exit_code == 0
    (trace,) = traces(workdir)
    records = _records(trace)
    events = [r["event"] for r in records]
    assert events[0] == "agent_start"
    assert events[-1] == "agent_end"
    ends = [r for r in records if r["event"] == "tool_end"]
    assert [r["tool"] for r in ends] == ["calculator", "current_time", "read_file"]
    assert ends[0]["result"] == "403.0"
    assert str(ends[2]["result"]).startswith("kanawa demo notes")
    assert records[-1]["data"]["termination_reason"] == "completed"
    assert all(str(r["time"]).endswith("Z") for r in records)


def test_demo_with_the_scripted_model_shows_a_sandbox_refusal(runner: CliRunner, workdir: Path) -> None:
    result = runner.invoke(app, ["demo", "--model", "scripted"])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "model   test:kanawa-demo" in out
    assert 'calculator(expression="(17 * 23) + sqrt(144)")' in out
    assert 'read_file(path="../secrets.env")' in out
    assert "✗ read_file" in out
    assert "SandboxViolation" in out
    assert "Final answer · DemoReport" in out
    assert "(17 × 23) + √144 = 403.0" in out
    (trace,) = traces(workdir)
    ends = [r for r in _records(trace) if r["event"] == "tool_end"]
    assert [r["tool"] for r in ends] == ["calculator", "current_time", "read_file", "read_file"]
    assert "SandboxViolation" in str(ends[3]["error"])


def test_demo_without_a_trace_writes_none(runner: CliRunner, workdir: Path) -> None:
    result = runner.invoke(app, ["demo", "--no-trace"])
    assert result.exit_code == 0, result.output
    assert "Final answer · DemoReport" in result.output
    assert "trace:" not in result.output
    assert traces(workdir) == []


def test_demo_with_an_unusable_provider_exits_2_with_one_line(runner: CliRunner, workdir: Path) -> None:
    result = runner.invoke(app, ["demo", "--model", "nonsense:model"])
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [result.stderr.strip()]
    assert "unknown model string 'nonsense:model'" in result.stderr
    assert not (workdir / ".kanawa").exists()  # nothing was set up for a model that cannot run


# --------------------------------------------------------------------------------------------- run


def test_run_with_the_test_model_works_offline(runner: CliRunner, workdir: Path) -> None:
    result = runner.invoke(app, ["run", "--model", "test", "hi"])
    assert result.exit_code == 0, result.output
    assert "→ [step 1] calculator(" in result.output
    assert "Final answer" in result.output
    assert len(traces(workdir)) == 1


def test_run_without_streaming_or_tools(runner: CliRunner, workdir: Path) -> None:
    result = runner.invoke(app, ["run", "-m", "test", "--no-stream", "--no-tools", "--no-trace", "hi"])
    assert result.exit_code == 0, result.output
    assert "→" not in result.output  # no tool calls offered, none made
    assert "💬" not in result.output  # no deltas without streaming
    assert "Done." in result.output
    assert traces(workdir) == []


def test_run_model_from_kanawa_model_env(runner: CliRunner, workdir: Path) -> None:
    result = runner.invoke(app, ["run", "--no-trace", "hi"], env={"KANAWA_MODEL": "test", "COLUMNS": "200"})
    assert result.exit_code == 0, result.output


def test_kanawa_trace_0_disables_the_trace_and_trace_flag_forces_it(runner: CliRunner, workdir: Path) -> None:
    env = {"KANAWA_TRACE": "0", "COLUMNS": "200"}
    assert runner.invoke(app, ["run", "-m", "test", "hi"], env=env).exit_code == 0
    assert traces(workdir) == []
    assert runner.invoke(app, ["run", "-m", "test", "--trace", "hi"], env=env).exit_code == 0
    assert len(traces(workdir)) == 1


@pytest.mark.parametrize(
    ("model", "needle"),
    [
        ("openai:gpt-5", "OPENAI_API_KEY"),
        ("anthropic:claude-sonnet-4-5", "ANTHROPIC_API_KEY"),
        ("nonsense:model", "unknown model string"),
    ],
)
def test_run_with_an_unusable_provider_exits_2_with_one_clear_line(
    runner: CliRunner, workdir: Path, model: str, needle: str
) -> None:
    result = runner.invoke(app, ["run", "--model", model, "hi"])
    assert result.exit_code == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert needle in lines[0]
    assert "Traceback" not in result.output


def test_run_rejected_key_mid_run_exits_2_with_one_line(
    runner: CliRunner, workdir: Path, wire_server: WireServer
) -> None:
    wire_server.enqueue(
        json_reply(
            {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}, status=401
        )
    )
    model = f"openai:gpt-5@{wire_server.base_url}/v1"
    env = {"OPENAI_API_KEY": "sk-test-not-a-real-key-0000000000", "COLUMNS": "200"}
    result = runner.invoke(app, ["run", "--model", model, "--no-tools", "hi"], env=env)
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "401" in lines[0]
    assert "check OPENAI_API_KEY" in lines[0]
    assert "sk-test-not-a-real-key" not in result.output
    # the failed run still left its trace, with the error and without the key
    (trace,) = traces(workdir)
    text = trace.read_text(encoding="utf-8")
    assert '"event":"llm_error"' in text
    assert "sk-test-not-a-real-key" not in text


def test_bad_trace_setting_is_one_line(runner: CliRunner, workdir: Path) -> None:
    env = {"KANAWA_TRACE_REDACT": "sometimes", "COLUMNS": "200"}
    result = runner.invoke(app, ["run", "-m", "test", "hi"], env=env)
    assert result.exit_code == 2
    assert (
        result.stderr.strip()
        == "kanawa: KANAWA_TRACE_REDACT must be secrets, payloads or none (got 'sometimes')"
    )


def test_run_hitting_max_steps_is_one_line_not_a_traceback(runner: CliRunner, workdir: Path) -> None:
    result = runner.invoke(app, ["run", "-m", "test", "--max-steps", "1", "--no-trace", "hi"])
    assert result.exit_code == 2
    assert "limit of 1 steps" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


# ------------------------------------------------------------------------------------- trace show


def test_trace_show_renders_a_generated_trace(runner: CliRunner, workdir: Path) -> None:
    assert runner.invoke(app, ["demo", "--model", "scripted"]).exit_code == 0
    (trace,) = traces(workdir)
    result = runner.invoke(app, ["trace", "show", str(trace)])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "Trace timeline" in out
    for name in (
        "agent_start",
        "llm_end",
        "tool_end",
        "agent_end",
        "calculator",
        "current_time",
        "kanawa-demo",
    ):
        assert name in out
    assert "SandboxViolation" in out
    assert "Steps" in out
    assert "wall time" in out
    assert "4 model calls · 4 tool calls · 1 error" in out
    total = sum(
        int(r["tok_prompt"]) + int(r["tok_completion"]) for r in _records(trace) if r["event"] == "llm_end"
    )
    assert f"= {total}" in out


def test_trace_show_without_argument_uses_the_newest_trace(runner: CliRunner, workdir: Path) -> None:
    assert runner.invoke(app, ["run", "-m", "test", "hi"]).exit_code == 0
    result = runner.invoke(app, ["trace", "show"])
    assert result.exit_code == 0, result.output
    assert "Trace timeline" in result.output
    assert runner.invoke(app, ["trace", "show", ".kanawa/traces"]).exit_code == 0


def test_trace_show_missing_file_is_a_clear_error(runner: CliRunner, workdir: Path) -> None:
    result = runner.invoke(app, ["trace", "show", "nope.jsonl"])
    assert result.exit_code == 1
    assert "trace file not found: nope.jsonl" in result.stderr
    assert "Traceback" not in result.output


def test_trace_show_skips_corrupt_lines_with_a_warning_count(runner: CliRunner, workdir: Path) -> None:
    path = workdir / "t.jsonl"
    path.write_text(
        '{"event":"agent_start","time":"2025-05-23T04:14:33.000Z","session":"s","agent":"A","run_id":"r"}\n'
        "not json at all\n"
        '{"event":"tool_end","time":"2025-05-23T04:14:33.892Z","session":"s","agent":"A","tool":"generate_draft",'
        '"tok_prompt":812,"tok_completion":74,"duration_ms":940,"run_id":"r"}\n'
        '{"event":"agent_end","time":"2025-05-23T04:1\n',
        encoding="utf-8",
    )
    result = runner.invoke(app, ["trace", "show", str(path)])
    assert result.exit_code == 0, result.output
    assert "generate_draft" in result.output
    assert "skipped 2 corrupt lines" in result.output
    assert "886" in result.output  # App. C tokens counted from the tool_end line


def test_trace_show_file_with_no_records_fails(runner: CliRunner, workdir: Path) -> None:
    path = workdir / "t.jsonl"
    path.write_text("garbage\n{]\n", encoding="utf-8")
    result = runner.invoke(app, ["trace", "show", str(path)])
    assert result.exit_code == 1
    assert "holds no trace records (2 corrupt lines)" in result.stderr


def test_trace_show_without_any_trace_directory_fails_clearly(runner: CliRunner, workdir: Path) -> None:
    result = runner.invoke(app, ["trace", "show"])
    assert result.exit_code == 1
    assert "no trace directory" in result.stderr


def test_run_streams_a_real_tool_using_answer_over_the_openai_wire(
    runner: CliRunner, workdir: Path, wire_server: WireServer
) -> None:
    from tests.llm.openai_responses.wire import ResponseScript, text_response

    ask_tool = ResponseScript(response_id="resp_1").function_call(
        "calculator", '{"expression": "17 * 23"}', call_id="call_calc"
    )
    wire_server.enqueue(
        ask_tool.completed().sse(), text_response("17 × 23 = 391.", response_id="resp_2").sse()
    )
    model = f"openai:gpt-5@{wire_server.base_url}/v1"
    env = {"OPENAI_API_KEY": "sk-test-cli-0000000000", "COLUMNS": "200"}
    result = runner.invoke(app, ["run", "--model", model, "What is 17 * 23?"], env=env)
    assert result.exit_code == 0, result.output
    assert "calculator" in result.stdout
    assert "17 × 23 = 391." in result.stdout
    first, second = (request.json() for request in wire_server.requests)
    assert [t["name"] for t in first["tools"]] == ["calculator", "current_time"]
    outputs = [item for item in second["input"] if item.get("type") == "function_call_output"]
    assert outputs == [{"type": "function_call_output", "call_id": "call_calc", "output": "391"}]
