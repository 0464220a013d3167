"""Built-in scorers: exact, contains, regex, schema, numeric tolerance, tool trajectory, limits, functions.

Each is a small frozen dataclass whose fields are its parameters, registered under the type name a
dataset uses. Assertions say pass/fail; :class:`NumericTolerance` and :class:`ToolTrajectory` can also
give a partial score (``as_score=True``) when closeness matters more than a verdict. Every outcome
has a reason that quotes enough of the output to see why, never the whole of a long output.
"""

from __future__ import annotations

import inspect
import json
import math
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass
from dataclasses import field as dc_field
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from kanawa.evals.scoring import Assertion, Outcome, Score, ScoreContext, register_scorer
from kanawa.loop.events import NestedEvent, ToolCallStep

_QUOTE = 80


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= _QUOTE else text[: _QUOTE - 1] + "…"


def _target(ctx: ScoreContext, field_name: str) -> Any:
    """What a scorer looks at: ``"output"`` (decoded), ``"text"`` (raw model text)."""
    return ctx.text if field_name == "text" else ctx.output


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


def _comparable(value: Any) -> Any:
    """Pydantic models compare as their dumped data, so a YAML ``expected_output`` mapping matches."""
    return value.model_dump(mode="json") if isinstance(value, BaseModel) else value


@register_scorer("equals_expected")
@dataclass(frozen=True)
class EqualsExpected:
    """The output equals the case's ``expected_output`` (skipped, i.e. passes, when none is set
    unless ``require_expected``). ``strip``/``casefold`` loosen string comparison."""

    _: KW_ONLY
    name: str = "equals_expected"
    strip: bool = True
    casefold: bool = False
    require_expected: bool = False

    async def ascore(self, ctx: ScoreContext) -> Outcome:
        expected = ctx.case.expected_output
        if expected is None:
            passed = not self.require_expected
            return Assertion(self.name, passed, "no expected output on this case")
        actual = _comparable(ctx.output)
        expected = _comparable(expected)
        if isinstance(actual, str) and isinstance(expected, str):
            actual, expected = self._norm(actual), self._norm(expected)
        if actual == expected:
            return Assertion(self.name, True, "output equals the expected output")
        return Assertion(self.name, False, f"expected {_short(expected)}, got {_short(actual)}")

    def _norm(self, text: str) -> str:
        text = text.strip() if self.strip else text
        return text.casefold() if self.casefold else text


@register_scorer("equals")
@dataclass(frozen=True)
class Equals:
    """The output equals a given ``value``."""

    value: Any
    _: KW_ONLY
    name: str = "equals"

    async def ascore(self, ctx: ScoreContext) -> Outcome:
        actual = _comparable(ctx.output)
        if actual == self.value:
            return Assertion(self.name, True, f"output equals {_short(self.value)}")
        return Assertion(self.name, False, f"expected {_short(self.value)}, got {_short(actual)}")


@register_scorer("contains")
@dataclass(frozen=True)
class Contains:
    """The output's text contains ``value`` (or, with ``all_of``/``any_of``, several strings)."""

    value: str | None = None
    _: KW_ONLY
    all_of: Sequence[str] = ()
    any_of: Sequence[str] = ()
    case_sensitive: bool = True
    name: str = "contains"
    field: str = "output"

    def __post_init__(self) -> None:
        if self.value is None and not self.all_of and not self.any_of:
            raise TypeError("contains needs value, all_of or any_of")

    async def ascore(self, ctx: ScoreContext) -> Outcome:
        text = _as_text(_target(ctx, self.field))
        if self.case_sensitive and self.value is not None and not self.all_of and not self.any_of:
            # the usual form, one string: the same verdict and reason as the general walk below
            if self.value in text:
                return Assertion(self.name, True, f"found {self.value!r}")
            return Assertion(self.name, False, f"missing {self.value!r} in {_short(text)}")
        hay = text if self.case_sensitive else text.casefold()

        def has(needle: str) -> bool:
            return (needle if self.case_sensitive else needle.casefold()) in hay

        required = [*([self.value] if self.value is not None else []), *self.all_of]
        missing = [n for n in required if not has(n)]
        if missing:
            return Assertion(self.name, False, f"missing {', '.join(map(repr, missing))} in {_short(text)}")
        if self.any_of and not any(has(n) for n in self.any_of):
            return Assertion(self.name, False, f"none of {list(self.any_of)!r} in {_short(text)}")
        return Assertion(self.name, True, "found " + ", ".join(repr(n) for n in [*required, *self.any_of]))


