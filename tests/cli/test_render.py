"""Rendering helpers: tool arguments, durations, live events and the final answer."""

from __future__ import annotations

import io

from pydantic import BaseModel
from rich.console import Console

from kanawa.cli.render import StreamPrinter, format_arguments, format_duration, render_output
from kanawa.loop.events import FinalResponse, Thinking, ToolCallStep, ToolResultStep
from kanawa.tools.base import ToolErrorKind, ToolResult
from kanawa.types import ReasoningDelta, TextDelta, TextPart, ToolCall, Usage


def _console() -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    return Console(file=buffer, width=200, no_color=True), buffer


def test_format_arguments_handles_objects_bad_json_and_empty() -> None:
    assert format_arguments(ToolCall("c", "t", '{"a": 1, "b": "x"}')) == 'a=1, b="x"'
    assert format_arguments(ToolCall("c", "t", "{not json")) == "{not json"
    assert format_arguments(ToolCall("c", "t", "")) == ""
    assert len(format_arguments(ToolCall("c", "t", '{"a": "' + "x" * 1000 + '"}'))) == 200


def test_format_duration_picks_a_readable_unit() -> None:
    assert format_duration(None) == "—"
    assert format_duration(0.25) == "250 µs"
    assert format_duration(12.34) == "12.3 ms"
    assert format_duration(2500) == "2.50 s"


def test_printer_shows_deltas_inline_and_steps_on_their_own_lines() -> None:
    console, buffer = _console()
    printer = StreamPrinter(console)
    printer(ReasoningDelta("plan"))
    printer(TextDelta("Hel"))
    printer(TextDelta("lo"))
    printer(ToolCallStep(1, ToolCall("c1", "add", '{"a": 1}')))
    ok = ToolResult("c1", "add", (TextPart("2"),), duration_ms=1.5)
    printer(ToolResultStep(1, ok))
    bad = ToolResult(
        "c2",
        "div",
        (TextPart("tool invoke error: failed to execute tool"),),
        is_error=True,
        error_kind=ToolErrorKind.EXECUTION_ERROR,
        detail="ZeroDivisionError: division by zero",
    )
    printer(ToolResultStep(1, bad))
    printer(Thinking(2, "final_output_request"))
    printer(TextDelta('{"v": 1}'))
    printer(FinalResponse(2, {"v": 1}, '{"v": 1}', Usage()))
    printer.finish()
    lines = buffer.getvalue().splitlines()
    assert lines[0] == "🧠 plan"
    assert lines[1] == "💬 Hello"
    assert lines[2] == "→ [step 1] add(a=1)"
    assert lines[3] == "✓ add [1.5 ms] 2"
    assert lines[4].startswith("✗ div [execution_error")
    assert "ZeroDivisionError" in lines[5]
    assert lines[6] == "↻ step 2: final output request"
    assert lines[7] == '🧾 {"v": 1}'
    assert printer.tool_calls == 1
    assert printer.tool_errors == 1
    assert printer.final is not None


def test_printer_without_deltas_prints_only_steps() -> None:
    console, buffer = _console()
    printer = StreamPrinter(console, show_deltas=False)
    printer(TextDelta("hidden"))
    printer(ToolCallStep(1, ToolCall("c1", "add", "{}")))
    printer.finish()
    assert buffer.getvalue() == "→ [step 1] add()\n"


def test_final_answer_of_a_model_is_a_field_table_and_text_is_a_panel() -> None:
    class Answer(BaseModel):
        value: int
        items: list[dict[str, str]]

    console, buffer = _console()
    console.print(render_output(console, Answer(value=5, items=[{"k": "a"}, {"k": "b"}]), ""))
    console.print(render_output(console, "**bold** answer", "**bold** answer"))
    out = buffer.getvalue()
    assert "Final answer · Answer" in out
    assert "value" in out
    assert "5" in out
    assert "bold answer" in out
