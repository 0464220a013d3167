"""What an eval runs a case against: an agent in this process, a plain function, or a served agent.

Every target turns a case into a :class:`RunOutput` — output, text, the run's events (for trajectory
scorers), usage, cost, run id and trace records — so scorers and reports never know which it was.
An agent target is an ordinary ``Agent.arun`` with the eval's trace sinks and budget guard added as
run options; a served target is ``POST /v1/runs`` on ``kanawa serve``, whose chunks carry the same
events and the run's trace.

Also here: resolving ``module:attr`` references (the CLI's ``--agent``, a dataset's ``python``
scorer); errors are one line that names what was asked for, never a traceback.
"""

from __future__ import annotations

import importlib
import inspect
import json
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from kanawa.types import JsonValue, ToolCall, Usage

if TYPE_CHECKING:
    from kanawa.evals.cases import Case
    from kanawa.loop.hooks import RunHooks
    from kanawa.trace.events import TraceSink


class TargetError(ValueError):
    """A ``module:attr`` reference that does not resolve."""


def import_object(reference: str) -> Any:
    """Import ``module:attr`` (``attr`` may be dotted); the working directory is importable, as for
    ``python -m``, so ``myapp:agent`` finds ``./myapp.py``."""
    module_name, sep, attr = reference.partition(":")
    if not sep or not module_name or not attr:
        raise TargetError(f"{reference!r} is not 'module:attribute' (e.g. myapp:agent)")
    cwd = str(Path.cwd())
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise TargetError(f"cannot import {module_name!r}: {exc}") from None
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise TargetError(f"{module_name!r} has no attribute {attr!r}") from None
    return obj


@dataclass
class RunOutput:
    """One finished run of a case, whatever ran it. ``error`` is set when the run did not complete
    (an exception, or a termination reason other than ``completed``)."""

    output: Any
    text: str
    _: KW_ONLY
    events: tuple[Any, ...] = ()
    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = None
    run_id: str | None = None
    error: str | None = None
    trace: list[dict[str, JsonValue]] | None = None


class Target(Protocol):
    """Runs one case. ``sinks`` get the run's trace events and ``guardrails`` (the eval's budget)
    are checked in it, when the target can (a served agent has its own)."""

    @property
    def description(self) -> str: ...

    async def arun_case(
        self,
        case: Case[Any, Any],
        *,
        run_id: str,
        sinks: tuple[TraceSink, ...],
        guardrails: tuple[RunHooks, ...],
    ) -> RunOutput: ...


PromptFn = Callable[[Any], Any]


def default_prompt(inputs: Any) -> Any:
    """A case's inputs as a prompt: a string as is; a mapping's ``prompt``/``input``/``question``
    value when it has one; anything else as JSON."""
    if isinstance(inputs, str):
        return inputs
    if isinstance(inputs, Mapping):
        for key in ("prompt", "input", "question"):
            if isinstance(inputs.get(key), str):
                return inputs[key]
    return json.dumps(inputs, ensure_ascii=False, default=str)


@dataclass
class AgentTarget:
    """An agent in this process: each case is ``agent.arun(prompt(case.inputs), run_id=…)``."""

    agent: Any
    """An ``Agent``, an ``AgentTeam`` or anything with ``name`` and ``arun(input, run_id=, options=)``."""
    _: KW_ONLY
    prompt: PromptFn = default_prompt

    @property
    def description(self) -> str:
        return f"agent {self.agent.name}"

    async def arun_case(
        self,
        case: Case[Any, Any],
        *,
        run_id: str,
        sinks: tuple[TraceSink, ...],
        guardrails: tuple[RunHooks, ...],
    ) -> RunOutput:
        from kanawa.loop.options import RunOptions

        options = RunOptions(trace_sinks=sinks, guardrails=guardrails)
        result = await self.agent.arun(self.prompt(case.inputs), run_id=run_id, options=options)
        reason = str(result.termination_reason)
        return RunOutput(
            output=result.output,
            text=result.text,
            events=tuple(result.steps),
            usage=result.usage,
            cost_usd=result.cost,
            run_id=result.run_id,
            error=None if reason == "completed" else f"run ended: {reason}",
        )


@dataclass
class FunctionTarget:
    """A plain function of the case's inputs, sync or async (a pipeline that is not one agent). It
    has no events or usage unless it returns a :class:`RunOutput` itself."""

    fn: Callable[[Any], Any | Awaitable[Any]]

    @property
    def description(self) -> str:
        return f"function {getattr(self.fn, '__qualname__', repr(self.fn))}"

    async def arun_case(
        self,
        case: Case[Any, Any],
        *,
        run_id: str,
        sinks: tuple[TraceSink, ...],
        guardrails: tuple[RunHooks, ...],
    ) -> RunOutput:
        value = self.fn(case.inputs)
        if inspect.isawaitable(value):
            value = await value
        if isinstance(value, RunOutput):
            return value
        return RunOutput(
            output=value, text=value if isinstance(value, str) else json.dumps(value, default=str)
        )