@register_scorer("not_contains")
@dataclass(frozen=True)
class NotContains:
    """The output's text contains none of ``values`` (a leaked secret, a forbidden phrase)."""

    values: Sequence[str]
    _: KW_ONLY
    case_sensitive: bool = True
    name: str = "not_contains"
    field: str = "output"

    async def ascore(self, ctx: ScoreContext) -> Outcome:
        text = _as_text(_target(ctx, self.field))
        hay = text if self.case_sensitive else text.casefold()
        found = [v for v in self.values if (v if self.case_sensitive else v.casefold()) in hay]
        if found:
            return Assertion(self.name, False, f"found forbidden {', '.join(map(repr, found))}")
        return Assertion(self.name, True, "none of the forbidden strings")


@register_scorer("regex")
@dataclass(frozen=True)
class Regex:
    """The output's text matches ``pattern`` (``re.search``; ``full=True`` for ``re.fullmatch``)."""

    pattern: str
    _: KW_ONLY
    full: bool = False
    ignore_case: bool = False
    name: str = "regex"
    field: str = "output"
    _compiled: re.Pattern[str] = dc_field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        try:
            compiled = re.compile(self.pattern, re.IGNORECASE if self.ignore_case else 0)
        except re.error as exc:
            raise TypeError(f"invalid regex {self.pattern!r}: {exc}") from None
        object.__setattr__(self, "_compiled", compiled)

    async def ascore(self, ctx: ScoreContext) -> Outcome:
        text = _as_text(_target(ctx, self.field))
        match = self._compiled.fullmatch(text) if self.full else self._compiled.search(text)
        if match:
            return Assertion(self.name, True, f"matched {_short(match.group(0))}")
        return Assertion(self.name, False, f"/{self.pattern}/ not in {_short(text)}")


_SCHEMA_TYPES: dict[str, Any] = {
    "str": str,
    "int": int,
    "float": float,
    "bool": bool,
    "list": list,
    "dict": dict,
}


@register_scorer("schema")
@dataclass(frozen=True)
class MatchesSchema:
    """The output validates against a pydantic model or type (``model``), or a named simple type
    (``type_name`` in YAML: str, int, float, bool, list, dict). ``strict`` disables coercion."""

    model: Any = None
    _: KW_ONLY
    type_name: str | None = None
    strict: bool = False
    name: str = "schema"
    _adapter: TypeAdapter[Any] = dc_field(init=False, repr=False, compare=False)
    _wants_text: bool = dc_field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        target = self.model
        if target is None:
            if self.type_name not in _SCHEMA_TYPES:
                raise TypeError(f"schema needs model= or type_name= one of {sorted(_SCHEMA_TYPES)}")
            target = _SCHEMA_TYPES[self.type_name]
        object.__setattr__(self, "_adapter", TypeAdapter(target))
        object.__setattr__(self, "_wants_text", target is str)

    async def ascore(self, ctx: ScoreContext) -> Outcome:
        value = _comparable(ctx.output)
        try:
            if isinstance(value, str) and not self._wants_text:
                # a text answer is checked as the JSON it should be
                self._adapter.validate_json(value, strict=self.strict)
            else:
                self._adapter.validate_python(value, strict=self.strict)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "(root)"
            return Assertion(self.name, False, f"{exc.error_count()} error(s); {where}: {first['msg']}")
        return Assertion(self.name, True, "output matches the schema")


