"""Running one model turn's tool calls (seed 003 "イベントキューイング", DESIGN.md principle 3).

The calls of a turn run concurrently through :meth:`ToolInvoker.invoke_all` (a task group, results in
call order) unless ``parallel_tool_calls`` is off; a lone call is awaited directly, without a task
group. The invoker never raises for bad model output: unknown tools, bad arguments and tool exceptions
come back as fail-closed results with ``is_error`` set (seed 000 §6).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kanawa.context import RunContext
from kanawa.loop.config import AgentConfiguration
from kanawa.loop.tracing import RunTrace
from kanawa.tools.base import Tool, ToolResult
from kanawa.tools.invoker import ToolInvoker
from kanawa.types import ToolCall


class ToolRound:
    """Executes tool calls for one run (one invoker per run: its failed-call memory is per run)."""

    __slots__ = ("_invoker", "_parallel")

    def __init__(
        self, tools: Sequence[Tool], *, config: AgentConfiguration, context: RunContext[Any] | None = None
    ) -> None:
        self._invoker = ToolInvoker(tools, timeout=config.tool_timeout, context=context)
        self._parallel = config.parallel_tool_calls

    async def run(self, step: int, calls: Sequence[ToolCall], trace: RunTrace | None) -> list[ToolResult]:
        """Run ``calls`` and return their results in call order."""
        started = trace.tool_starts(step, calls) if trace is not None else 0.0
        invoker = self._invoker
        if len(calls) == 1:
            results = [await invoker.invoke(calls[0])]
        elif self._parallel:
            results = await invoker.invoke_all(calls)
        else:
            results = [await invoker.invoke(call) for call in calls]
        if trace is not None:
            trace.tool_ends(step, calls, results, started=started)
        return results


__all__ = ["ToolRound"]
