"""Rich rendering of a run's live event stream and its final answer (for ``kanawa demo`` / ``run``).

The printer switches over the event union of :mod:`kanawa.loop.events` and :mod:`kanawa.types`, ending
with ``assert_never``, so a new event kind fails type checking here instead of being dropped.
Deltas are written inline as they arrive; steps start on a fresh line.
"""

from __future__ import annotations

import json
from typing import Any, assert_never

from pydantic import BaseModel
from rich.console import Console
from rich.markdown import Markdown
from rich.panel import Panel
from rich.pretty import Pretty
from rich.table import Table
from rich.text import Text

from kanawa.cli.tables import Column, fitted_table
from kanawa.loop.events import (
    ApprovalRequired,
    FinalResponse,
    GuardrailTripped,
    HandoffEnded,
    HandoffStarted,
    NestedEvent,
    RunEvent,
    Thinking,
    ToolCallStep,
    ToolResultStep,
)
from kanawa.tools.base import ToolResult
from kanawa.types import (
    ReasoningDelta,
    TextDelta,
    ToolCall,
    ToolCallArgsDelta,
    ToolCallStarted,
    Usage,
    text_of,
)

ARGS_LIMIT = 200
RESULT_LIMIT = 300


def _clip(text: str, limit: int) -> str:
    text = text.replace("\n", " ⏎ ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def format_arguments(call: ToolCall) -> str:
    """A call's raw JSON arguments as ``key=value, …`` (or the raw text when it is not a JSON object)."""
    try:
        parsed = json.loads(call.arguments) if call.arguments.strip() else {}
    except ValueError:
        return _clip(call.arguments, ARGS_LIMIT)
    if not isinstance(parsed, dict):
        return _clip(call.arguments, ARGS_LIMIT)
    return _clip(", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in parsed.items()), ARGS_LIMIT)


def format_duration(ms: float | None) -> str:
    if ms is None:
        return "—"
    if ms < 1:
        return f"{ms * 1000:.0f} µs"
    if ms < 1000:
        return f"{ms:.1f} ms"
    return f"{ms / 1000:.2f} s"


class StreamPrinter:
    """Prints one run's events as they come. ``show_deltas=False`` prints steps only."""

    def __init__(self, console: Console, *, show_deltas: bool = True) -> None:
        self._console = console
        self._show_deltas = show_deltas
        self._inline: str | None = None  # kind of the delta run currently being printed inline
        self._structured = False  # after a final-output request the text deltas are the JSON answer
        self.final: FinalResponse[Any] | None = None
        self.tool_calls = 0
        self.tool_errors = 0

    def _end_inline(self) -> None:
        if self._inline is not None:
            self._console.print()
            self._inline = None

    def _inline_text(self, kind: str, text: str, style: str, label: str) -> None:
        if not self._show_deltas:
            return
        if self._inline != kind:
            self._end_inline()
            self._console.print(Text(label, style="bold " + style), end="")
            self._inline = kind
        self._console.print(Text(text, style=style), end="", soft_wrap=True)

    def __call__(self, event: RunEvent[Any]) -> None:
        if isinstance(event, TextDelta | ReasoningDelta | ToolCallStarted | ToolCallArgsDelta):
            self._on_delta(event)
        elif isinstance(event, Thinking | ToolCallStep | ToolResultStep | FinalResponse):
            self._end_inline()
            self._on_step(event)
        elif isinstance(event, GuardrailTripped | HandoffStarted | HandoffEnded | ApprovalRequired):
            self._end_inline()
            self._on_notice(event)
        elif isinstance(event, NestedEvent):
            inner = event.event
            if isinstance(
                inner, ToolCallStep | ToolResultStep | GuardrailTripped | HandoffStarted | HandoffEnded
            ):
                self(inner)
        else:
            assert_never(event)

    def _on_delta(self, event: TextDelta | ReasoningDelta | ToolCallStarted | ToolCallArgsDelta) -> None:
        """Streamed text goes inline as it arrives; a tool call's arguments wait for its step."""
        if isinstance(event, TextDelta):
            if self._structured:
                self._inline_text("json", event.text, "dim", "🧾 ")
            else:
                self._inline_text("text", event.text, "", "💬 ")
        elif isinstance(event, ReasoningDelta):
            self._inline_text("reasoning", event.text, "dim italic", "🧠 ")
        elif isinstance(event, ToolCallStarted):
            self._end_inline()
            if self._show_deltas:
                self._console.print(Text(f"   … model is writing a call to {event.name}", style="dim"))
        # ToolCallArgsDelta: the complete arguments are printed with the ToolCallStep that follows

    def _on_step(self, event: Thinking | ToolCallStep | ToolResultStep | FinalResponse[Any]) -> None:
        if isinstance(event, Thinking):
            self._structured = event.reason in ("final_output_request", "decode_retry")
            self._console.print(Text(f"↻ step {event.step}: {event.reason.replace('_', ' ')}", style="dim"))
        elif isinstance(event, ToolCallStep):
            self.tool_calls += 1
            self._console.print(self.render_call(event.step, event.call))
        elif isinstance(event, ToolResultStep):
            if event.result.is_error:
                self.tool_errors += 1
            self._console.print(self.render_result(event.result))
        else:
            self.final = event

    def _on_notice(self, event: GuardrailTripped | HandoffStarted | HandoffEnded | ApprovalRequired) -> None:
        if isinstance(event, GuardrailTripped):
            style = "bold red" if event.action == "block" else "yellow"
            reasons = "; ".join(event.reasons)
            self._console.print(
                Text(f"⚠ {event.guardrail} ({event.stage}, {event.action}): {reasons}", style=style)
            )
        elif isinstance(event, HandoffStarted):
            self._console.print(Text(f"⇢ {event.source} hands off to {event.target}", style="magenta"))
        elif isinstance(event, HandoffEnded):
            self._console.print(Text(f"⇠ {event.target} hands back to {event.source}", style="magenta"))
        else:
            names = ", ".join(call.name for call in event.calls)
            self._console.print(Text(f"⏸ waiting for approval: {names}", style="bold yellow"))

    @staticmethod
    def render_call(step: int, call: ToolCall) -> Text:
        line = Text(f"→ [step {step}] ", style="cyan")
        line.append(call.name, style="bold cyan")
        line.append(f"({format_arguments(call)})", style="cyan")
        return line

    @staticmethod
    def render_result(result: ToolResult) -> Text:
        body = _clip(text_of(result.content), RESULT_LIMIT)
        took = format_duration(result.duration_ms)
        if result.is_error:
            kind = result.error_kind.value if result.error_kind is not None else "error"
            line = Text(f"✗ {result.name} ", style="bold red")
            line.append(f"[{kind}, {took}] ", style="red")
            line.append(body, style="red")
            if result.detail:
                line.append(
                    f"\n   detail (trace only, not sent to the model): {_clip(result.detail, ARGS_LIMIT)}",
                    "dim",
                )
            return line
        line = Text(f"✓ {result.name} ", style="bold green")
        line.append(f"[{took}] ", style="green")
        line.append(body)
        return line

    def finish(self) -> None:
        self._end_inline()


def _cell(value: object) -> Table | Pretty | str:
    """A table cell: a list of flat objects becomes a nested table, other containers pretty-printed."""
    if isinstance(value, list) and value and all(isinstance(item, dict) for item in value):
        columns = list(dict.fromkeys(key for item in value for key in item))
        nested = Table(show_header=True, header_style="dim", box=None, pad_edge=False)
        for column in columns:
            nested.add_column(column)
        for item in value:
            nested.add_row(*(_clip(str(item.get(column, "")), RESULT_LIMIT // 2) for column in columns))
        return nested
    if isinstance(value, dict | list):
        return Pretty(value)
    return str(value)


ANSWER_COLUMNS = (Column("field", key=True, style="bold"), Column("value", wrap=True))
"""A structured answer's field names stay whole; the values wrap."""


def render_output(console: Console, output: object, text: str) -> Table | Panel:
    """The final answer: a field/value table for a pydantic model, else the text as Markdown."""
    if isinstance(output, BaseModel):
        title = f"Final answer · {type(output).__name__}"
        rows = [[name, _cell(value)] for name, value in output.model_dump(mode="json").items()]
        return fitted_table(
            console,
            ANSWER_COLUMNS,
            rows,
            title=title,
            show_lines=True,
            expand=False,
            min_width=len(title) + 4,
        )
    body = output if isinstance(output, str) else text
    return Panel(Markdown(body or "_(empty answer)_"), title="Final answer", border_style="green")


def render_usage(usage: Usage) -> Text:
    return Text(
        f"tokens: {usage.input_tokens} prompt + {usage.output_tokens} completion = {usage.total_tokens}"
        f" · {usage.requests} model request{'s' if usage.requests != 1 else ''}",
        style="dim",
    )


def render_cost(cost: float | None, model: str, *, source: str | None = None) -> Text:
    """The run's cost in USD with where its prices came from (``genai-prices 0.2.3`` — the package's
    data version — or ``override, as of <date>``), or ``cost unknown for <model>`` when the model has
    no price (never shown as $0: an unknown cost is not a free one)."""
    if cost is None:
        return Text(f"cost unknown for {model} (no price in the table)", style="dim")
    origin = f" · prices: {source}" if source else ""
    return Text(f"cost: ${cost:.6f}{origin}", style="dim")


__all__ = [
    "StreamPrinter",
    "format_arguments",
    "format_duration",
    "render_cost",
    "render_output",
    "render_usage",
]