@register_scorer("numeric")
@dataclass(frozen=True)
class NumericTolerance:
    """The output (or the number in its text) is within ``abs_tol``/``rel_tol`` of ``target`` (or of
    the case's ``expected_output``). ``as_score`` gives 1 − relative error (floored at 0) instead."""

    _: KW_ONLY
    target: float | None = None
    abs_tol: float = 0.0
    rel_tol: float = 1e-9
    as_score: bool = False
    name: str = "numeric"

    async def ascore(self, ctx: ScoreContext) -> Outcome:
        target = self.target if self.target is not None else ctx.case.expected_output
        want = _number(target)
        got = _number(ctx.output)
        if want is None:
            return Assertion(self.name, False, "no numeric target (set target or expected_output)")
        if got is None:
            if self.as_score:
                return Score(self.name, 0.0, f"no number in {_short(ctx.output)}")
            return Assertion(self.name, False, f"no number in {_short(ctx.output)}")
        close = math.isclose(got, want, rel_tol=self.rel_tol, abs_tol=self.abs_tol)
        if self.as_score:
            error = abs(got - want) / max(abs(want), 1e-12)
            value = 1.0 if close else max(0.0, 1.0 - error)
            return Score(self.name, value, f"got {got}, want {want}")
        verdict = "within" if close else "outside"
        return Assertion(self.name, close, f"got {got}, want {want} ({verdict} tolerance)")


_NUMBER = re.compile(r"[-+]?(?:\d+(?:[.,]\d+)*(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?")


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        match = _NUMBER.search(value)
        if match:
            try:
                return float(match.group(0).replace(",", ""))
            except ValueError:
                return None
    return None


# --- tool trajectory ---------------------------------------------------------------------------


@dataclass(frozen=True)
class CalledTool:
    """One tool call a run made: name and decoded arguments (``None`` when they were not JSON)."""

    name: str
    arguments: Any
    _: KW_ONLY
    agent: str | None = None


def tool_calls(events: Sequence[Any], *, include_nested: bool = True) -> list[CalledTool]:
    """The tool calls in a run's events, in order (handed-off agents' calls too, by default)."""
    calls: list[CalledTool] = []
    for event in events:
        agent: str | None = None
        while isinstance(event, NestedEvent):
            if not include_nested:
                break
            agent, event = event.agent, event.event
        if isinstance(event, ToolCallStep):
            try:
                arguments = json.loads(event.call.arguments) if event.call.arguments else {}
            except json.JSONDecodeError:
                arguments = None
            calls.append(CalledTool(event.call.name, arguments, agent=agent))
    return calls


def _arg_matches(matcher: Any, actual: Any) -> bool:
    """A matcher is a literal (equal), ``{"regex": …}``, ``{"contains": …}``, ``{"any": true}``,
    ``{"gte"/"lte": n}``, a nested mapping (each key matched; extra keys allowed) or a callable."""
    if callable(matcher):
        return bool(matcher(actual))
    if isinstance(matcher, Mapping):
        ops = {"regex", "contains", "any", "gte", "lte", "equals"}
        if matcher and set(matcher) <= ops:
            checks: list[bool] = []
            if "equals" in matcher:
                checks.append(actual == matcher["equals"])
            if "regex" in matcher:
                checks.append(
                    isinstance(actual, str) and re.search(str(matcher["regex"]), actual) is not None
                )
            if "contains" in matcher:
                needle = matcher["contains"]
                checks.append(actual is not None and needle in actual)
            if "gte" in matcher:
                checks.append(
                    _number(actual) is not None and (_number(actual) or 0.0) >= float(matcher["gte"])
                )
            if "lte" in matcher:
                checks.append(
                    _number(actual) is not None and (_number(actual) or 0.0) <= float(matcher["lte"])
                )
            return all(checks)
        if not isinstance(actual, Mapping):
            return False
        return all(key in actual and _arg_matches(sub, actual[key]) for key, sub in matcher.items())
    return bool(matcher == actual)


@dataclass(frozen=True)
class ToolExpectation:
    """An expected call: the tool's ``name`` and, optionally, argument matchers."""

    name: str
    _: KW_ONLY
    args: Mapping[str, Any] | None = None

    def matches(self, call: CalledTool) -> bool:
        if call.name != self.name:
            return False
        return self.args is None or _arg_matches(dict(self.args), call.arguments)

    def describe(self) -> str:
        return self.name if self.args is None else f"{self.name}({_short(dict(self.args))})"


def _expectation(item: Any) -> ToolExpectation:
    if isinstance(item, ToolExpectation):
        return item
    if isinstance(item, str):
        return ToolExpectation(item)
    if isinstance(item, Mapping) and "name" in item:
        return ToolExpectation(str(item["name"]), args=item.get("args"))
    raise TypeError(f"a tool expectation is a name or {{name, args}}, not {item!r}")


