"""Loop configuration: the limits that keep a tool loop from running away (seed 003 "設定パラメータ").

One frozen object per agent, validated at construction so a bad value fails where it is written, not
ten steps into a run. Defaults are seed 003's; the Dify strategies map their ``maximum_iterations``
onto ``max_steps`` with ``on_max_steps="finalize"`` (DESIGN.md "Decisions").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

OnMaxSteps: TypeAlias = Literal["error", "finalize"]

DEFAULT_TOOL_TIMEOUT: float = 60.0
"""Seconds a tool call may take by default. A minute covers real work (an HTTP API, a database query,
a lint run) while still freeing a run whose tool hangs; ``None`` turns the limit off."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentConfiguration:
    """How one agent's loop behaves.

    Attributes:
        max_steps: most model requests one run may make (seed 003: 10). Every request counts: tool
            rounds, the final-output request and decode retries.
        auto_execute_tools: run the tools the model asks for. ``False`` ends the run after the model's
            first tool request with termination reason ``tools_pending``; the calls are in
            ``RunResult.pending_tool_calls`` and the caller runs them (see
            :func:`kanawa.loop.errors.raise_for_tool_result`).
        max_duplicate_tool_calls: how many times the *same* call (same tool, same canonical arguments)
            may run in one run. The request that would run it once more ends the run with
            ``duplicate_tool_call_detected`` (seed 003: ``count >= maxDuplicates`` → terminate, where
            ``count`` is the number of identical calls already run).
        max_tool_calls_per_tool: how many times one tool may run in one run, any arguments; the request
            that would exceed it ends the run with ``max_tool_calls_per_tool_exceeded``. ``None``: no cap.
        max_decode_retries: how many times a structured final output that failed to decode is asked for
            again before :class:`~kanawa.loop.errors.OutputDecodingFailed` (seed 003: 2).
        on_max_steps: ``"error"`` raises :class:`~kanawa.loop.errors.MaxStepsExceeded` when the budget
            is spent; ``"finalize"`` makes the last allowed request offer no tools (and adds the
            ``max_steps_finalize`` instruction) so the model has to answer.
        tool_timeout: seconds one tool call may take before it becomes a fail-closed error result
            (default :data:`DEFAULT_TOOL_TIMEOUT`, 60 s; a tool's own ``timeout`` wins; ``None``: no
            limit). An async tool is cancelled at its timeout. A sync tool runs in a worker thread of
            the event loop's default executor, and Python cannot stop a thread: after its timeout the
            run goes on, but the thread keeps running until the function returns and its result is
            discarded. Each such thread holds one of the executor's ``min(32, cpu_count + 4)``
            workers; if many hang for good, later sync tools queue behind them. Give blocking code
            its own timeouts (socket, subprocess, database), or write the tool as ``async``.
        parallel_tool_calls: run the calls of one model turn concurrently (``True``) or one after another
            in call order. Events are emitted in call order either way. This does not change what is
            asked of the provider; use ``ModelSettings.parallel_tool_calls`` for that.
        strict_tools: raise :class:`~kanawa.loop.errors.StrictToolNotFound` /
            :class:`~kanawa.loop.errors.ToolExecutionFailed` instead of handing the model a fail-closed
            error result for an unknown tool or a tool that raised. Off by default (seed 000: keep running).
        prompt_language: language tag of the messages the loop itself adds (final-output request,
            decode retry, max-steps instruction), looked up in the prompt library with its fallback
            (``"ja-JP"`` → ``"ja"`` → ``"en"``).
    """

    max_steps: int = 10
    auto_execute_tools: bool = True
    max_duplicate_tool_calls: int = 2
    max_tool_calls_per_tool: int | None = 5
    max_decode_retries: int = 2
    on_max_steps: OnMaxSteps = "error"
    tool_timeout: float | None = DEFAULT_TOOL_TIMEOUT
    parallel_tool_calls: bool = True
    strict_tools: bool = False
    prompt_language: str = "en"

    def __post_init__(self) -> None:
        _require_int("max_steps", self.max_steps, minimum=1)
        _require_int("max_duplicate_tool_calls", self.max_duplicate_tool_calls, minimum=1)
        if self.max_tool_calls_per_tool is not None:
            _require_int("max_tool_calls_per_tool", self.max_tool_calls_per_tool, minimum=1)
        _require_int("max_decode_retries", self.max_decode_retries, minimum=0)
        if self.on_max_steps not in ("error", "finalize"):
            raise ValueError(f"on_max_steps must be 'error' or 'finalize', not {self.on_max_steps!r}")
        if self.tool_timeout is not None and (
            isinstance(self.tool_timeout, bool)
            or not isinstance(self.tool_timeout, int | float)
            or not self.tool_timeout > 0
        ):
            raise ValueError(
                f"tool_timeout must be a positive number of seconds or None, not {self.tool_timeout!r}"
            )
        if not isinstance(self.prompt_language, str) or not self.prompt_language.strip():
            raise ValueError("prompt_language must be a non-empty language tag such as 'en' or 'ja'")


def _require_int(name: str, value: object, *, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")


__all__ = ["DEFAULT_TOOL_TIMEOUT", "AgentConfiguration", "OnMaxSteps"]
