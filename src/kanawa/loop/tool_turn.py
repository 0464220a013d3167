"""The tool side of a run: what happens after the model asks for tools (seed 003
"イベントキューイング").

:class:`ToolTurns` records the calls, then stops the run for a human's approval, stops it with the
calls pending (``auto_execute_tools=False``, or calls of tools the *caller* executes), or runs them —
guardrails before and after, events the tools emit yielded while they run (a handed-off agent's) —
and joins the results to the conversation as ``ToolCallStep``/``ToolResultStep`` pairs in call order.
It also resumes a run that stopped for approval (:mod:`kanawa.loop.approval`).

Only tools the request offered ever run: a call made in a request that offered none is answered as
an unknown tool (:class:`~kanawa.tools.invoker.ToolInvoker`). The runner owns the run's record; a
turn reaches it through the three callbacks it is given (record a step, stop the run, check a
guardrail), so this module never imports the runner.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Awaitable, Callable, Coroutine, Sequence
from contextlib import aclosing, suppress
from typing import Any, Generic

from kanawa.context import RunContext
from kanawa.loop.approval import Approvals, plan_resume, rejected_result
from kanawa.loop.errors import raise_for_tool_result
from kanawa.loop.events import (
    AgentStep,
    ApprovalRequired,
    GuardrailTripped,
    HandoffEnded,
    HandoffStarted,
    OutputT,
    RunEvent,
    ToolCallStep,
    ToolResultStep,
)
from kanawa.loop.hooks import RunHooks, Warnings
from kanawa.loop.policies import TerminationReason
from kanawa.loop.spec import RunSpec
from kanawa.loop.state import AgentLoopState
from kanawa.loop.tool_executor import ToolExecutor
from kanawa.loop.tracing import RunTrace
from kanawa.tools.base import ToolResult
from kanawa.types import Message, ToolCall

Record = Callable[[AgentStep[Any]], AgentStep[Any]]
"""Adds a step to the run's record and returns it."""

Stop = Callable[[TerminationReason, tuple[ToolCall, ...], tuple[ToolCall, ...]], None]
"""Ends the run: the reason, the calls left pending, the calls waiting for approval."""

Check = Callable[[Awaitable[Warnings], Sequence[ToolCall]], AsyncGenerator[GuardrailTripped, None]]
"""Yields a guardrail check's warnings; on a block answers the given calls and raises."""

_NONE_OFFERED: frozenset[str] = frozenset()


