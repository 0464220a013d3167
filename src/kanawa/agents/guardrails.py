"""Guardrails (seed 002 §3-4): check what crosses a run's boundaries, and warn or block.

``Guardrail(input_schema=, output_schema=, regex_blocks=, custom_funcs=, action=)`` holds the checks;
``Agent(..., guardrails=[...])`` applies them. The story of one check:

1. The loop reaches a boundary (:mod:`kanawa.loop.hooks`): the user's new input before the first model
   request (stage ``input``), the final output before it is yielded (``output``) and, when the
   guardrail's ``stages`` include them, each tool call's arguments before any call of the turn runs
   (``tool_call``) and each tool result before the model sees it (``tool_result``).
2. Every check applies: ``input_schema`` (input stage) and ``output_schema`` (output stage) validate
   the data with pydantic (text is parsed as JSON); ``regex_blocks`` must not match the text;
   ``custom_funcs`` (sync or async ``fn(data)``) return ``None``/``True`` to pass, ``False`` or a reason
   string (or several) to fail. A custom function that raises fails closed: it counts as a failure.
3. Any failure makes one :class:`~kanawa.loop.events.GuardrailTripped` event with every reason.
   ``action="warn"``: the event is yielded (a client shows it as a chat bubble) and the run goes on.
   ``action="block"``: the event is yielded, then :class:`~kanawa.loop.errors.GuardrailViolation` ends
   the run before the model call or the tool it guarded runs — nothing after it executes. With a
   blocking output check, a streaming run holds each response's text until it knows whether it is the
   answer, and shows the answer only after it passed: a blocked answer is never streamed.

Reasons say which check failed and where (a schema field path, a pattern's name) but never quote the
checked text, so they are safe to show and to trace.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any, Literal, TypeAlias

from pydantic import TypeAdapter, ValidationError

from kanawa.context import RunContext
from kanawa.loop.errors import GuardrailViolation
from kanawa.loop.events import FinalResponse, GuardrailStage, GuardrailTripped
from kanawa.loop.hooks import Warnings
from kanawa.tools.arguments import parse_tool_arguments
from kanawa.tools.base import ToolResult
from kanawa.tools.errors import ToolArgumentsError
from kanawa.types import AssistantMessage, LLMResponse, Message, ToolCall, UserMessage, text_of

GuardrailAction: TypeAlias = Literal["warn", "block"]
CustomCheck: TypeAlias = Callable[[Any], Any]
"""``fn(data) -> None | bool | str | Iterable[str]`` (or an awaitable of one): ``None``/``True`` pass."""

Patterns: TypeAlias = Sequence[str | re.Pattern[str]] | Mapping[str, str | re.Pattern[str]]

_STAGES: frozenset[str] = frozenset(("input", "output", "tool_call", "tool_result"))
_NONE: tuple[GuardrailTripped, ...] = ()


class Guardrail:
    """Checks on a run's input, output, tool calls and tool results (seed 002 §3-4).

    Args:
        input_schema: a type pydantic validates the user's input against (a ``BaseModel``, a
            ``TypedDict`` …); text input is parsed as JSON first.
        output_schema: likewise for the final output (a structured output is validated as it is).
        regex_blocks: patterns that must not match (``re.search``); a mapping names them
            (``{"card number": r"\\b(?:\\d[ -]?){13,16}\\b"}``), otherwise a pattern is named by its text.
        custom_funcs: functions of the data (see :data:`CustomCheck`), sync or async.
        action: ``"block"`` (default) ends the run with ``GuardrailViolation``; ``"warn"`` reports and
            goes on.
        stages: where the guardrail looks: ``"input"`` and ``"output"`` by default; add
            ``"tool_call"`` (data: the call's parsed arguments, a dict; patterns see the raw JSON) and
            ``"tool_result"`` (data: the result text). Schemas apply to their own stage only.
        name: how events and errors name it (default ``"guardrail"``).

    Raises ``ValueError`` for an unknown action or stage or a pattern that does not compile, and
    ``TypeError`` for a custom function that is not callable.
    """

    def __init__(
        self,
        *,
        input_schema: Any = None,
        output_schema: Any = None,
        regex_blocks: Patterns | None = None,
        custom_funcs: Iterable[CustomCheck] | None = None,
        action: GuardrailAction = "block",
        stages: Collection[GuardrailStage] = ("input", "output"),
        name: str = "guardrail",
    ) -> None:
        if action not in ("warn", "block"):
            raise ValueError(f"action must be 'warn' or 'block', not {action!r}")
        unknown = set(stages) - _STAGES
        if unknown:
            raise ValueError(f"unknown guardrail stages {sorted(unknown)}; use {sorted(_STAGES)}")
        self.name = name
        self.action: GuardrailAction = action
        self.stages = frozenset(stages)
        self.blocks_output = action == "block" and "output" in self.stages
        """A streaming run holds the answer's deltas until this guardrail passed it (see RunHooks)."""
        self._input = None if input_schema is None else _Schema(input_schema, "input")
        self._output = None if output_schema is None else _Schema(output_schema, "output")
        self._patterns = _compile(regex_blocks)
        self._funcs = tuple(custom_funcs or ())
        for func in self._funcs:
            if not callable(func):
                raise TypeError(f"custom_funcs must be callables, not {type(func).__name__}")

    def __repr__(self) -> str:
        return f"Guardrail(name={self.name!r}, action={self.action!r}, stages={sorted(self.stages)!r})"

    # ------------------------------------------------------------------ seed 002 §3-4 interface

    async def validate_input(self, data: Any) -> tuple[str, ...]:
        """The reasons ``data`` fails as input (``()`` when it passes): input schema, patterns, functions."""
        return await self._reasons(data, self._input)

    async def validate_output(self, data: Any) -> tuple[str, ...]:
        """The reasons ``data`` fails as output (``()`` when it passes)."""
        return await self._reasons(data, self._output)

    async def _reasons(self, data: Any, schema: _Schema | None) -> tuple[str, ...]:
        reasons: list[str] = []
        if schema is not None:
            reasons.extend(schema.problems(data))
        text = _text(data)
        for label, pattern in self._patterns:
            if pattern.search(text):
                reasons.append(f"matches blocked pattern {label!r}")
        for func in self._funcs:
            reasons.extend(await _run_custom(func, data))
        return tuple(reasons)

    # ------------------------------------------------------------------------- RunHooks

    async def check_input(self, messages: Sequence[Message], context: RunContext[Any]) -> Warnings:
        if "input" not in self.stages:
            return _NONE
        new_input = _new_user_text(messages)
        if new_input is None:
            return _NONE
        return self._verdict(context.step, "input", await self.validate_input(new_input))

    async def before_request(self, step: int, context: RunContext[Any]) -> Warnings:
        return _NONE

    async def after_response(self, step: int, response: LLMResponse, context: RunContext[Any]) -> Warnings:
        return _NONE

    async def before_tools(self, step: int, calls: Sequence[ToolCall], context: RunContext[Any]) -> Warnings:
        if "tool_call" not in self.stages:
            return _NONE
        reasons: list[str] = []
        for call in calls:
            found = await self._reasons(_ToolArguments(call), None)
            reasons.extend(f"{call.name}: {reason}" for reason in found)
        return self._verdict(step, "tool_call", tuple(reasons))

    async def after_tools(
        self, step: int, results: Sequence[ToolResult], context: RunContext[Any]
    ) -> Warnings:
        if "tool_result" not in self.stages:
            return _NONE
        reasons: list[str] = []
        for result in results:
            found = await self._reasons(text_of(result.content), None)
            reasons.extend(f"{result.name}: {reason}" for reason in found)
        return self._verdict(step, "tool_result", tuple(reasons))

    async def check_output(self, final: FinalResponse[Any], context: RunContext[Any]) -> Warnings:
        if "output" not in self.stages:
            return _NONE
        data = final.text if isinstance(final.output, str) else final.output
        reasons = await self.validate_output(data)
        return self._verdict(final.step, "output", reasons)

    def _verdict(self, step: int, stage: GuardrailStage, reasons: tuple[str, ...]) -> Warnings:
        if not reasons:
            return _NONE
        event = GuardrailTripped(step, stage, self.name, self.action, reasons)
        if self.action == "block":
            raise GuardrailViolation(event)
        return (event,)


class _ToolArguments(dict[str, Any]):
    """A tool call's parsed arguments (what custom functions get) whose text is the raw JSON (what
    patterns see). Unparsable arguments give an empty dict: the invoker rejects them anyway."""

    def __init__(self, call: ToolCall) -> None:
        try:  # the invoker's own parser: the same rules, and deep nesting is an error, not a crash
            parsed: dict[str, Any] = {} if call.invalid_arguments else parse_tool_arguments(call.arguments)
        except ToolArgumentsError:
            parsed = {}
        super().__init__(parsed)
        self.raw = call.arguments


class _Schema:
    """A pydantic ``TypeAdapter`` for one stage; problems name field paths, never values."""

    __slots__ = ("_adapter", "_stage", "_type_name")

    def __init__(self, schema: Any, stage: str) -> None:
        self._adapter: TypeAdapter[Any] = TypeAdapter(schema)
        self._stage = stage
        self._type_name = getattr(schema, "__name__", repr(schema))

    def problems(self, data: Any) -> list[str]:
        try:
            if isinstance(data, str | bytes):
                self._adapter.validate_json(data)
            else:
                self._adapter.validate_python(data)
        except ValidationError as exc:
            fields = []
            for error in exc.errors(include_input=False, include_url=False):
                where = ".".join(str(part) for part in error["loc"]) or "(root)"
                fields.append(f"{where}: {error['msg']}")
            return [f"{self._stage} does not match {self._type_name} ({'; '.join(fields[:5])})"]
        return []


def _compile(patterns: Patterns | None) -> tuple[tuple[str, re.Pattern[str]], ...]:
    if not patterns:
        return ()
    items = patterns.items() if isinstance(patterns, Mapping) else ((None, p) for p in patterns)
    compiled: list[tuple[str, re.Pattern[str]]] = []
    for label, pattern in items:
        try:
            regex = pattern if isinstance(pattern, re.Pattern) else re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"regex_blocks pattern {label or pattern!r} does not compile: {exc}") from None
        compiled.append((label or regex.pattern[:60], regex))
    return tuple(compiled)


