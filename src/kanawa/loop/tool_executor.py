"""Running one model turn's tool calls (seed 003 "イベントキューイング", DESIGN.md principle 3).

The calls of a turn run concurrently through :meth:`ToolInvoker.invoke_all` (a task group, results in
call order) unless ``parallel_tool_calls`` is off; a lone call is awaited directly, without a task
group. The invoker never raises for bad model output: unknown tools, bad arguments and tool exceptions
come back as fail-closed results with ``is_error`` set (seed 000 §6).

When the run is traced, each call executes inside :func:`~kanawa.trace.context.tool_call_scope`, in
its own task when calls run concurrently, so an agent run a tool starts is traced as that call's child.
"""

from __future__ import annotations

import asyncio
from collections.abc import Container, Sequence
from dataclasses import replace
from typing import Any

from kanawa.context import RunContext
from kanawa.loop.config import AgentConfiguration
from kanawa.loop.tracing import RunTrace
from kanawa.tools.base import Tool, ToolResult
from kanawa.tools.errors import reraise_stop_run
from kanawa.tools.invoker import ToolInvoker
from kanawa.trace.context import tool_call_scope
from kanawa.types import ToolCall


class ToolExecutor:
    """Executes tool calls for one run (one invoker per run: its failed-call memory is per run)."""

    __slots__ = ("_invoker", "_parallel")

    def __init__(
        self, tools: Sequence[Tool], *, config: AgentConfiguration, context: RunContext[Any] | None = None
    ) -> None:
        self._invoker = ToolInvoker(tools, timeout=config.tool_timeout, context=context)
        self._parallel = config.parallel_tool_calls

    async def run(
        self,
        step: int,
        calls: Sequence[ToolCall],
        trace: RunTrace | None,
        *,
        offered: Container[str],
        groups: tuple[Sequence[ToolCall], Sequence[int]] | None = None,
    ) -> list[ToolResult]:
        """Run ``calls`` and return their results in call order.

        ``offered`` names the tools the request offered: a call to any other tool never runs (see
        :meth:`ToolInvoker.invoke`). ``groups`` is :meth:`AgentLoopState.group_identical` of ``calls``:
        only the distinct calls run, and each identical copy gets its original's result under its own
        call id.
        """
        run, group_of = groups if groups is not None else (calls, range(len(calls)))
        if trace is None:
            results = await self._run(run, offered)
        else:
            started = trace.tool_starts(step, run)
            if len(run) == 1 or not self._parallel:
                results = [await self._traced(step, call, trace, offered) for call in run]
            else:
                try:
                    async with asyncio.TaskGroup() as group:
                        tasks = [group.create_task(self._traced(step, call, trace, offered)) for call in run]
                except BaseExceptionGroup as failed:
                    reraise_stop_run(failed)
                    raise
                results = [task.result() for task in tasks]
            trace.tool_ends(step, run, results, started=started)
        if len(run) == len(calls):
            return results
        shared: list[ToolResult] = []
        for call, group_index in zip(calls, group_of, strict=True):
            result = results[group_index]
            shared.append(result if result.call_id == call.id else replace(result, call_id=call.id))
        return shared

    async def _run(self, calls: Sequence[ToolCall], offered: Container[str]) -> list[ToolResult]:
        invoker = self._invoker
        if len(calls) == 1:
            return [await invoker.invoke(calls[0], offered=offered)]
        if self._parallel:
            return await invoker.invoke_all(calls, offered=offered)
        return [await invoker.invoke(call, offered=offered) for call in calls]

    async def _traced(
        self, step: int, call: ToolCall, trace: RunTrace, offered: Container[str]
    ) -> ToolResult:
        with tool_call_scope(trace.parent_of(step, call)):
            return await self._invoker.invoke(call, offered=offered)


__all__ = ["ToolExecutor"]