class ToolTurns(Generic[OutputT]):
    """The tool turns of one run (module docstring); made by the runner at the first tool call."""

    __slots__ = (
        "_approval_names",
        "_approval_policy",
        "_asks_approval",
        "_check",
        "_client_names",
        "_config",
        "_context",
        "_executor",
        "_hooks",
        "_messages",
        "_offered",
        "_record",
        "_side",
        "_side_ready",
        "_state",
        "_stop",
        "_tools",
        "_tools_emit",
        "_trace",
    )

    def __init__(
        self,
        spec: RunSpec[OutputT],
        *,
        client_names: frozenset[str],
        run: tuple[RunContext[Any], AgentLoopState, list[Message]],
        trace: RunTrace | None,
        hooks: RunHooks | None,
        callbacks: tuple[Record, Stop, Check],
    ) -> None:
        tools = self._tools = tuple(spec.tools)
        self._config = spec.config
        self._context, self._state, self._messages = run
        self._trace = trace
        self._hooks = hooks
        self._record, self._stop, self._check = callbacks
        self._offered = frozenset(t.name for t in tools)
        self._client_names = client_names
        self._approval_policy = spec.approval_policy
        self._approval_names = frozenset(t.name for t in tools if t.requires_approval)
        self._asks_approval = spec.approval_policy is not None or bool(self._approval_names)
        self._tools_emit = any(t.takes_context for t in tools)
        self._executor: ToolExecutor | None = None
        self._side: list[RunEvent[OutputT]] = []  # rarely used: an empty list, not a deque block
        self._side_ready: asyncio.Event | None = None

    def emit(self, event: RunEvent[OutputT]) -> None:
        """Queue an event a tool emits: yielded while its round runs, else after the round."""
        self._side.append(event)
        if self._side_ready is not None:
            self._side_ready.set()

    async def take(
        self, step: int, calls: Sequence[ToolCall], offered_tools: bool
    ) -> AsyncGenerator[RunEvent[OutputT], None]:
        """The model asked for ``calls`` (``offered_tools``: whether the request offered any tools):
        record them, then stop for approval, stop with the calls pending, or run them."""
        state = self._state
        groups = state.group_identical(calls)
        for call in groups[0]:
            state.record_tool_call(call)
        for_caller = bool(self._client_names) and any(call.name in self._client_names for call in calls)
        stopped = self._approval_stop(step, calls, offered_tools)
        if stopped is None and not for_caller and not self._config.auto_execute_tools:
            stopped = [self._record(ToolCallStep(step, call)) for call in calls]
            self._stop(TerminationReason.TOOLS_PENDING, tuple(calls), ())
        if stopped is not None:
            for event in stopped:
                yield event
            return
        if for_caller:
            turn = self._hand_over(step, calls)  # the agent's own calls of the turn run first
        else:
            turn = self._round(step, calls, self._offered if offered_tools else _NONE_OFFERED, groups)
        async with aclosing(turn) as events:
            async for event in events:
                yield event

    def plain(
        self, step: int, calls: Sequence[ToolCall], offered_tools: bool
    ) -> Coroutine[Any, Any, list[RunEvent[OutputT]]] | None:
        """The common turn as one awaitable, or ``None`` when :meth:`take` must handle it.

        A turn with no guardrails, no tool that can emit events, no approval to ask, no tools the
        caller runs and tools that execute themselves yields nothing while its tools run, so it needs
        no event stream of its own: this returns its events (what :meth:`take` would yield, in the
        same order) in a list, saving the run two async generators a turn."""
        if (
            self._hooks is not None
            or self._tools_emit
            or self._client_names
            or not self._config.auto_execute_tools
            or (self._asks_approval and offered_tools)
        ):
            return None
        return self._plain_round(step, calls, self._offered if offered_tools else _NONE_OFFERED)

    async def _plain_round(
        self, step: int, calls: Sequence[ToolCall], offered: frozenset[str]
    ) -> list[RunEvent[OutputT]]:
        state = self._state
        groups = state.group_identical(calls)
        for call in groups[0]:
            state.record_tool_call(call)
        if self._executor is None:
            self._executor = ToolExecutor(self._tools, config=self._config, context=self._context)
        results = await self._executor.run(step, calls, self._trace, offered=offered, groups=groups)
        side = [self._side_event(self._side.pop(0)) for _ in range(len(self._side))]
        return [*side, *self._join_results(step, calls, results)]

    def _approval_stop(
        self, step: int, calls: Sequence[ToolCall], offered_tools: bool
    ) -> list[RunEvent[OutputT]] | None:
        """The run stops here, before any call runs, when a call needs a human's approval."""
        if not (self._asks_approval and offered_tools):
            return None
        waiting = tuple(call for call in calls if self._needs_approval(call))
        if not waiting:
            return None
        self._stop(TerminationReason.APPROVAL_REQUIRED, (), waiting)
        return [self._record(ApprovalRequired(step, waiting))]

    async def resume(self, approvals: Approvals) -> AsyncGenerator[RunEvent[OutputT], None]:
        """Continue a run that stopped for approval: run what may run, answer what was rejected, in
        call order, before the next model request."""
        to_run, rejected = plan_resume(self._messages, approvals, self._needs_approval)
        if to_run:
            async with aclosing(self._round(0, to_run, self._offered, None)) as turn:
                async for event in turn:
                    yield event
        for call in rejected:
            result = rejected_result(call, approvals.rejected[call.id])
            self._messages.append(result.to_message())
            yield self._record(ToolCallStep(0, call))
            yield self._record(ToolResultStep(0, result))

    # ----------------------------------------------------------------------------------- a round

    async def _round(
        self,
        step: int,
        calls: Sequence[ToolCall],
        offered: frozenset[str],
        groups: tuple[Sequence[ToolCall], Sequence[int]] | None,
    ) -> AsyncGenerator[RunEvent[OutputT], None]:
        """Run one turn's calls: guardrails before, the tools (yielding what they emit meanwhile),
        guardrails after, then the results join the conversation and the steps are yielded."""
        hooks = self._hooks
        if hooks is not None:
            async for warning in self._check(hooks.before_tools(step, calls, self._context), calls):
                yield warning
        if self._executor is None:
            self._executor = ToolExecutor(self._tools, config=self._config, context=self._context)
        running = self._executor.run(step, calls, self._trace, offered=offered, groups=groups)
        if self._tools_emit:
            task = asyncio.ensure_future(running)
            async with aclosing(self._while_running(task)) as emitted:
                async for event in emitted:
                    yield event
            results = task.result()
        else:
            results = await running
        while self._side:
            yield self._side_event(self._side.pop(0))
        if hooks is not None:
            async for warning in self._check(hooks.after_tools(step, results, self._context), calls):
                yield warning
        for event in self._join_results(step, calls, results):
            yield event

    def _join_results(
        self, step: int, calls: Sequence[ToolCall], results: Sequence[ToolResult]
    ) -> list[RunEvent[OutputT]]:
        """Add a turn's results to the conversation and return its ``ToolCallStep``/``ToolResultStep``
        pairs in call order (raising first under ``strict_tools``)."""
        messages = self._messages
        for result in results:
            messages.append(result.to_message())
        if self._config.strict_tools:
            for result in results:
                raise_for_tool_result(result)
        record = self._record
        steps: list[RunEvent[OutputT]] = []
        for call, result in zip(calls, results, strict=True):
            steps.append(record(ToolCallStep(step, call)))
            steps.append(record(ToolResultStep(step, result)))
        return steps

    async def _while_running(self, task: asyncio.Future[Any]) -> AsyncGenerator[RunEvent[OutputT], None]:
        """Yield events tools emit while ``task`` runs; cancel the task if the consumer stops early."""
        ready = self._side_ready = asyncio.Event()
        queue = self._side
        try:
            while not task.done():
                if queue:
                    yield self._side_event(queue.pop(0))
                    continue
                ready.clear()
                waiter = asyncio.ensure_future(ready.wait())
                try:
                    await asyncio.wait((task, waiter), return_when=asyncio.FIRST_COMPLETED)
                finally:
                    waiter.cancel()
        finally:
            self._side_ready = None
            if not task.done():
                task.cancel()
                with suppress(asyncio.CancelledError):
                    await task

    def _side_event(self, event: RunEvent[OutputT]) -> RunEvent[OutputT]:
        """Handoff and guardrail events emitted by tools are steps of this run; others pass through."""
        if isinstance(event, HandoffStarted | HandoffEnded | GuardrailTripped):
            self._record(event)
        return event

    async def _hand_over(
        self, step: int, calls: Sequence[ToolCall]
    ) -> AsyncGenerator[RunEvent[OutputT], None]:
        """The model called tools the caller executes (:mod:`kanawa.loop.options`): the agent's own
        calls of the turn run now, then the run ends ``tools_pending`` with the caller's calls."""
        own = [call for call in calls if call.name not in self._client_names]
        for_caller = tuple(call for call in calls if call.name in self._client_names)
        if own:
            async with aclosing(self._round(step, own, self._offered, None)) as turn:
                async for event in turn:
                    yield event
        pending = [self._record(ToolCallStep(step, call)) for call in for_caller]
        self._stop(TerminationReason.TOOLS_PENDING, for_caller, ())
        for step_event in pending:
            yield step_event

    def _needs_approval(self, call: ToolCall) -> bool:
        if call.name in self._approval_names:
            return True
        policy = self._approval_policy
        return policy is not None and call.name in self._offered and policy(call, self._context)


__all__ = ["ToolTurns"]