@register_scorer("tool_calls")
@dataclass(frozen=True)
class ToolTrajectory:
    """The tools the run called, from its events.

    ``mode``: ``"in_order"`` — the expected calls appear in this order (other calls may come between);
    ``"exact"`` — exactly these calls in this order; ``"set"`` — each expected call happened, any order;
    ``"none"`` — no tool was called. ``forbidden`` tools must not be called at all. ``as_score`` gives
    the share of expected calls found instead of pass/fail.
    """

    expected: Sequence[Any] = ()
    _: KW_ONLY
    mode: str = "in_order"
    forbidden: Sequence[str] = ()
    as_score: bool = False
    name: str = "tool_calls"
    _expected: tuple[ToolExpectation, ...] = dc_field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.mode not in {"in_order", "exact", "set", "none"}:
            raise TypeError(f"tool_calls mode must be in_order, exact, set or none, not {self.mode!r}")
        object.__setattr__(self, "_expected", tuple(_expectation(e) for e in self.expected))

    async def ascore(self, ctx: ScoreContext) -> Outcome:
        calls = tool_calls(ctx.events)
        called = ", ".join(c.name for c in calls) or "no tools"
        bad = sorted({c.name for c in calls if c.name in set(self.forbidden)})
        if bad:
            return self._result(0.0, False, f"called forbidden {', '.join(bad)} (called: {called})")
        if self.mode == "none":
            return self._result(0.0 if calls else 1.0, not calls, f"called: {called}")
        found, missing = self._match(calls)
        total = len(self._expected) or 1
        share = found / total
        ok = not missing and (self.mode != "exact" or len(calls) == len(self._expected))
        if ok:
            return self._result(1.0, True, f"called: {called}")
        if missing:
            return self._result(share, False, f"missing {missing} ({self.mode}); called: {called}")
        return self._result(share, False, f"extra calls ({self.mode}); called: {called}")

    def _match(self, calls: list[CalledTool]) -> tuple[int, str | None]:
        if self.mode == "set":
            unused = list(calls)
            missing: list[str] = []
            for want in self._expected:
                hit = next((c for c in unused if want.matches(c)), None)
                if hit is None:
                    missing.append(want.describe())
                else:
                    unused.remove(hit)
            return len(self._expected) - len(missing), ", ".join(missing) or None
        if self.mode == "exact":
            for index, want in enumerate(self._expected):
                if index >= len(calls) or not want.matches(calls[index]):
                    return index, want.describe() + f" at position {index + 1}"
            return len(self._expected), None
        position = 0
        for index, want in enumerate(self._expected):
            while position < len(calls) and not want.matches(calls[position]):
                position += 1
            if position >= len(calls):
                return index, want.describe()
            position += 1
        return len(self._expected), None

    def _result(self, value: float, passed: bool, reason: str) -> Outcome:
        return Score(self.name, value, reason) if self.as_score else Assertion(self.name, passed, reason)


# --- limits --------------------------------------------------------------------------------------


@register_scorer("max_cost")
@dataclass(frozen=True)
class MaxCost:
    """The run cost at most ``usd`` (an unpriced run fails unless ``allow_unpriced``)."""

    usd: float
    _: KW_ONLY
    allow_unpriced: bool = False
    name: str = "max_cost"

    async def ascore(self, ctx: ScoreContext) -> Outcome:
        if ctx.cost_usd is None:
            return Assertion(self.name, self.allow_unpriced, "the run has no price (model not in the table)")
        ok = ctx.cost_usd <= self.usd
        return Assertion(self.name, ok, f"cost ${ctx.cost_usd:.6f} (limit ${self.usd:.6f})")


@register_scorer("max_latency")
@dataclass(frozen=True)
class MaxLatency:
    """The run took at most ``ms`` milliseconds (wall clock, harness excluded)."""

    ms: float
    _: KW_ONLY
    name: str = "max_latency"

    async def ascore(self, ctx: ScoreContext) -> Outcome:
        ok = ctx.duration_ms <= self.ms
        return Assertion(self.name, ok, f"took {ctx.duration_ms:.0f} ms (limit {self.ms:.0f} ms)")


