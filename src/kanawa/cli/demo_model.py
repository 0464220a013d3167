"""The demo's question, files and output type, and the narrated "scripted" model (``--model scripted``).

By default ``kanawa demo`` is driven by kanawa's built-in :class:`~kanawa.llm.testing.models.TestLLM`, which
calls every tool with the example arguments of its schema and fills :class:`DemoReport` from the
schema (the tool-result summary goes into ``summary``). :class:`DemoReport` is kept to fields that
stay meaningful when TestLLM fills them.

The scripted model, a :class:`~kanawa.llm.testing.models.FunctionLLM`, plays a chattier assistant for those
who want the longer story:

1. it reasons briefly, then asks for three tools *in parallel* — ``calculator("(17 * 23) + sqrt(144)")``,
   ``current_time("Asia/Tokyo")`` and ``read_file("notes.txt")``;
2. it tries to read ``../secrets.env``, outside the sandbox, which the sandbox refuses (fail-closed
   tool errors);
3. it answers in text, and when the loop asks for the structured answer it builds a
   :class:`DemoReport` from the tool results it actually received.

Neither model fakes the tools: the calls go through the real loop, invoker and sandbox, and the report
quotes what they returned.
"""

from __future__ import annotations

import json

from pydantic import BaseModel, Field

from kanawa.llm.testing import FunctionLLM, ModelRequest, Script
from kanawa.types import AssistantMessage, ReasoningPart, ToolCall, ToolMessage

QUESTION = "What is (17 × 23) + √144, what time is it in Tokyo, and what do my notes say?"
EXPRESSION = "(17 * 23) + sqrt(144)"
TIMEZONE = "Asia/Tokyo"
NOTES_FILE = "notes.txt"
OUTSIDE_FILE = "../secrets.env"
NOTES_TEXT = (
    "kanawa demo notes\n"
    "- Tools run in parallel; results come back in call order.\n"
    "- Files are read through a sandbox rooted at .kanawa/demo-files.\n"
    "- Every run leaves a JSONL trace in .kanawa/traces.\n"
)


class DemoReport(BaseModel):
    """The demo agent's structured final answer."""

    summary: str = Field(description="what the tools returned, answering the question in a sentence or two")
    confidence: float = Field(ge=0.0, le=1.0, description="how sure the agent is of the answer, from 0 to 1")


def _arg_name(request: ModelRequest, tool: str, fallback: str) -> str:
    """The first parameter name the tool's schema declares (robust to renamed parameters)."""
    for spec in request.tools:
        if spec.name == tool:
            properties = spec.parameters.get("properties")
            if isinstance(properties, dict) and properties:
                return next(iter(properties))
    return fallback


def _call(request: ModelRequest, call_id: str, tool: str, param: str, value: str) -> ToolCall | None:
    if not any(spec.name == tool for spec in request.tools):
        return None
    return ToolCall(call_id, tool, json.dumps({_arg_name(request, tool, param): value}))


def _results(request: ModelRequest) -> list[ToolMessage]:
    return [m for m in request.messages if isinstance(m, ToolMessage)]


def _first_round(request: ModelRequest) -> AssistantMessage:
    calls = [
        _call(request, "call_calc", "calculator", "expression", EXPRESSION),
        _call(request, "call_time", "current_time", "timezone", TIMEZONE),
        _call(request, "call_notes", "read_file", "path", NOTES_FILE),
    ]
    return AssistantMessage(
        text="I'll compute the expression, check the clock in Tokyo and read your notes — all at once.",
        tool_calls=tuple(c for c in calls if c is not None),
        reasoning=(ReasoningPart(text="Three independent lookups: run them in parallel."),),
    )


def _second_round(request: ModelRequest) -> AssistantMessage:
    call = _call(request, "call_escape", "read_file", "path", OUTSIDE_FILE)
    return AssistantMessage(
        text="Let me also try a file outside the sandbox, to show how a refused call looks.",
        tool_calls=(call,) if call is not None else (),
    )


def _summary(results: list[ToolMessage]) -> str:
    by_name = {m.name: m for m in results if not m.is_error}
    parts = []
    if (calc := by_name.get("calculator")) is not None:
        parts.append(f"(17 × 23) + √144 = {calc.text}")
    if (clock := by_name.get("current_time")) is not None:
        parts.append(f"in Tokyo it is {clock.text}")
    if (notes := by_name.get("read_file")) is not None:
        lines = [line.strip("- ").strip() for line in notes.text.splitlines() if line.strip()]
        parts.append(
            f"your notes ({len(lines)} lines) start with “{lines[1] if len(lines) > 1 else lines[0]}”"
        )
    refused = sum(1 for m in results if m.is_error)
    text = "; ".join(parts) or "no tool returned a result"
    if refused:
        text += f". {refused} call{'s were' if refused != 1 else ' was'} refused by the sandbox or the tool."
    return text[0].upper() + text[1:]


def _report(results: list[ToolMessage]) -> DemoReport:
    answered = sum(1 for m in results if not m.is_error and m.tool_call_id != "call_escape")
    return DemoReport(summary=_summary(results), confidence=round(0.5 + answered / 6, 2))


def demo_reply(request: ModelRequest) -> Script:
    """Decide the scripted model's next message from what the request carries (tools, results,
    schema)."""
    results = _results(request)
    if request.response_schema is not None:
        return AssistantMessage(text=_report(results).model_dump_json())
    if request.tools and not results:
        return _first_round(request)
    if request.tools and not any(m.tool_call_id == "call_escape" for m in results):
        second = _second_round(request)
        if second.tool_calls:
            return second
    return AssistantMessage(text=f"Here is what I found. {_summary(results)}")


def scripted_model() -> FunctionLLM:
    """A fresh scripted demo model (it keeps the requests it was sent in ``.requests``)."""
    return FunctionLLM(demo_reply, model="kanawa-demo")


__all__ = [
    "EXPRESSION",
    "NOTES_FILE",
    "NOTES_TEXT",
    "QUESTION",
    "TIMEZONE",
    "DemoReport",
    "demo_reply",
    "scripted_model",
]