@dataclass
class ServedTarget:
    """An agent behind ``kanawa serve``: ``POST {base_url}/v1/runs`` with ``{"agent", "input"}`` and
    the run read from its chunks (tool calls, final output, usage, cost and the ``trace`` chunks).

    ``client`` may be an ``httpx.AsyncClient`` to share (its base URL is then used); otherwise one
    is opened per eval by :meth:`aopen`.
    """

    base_url: str
    agent: str
    _: KW_ONLY
    api_key: str | None = None
    prompt: PromptFn = default_prompt
    timeout: float = 600.0
    client: Any = None
    _owned: bool = field(default=False, repr=False)

    @property
    def description(self) -> str:
        return f"{self.agent} at {self.base_url}"

    async def aopen(self) -> None:
        if self.client is None:
            import httpx

            headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
            limits = httpx.Limits(max_connections=None, max_keepalive_connections=100)
            self.client = httpx.AsyncClient(
                base_url=self.base_url, headers=headers, timeout=self.timeout, limits=limits
            )
            self._owned = True

    async def aclose(self) -> None:
        if self._owned and self.client is not None:
            await self.client.aclose()
            self.client, self._owned = None, False

    async def arun_case(
        self,
        case: Case[Any, Any],
        *,
        run_id: str,
        sinks: tuple[TraceSink, ...],
        guardrails: tuple[RunHooks, ...],
    ) -> RunOutput:
        from kanawa.evals.sources import parse_sse_chunks

        await self.aopen()
        prompt = self.prompt(case.inputs)
        if not isinstance(prompt, str):
            raise TypeError("a served agent takes a text input; give the eval a prompt function")
        response = await self.client.post("/v1/runs", json={"agent": self.agent, "input": prompt})
        if response.status_code != 200:
            raise ServedRunError(f"POST /v1/runs answered {response.status_code}: {_error_text(response)}")
        return served_output(parse_sse_chunks(response.text), response.headers.get("x-run-id"))


class ServedRunError(RuntimeError):
    """The server refused the run (bad key, unknown agent, rate limit)."""


def _error_text(response: Any) -> str:
    try:
        body = response.json()
    except ValueError:
        return str(response.text)[:200]
    detail = body.get("detail") if isinstance(body, dict) else None
    if isinstance(detail, str):
        return detail[:200]
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])[:200]
    return json.dumps(body)[:200]


def served_output(chunks: Sequence[Mapping[str, Any]], run_id: str | None) -> RunOutput:
    """Rebuild a run from its served chunks: the top-level agent's tool calls and final answer as
    loop events (nested agents' as :class:`~kanawa.loop.events.NestedEvent`), usage, cost, trace."""
    from kanawa.loop.events import FinalResponse, NestedEvent, ToolCallStep

    events: list[Any] = []
    output: Any = None
    text = ""
    usage = Usage()
    cost: float | None = None
    error: str | None = None
    trace: list[dict[str, JsonValue]] = []
    for chunk in chunks:
        kind = chunk.get("type")
        data = chunk.get("data")
        if not isinstance(data, dict):
            continue
        depth = data.get("depth")
        if kind == "trace":
            trace.append({k: v for k, v in data.items()})
        elif kind == "tool_call":
            arguments = data.get("arguments")
            call = ToolCall(
                str(data.get("id", "")),
                str(data.get("name", "")),
                arguments if isinstance(arguments, str) else json.dumps(arguments),
            )
            step: Any = ToolCallStep(int(data.get("step", 0)), call)
            if isinstance(depth, int):
                step = NestedEvent(str(chunk.get("agent", "")), depth, step)
            events.append(step)
        elif kind == "final" and depth is None:
            output, text = data.get("output"), str(data.get("text", ""))
        elif kind == "usage" and depth is None:
            usage = Usage(**{k: int(v) for k, v in data.items() if k in _USAGE_KEYS and isinstance(v, int)})
        elif kind == "error":
            error = f"{data.get('code')}: {data.get('message')}"
        elif kind == "done":
            raw_cost = data.get("cost_usd")
            cost = float(raw_cost) if isinstance(raw_cost, int | float) else None
            status = data.get("status")
            if status != "completed" and error is None:
                error = f"run ended: {data.get('termination_reason') or status}"
    if error is None:
        events.append(FinalResponse(0, output, text, usage))
    return RunOutput(
        output,
        text,
        events=tuple(events),
        usage=usage,
        cost_usd=cost,
        run_id=run_id,
        error=error,
        trace=trace or None,
    )


_USAGE_KEYS = frozenset(
    {"input_tokens", "output_tokens", "reasoning_tokens", "cached_tokens", "requests", "cache_write_tokens"}
)


def as_target(target: Any, *, prompt: PromptFn | None = None) -> Target:
    """An agent, a target, a ``module:attr`` string or a function, as a :class:`Target`."""
    if isinstance(target, str):
        target = import_object(target)
    if hasattr(target, "arun_case"):
        return target  # type: ignore[no-any-return]
    if hasattr(target, "arun") and hasattr(target, "name"):
        return AgentTarget(target, prompt=prompt or default_prompt)
    if callable(target):
        return FunctionTarget(target)
    raise TargetError(f"cannot evaluate {type(target).__name__}: give an Agent, a function or a Target")


__all__ = [
    "AgentTarget",
    "FunctionTarget",
    "RunOutput",
    "ServedRunError",
    "ServedTarget",
    "Target",
    "TargetError",
    "as_target",
    "default_prompt",
    "import_object",
    "served_output",
]