@register_scorer("max_tokens")
@dataclass(frozen=True)
class MaxTokens:
    """The run used at most ``total`` (and/or ``input``/``output``) tokens."""

    _: KW_ONLY
    total: int | None = None
    input: int | None = None
    output: int | None = None
    name: str = "max_tokens"

    def __post_init__(self) -> None:
        if self.total is None and self.input is None and self.output is None:
            raise TypeError("max_tokens needs total, input or output")

    async def ascore(self, ctx: ScoreContext) -> Outcome:
        usage = ctx.usage
        over = [
            f"{label} {used} > {limit}"
            for label, used, limit in (
                ("total", usage.total_tokens, self.total),
                ("input", usage.input_tokens, self.input),
                ("output", usage.output_tokens, self.output),
            )
            if limit is not None and used > limit
        ]
        if over:
            return Assertion(self.name, False, "; ".join(over))
        return Assertion(
            self.name,
            True,
            f"{usage.total_tokens} tokens ({usage.input_tokens} in, {usage.output_tokens} out)",
        )


@register_scorer("no_error")
@dataclass(frozen=True)
class NoError:
    """The run finished without an error (timeouts and exceptions fail)."""

    _: KW_ONLY
    name: str = "no_error"

    async def ascore(self, ctx: ScoreContext) -> Outcome:
        if ctx.error:
            return Assertion(self.name, False, ctx.error)
        return Assertion(self.name, True, "the run finished")


# --- user functions ------------------------------------------------------------------------------

UserResult = Outcome | Sequence[Outcome] | bool | float | int | tuple[Any, str]
"""What a user function may return: an outcome (or several), a bool (an assertion), a number (a
score), or ``(bool | number, reason)``."""


@dataclass(frozen=True)
class FunctionScorer:
    """A user function, sync or async, given the :class:`ScoreContext`. The name defaults to the
    function's; its return is turned into an outcome (see :data:`UserResult`)."""

    fn: Callable[[ScoreContext], UserResult | Awaitable[UserResult]]
    _: KW_ONLY
    name: str = ""

    def __post_init__(self) -> None:
        if not self.name:
            object.__setattr__(self, "name", getattr(self.fn, "__name__", "function"))

    async def ascore(self, ctx: ScoreContext) -> Outcome | Sequence[Outcome]:
        result = self.fn(ctx)
        if inspect.isawaitable(result):
            result = await result
        return _user_outcome(self.name, result)


def _user_outcome(name: str, result: Any) -> Outcome | Sequence[Outcome]:
    reason = ""
    if isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], str):
        result, reason = result
    if isinstance(result, Assertion | Score):
        return result
    if isinstance(result, bool):
        return Assertion(name, result, reason or ("passed" if result else "failed"))
    if isinstance(result, int | float):
        return Score(name, float(result), reason)
    if isinstance(result, Sequence) and all(isinstance(r, Assertion | Score) for r in result):
        return list(result)
    raise TypeError(f"scorer {name!r} returned {type(result).__name__}; return bool, a number or an outcome")


def scorer(
    fn: Callable[[ScoreContext], UserResult | Awaitable[UserResult]] | None = None, *, name: str = ""
) -> Any:
    """Decorator: ``@scorer`` (or ``@scorer(name="x")``) turns a function into a :class:`FunctionScorer`."""
    if fn is None:
        return lambda f: FunctionScorer(f, name=name)
    return FunctionScorer(fn, name=name)


@register_scorer("python")
def _python_scorer(function: str, name: str = "") -> FunctionScorer:
    """A dataset may name a user function as ``module:attr`` (``{"type": "python", "function": …}``)."""
    from kanawa.evals.targets import import_object

    fn = import_object(function)
    if isinstance(fn, FunctionScorer):
        return fn if not name else FunctionScorer(fn.fn, name=name)
    if not callable(fn):
        raise TypeError(f"{function} is not callable")
    return FunctionScorer(fn, name=name)


__all__ = [
    "CalledTool",
    "Contains",
    "Equals",
    "EqualsExpected",
    "FunctionScorer",
    "MatchesSchema",
    "MaxCost",
    "MaxLatency",
    "MaxTokens",
    "NoError",
    "NotContains",
    "NumericTolerance",
    "Regex",
    "ToolExpectation",
    "ToolTrajectory",
    "scorer",
    "tool_calls",
]
