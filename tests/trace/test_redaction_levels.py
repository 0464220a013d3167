"""What a real run writes to the JSONL trace at each ``KANAWA_TRACE_REDACT`` level (docs/guide.md "Traces",
docs/design.md "Trace redaction").

The run quotes a marker — the user's essay — everywhere it can: in the prompt, in tool arguments, in a
tool's result, in a tool's exception, in the model's answer and in a provider's error message. At
``payloads`` the marker appears nowhere in the file; at the default ``secrets`` it appears exactly in
the four fields the docs list, and never in prompts, tool arguments or model text.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kanawa.agents.agent import Agent
from kanawa.llm.errors import LLMBadRequestError
from kanawa.llm.testing.models import ScriptedLLM
from kanawa.loop.errors import LLMCallFailed
from kanawa.tools.decorator import tool
from kanawa.trace.config import RedactMode, TraceSettings, jsonl_path, tracer_from_env
from kanawa.trace.events import Tracer
from kanawa.types import AssistantMessage, LLMResponse, StopReason, ToolCall, Usage

MARKER = "ESSAY-MARKER-7f3c"
ESSAY = f"My essay about rivers. {MARKER} It ends here."


@tool
def quote(text: str) -> str:
    """Return the text it was given.

    Args:
        text: any text
    """
    return f"quoted: {text}"


@tool
def grade(text: str) -> str:
    """Grade an essay.

    Args:
        text: the essay
    """
    raise ValueError(f"cannot grade essay {text!r}")


def _calls() -> LLMResponse:
    arguments = json.dumps({"text": ESSAY})
    message = AssistantMessage(
        text=f"Let me look at {MARKER}.",
        tool_calls=(ToolCall("call_quote", "quote", arguments), ToolCall("call_grade", "grade", arguments)),
    )
    return LLMResponse(
        message, StopReason.TOOL_USE, usage=Usage(input_tokens=10, output_tokens=5, requests=1), model="m"
    )


def _tracer(tmp_path: Path, mode: RedactMode | None) -> Tracer:
    settings = (
        TraceSettings(directory=tmp_path) if mode is None else TraceSettings(directory=tmp_path, redact=mode)
    )
    return tracer_from_env(session="levels", settings=settings)


async def _run_and_read(tmp_path: Path, mode: RedactMode | None) -> list[dict[str, object]]:
    """One run that succeeds (tool result, tool error, final answer) and one whose provider refuses."""
    tracer = _tracer(tmp_path, mode)
    ok = Agent(
        "essay",
        "Help.",
        tools=[quote, grade],
        model=ScriptedLLM([_calls(), f"Final: {MARKER}"]),
        tracer=tracer,
    )
    result = await ok.arun(ESSAY)
    assert MARKER in result.output
    refusing = ScriptedLLM([LLMBadRequestError(f"prompt rejected: {ESSAY}", status_code=400)])
    failing = Agent("essay", "Help.", model=refusing, tracer=tracer)
    with pytest.raises(LLMCallFailed):
        await failing.arun(ESSAY)
    await tracer.aclose()
    path = jsonl_path(tracer)
    assert path is not None
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _fields_with_marker(lines: list[dict[str, object]]) -> set[tuple[str, str]]:
    return {
        (str(line["event"]), key)
        for line in lines
        for key, value in line.items()
        if MARKER in json.dumps(value, ensure_ascii=False)
    }


async def test_payload_redaction_keeps_the_marker_out_of_every_line(tmp_path: Path) -> None:
    lines = await _run_and_read(tmp_path, "payloads")
    assert MARKER not in json.dumps(lines)
    tool_ends = {str(line["tool"]): line for line in lines if line["event"] == "tool_end"}
    assert "result" not in tool_ends["quote"]
    assert tool_ends["grade"]["error"] == "[REDACTED]"
    assert tool_ends["grade"]["data"] == {"error_kind": "execution_error"}
    failed = [line for line in lines if line["event"] in ("llm_error", "agent_end") and "error" in line]
    assert [line["error"] for line in failed] == ["[REDACTED]", "[REDACTED]"]
    assert failed[-1]["data"]["error_type"] == "LLMCallFailed"  # type: ignore[index]


@pytest.mark.parametrize("mode", [None, "secrets"], ids=["default", "secrets"])
async def test_the_default_level_records_exactly_the_documented_fields(
    tmp_path: Path, mode: RedactMode | None
) -> None:
    lines = await _run_and_read(tmp_path, mode)
    assert _fields_with_marker(lines) == {
        ("tool_end", "result"),  # the tool's result text, cut to 300 characters
        ("tool_end", "error"),  # the failed tool's exception text (seed 000 §6.2: details to the trace)
        ("llm_error", "error"),  # the provider's error message
        ("agent_end", "error"),  # the exception that ended the run
    }
    grade_end = next(line for line in lines if line["event"] == "tool_end" and line["tool"] == "grade")
    assert "ValueError" in str(grade_end["error"])