def _text(data: Any) -> str:
    if isinstance(data, _ToolArguments):
        return data.raw
    if isinstance(data, str):
        return data
    if hasattr(data, "model_dump_json"):
        return str(data.model_dump_json())
    try:
        return json.dumps(data, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(data)


async def _run_custom(func: CustomCheck, data: Any) -> list[str]:
    name = getattr(func, "__name__", type(func).__name__)
    try:
        verdict = func(data)
        if inspect.isawaitable(verdict):
            verdict = await verdict
    except Exception as exc:  # fail closed: a check that cannot decide does not pass
        return [f"{name} failed ({type(exc).__name__})"]
    if verdict is None or verdict is True:
        return []
    if verdict is False:
        return [f"{name} rejected it"]
    if isinstance(verdict, str):
        return [verdict] if verdict.strip() else []
    if isinstance(verdict, Iterable):
        return [str(reason) for reason in verdict if str(reason).strip()]
    return [f"{name} returned {type(verdict).__name__}, not a verdict"]


def _new_user_text(messages: Sequence[Message]) -> str | None:
    """The text of the user messages after the last assistant message (this run's new input)."""
    texts: list[str] = []
    for message in reversed(messages):
        if isinstance(message, AssistantMessage):
            break
        if isinstance(message, UserMessage):
            texts.append(text_of(message.parts))
    if not texts:
        return None
    return "\n".join(reversed(texts))


__all__ = ["CustomCheck", "Guardrail", "GuardrailAction"]
