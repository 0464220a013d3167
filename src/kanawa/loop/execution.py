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
from collections.abc import Sequence

from kanawa.loop.config import AgentConfiguration
from kanawa.loop.tracing import RunTrace
from kanawa.tools.base import Tool, ToolResult
from kanawa.tools.invoker import ToolInvoker
from kanawa.trace.context import tool_call_scope
from kanawa.types import ToolCall


class ToolRound:
    """Executes tool calls for one run (one invoker per run: its failed-call memory is per run)."""

    __slots__ = ("_invoker", "_parallel")

    def __init__(self, tools: Sequence[Tool], *, config: AgentConfiguration) -> None:
        self._invoker = ToolInvoker(tools, timeout=config.tool_timeout)
        self._parallel = config.parallel_tool_calls

    async def run(self, step: int, calls: Sequence[ToolCall], trace: RunTrace | None) -> list[ToolResult]:
        """Run ``calls`` and return their results in call order."""
        if trace is None:
            return await self._run(calls)
        started = trace.tool_starts(step, calls)
        if len(calls) == 1 or not self._parallel:
            results = [await self._traced(step, call, trace) for call in calls]
        else:
            async with asyncio.TaskGroup() as group:
                tasks = [group.create_task(self._traced(step, call, trace)) for call in calls]
            results = [task.result() for task in tasks]
        trace.tool_ends(step, calls, results, started=started)
        return results

    async def _run(self, calls: Sequence[ToolCall]) -> list[ToolResult]:
        invoker = self._invoker
        if len(calls) == 1:
            return [await invoker.invoke(calls[0])]
        if self._parallel:
            return await invoker.invoke_all(calls)
        return [await invoker.invoke(call) for call in calls]

    async def _traced(self, step: int, call: ToolCall, trace: RunTrace) -> ToolResult:
        with tool_call_scope(trace.parent_of(step, call)):
            return await self._invoker.invoke(call)


__all__ = ["ToolRound"]
