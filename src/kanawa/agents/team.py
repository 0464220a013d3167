"""``AgentTeam``: route a request, run the chosen agents, merge their outputs.

The general mechanism under seed 002's ``Coordinator`` (§2, §4): a router in front of specialist
agents and a merge behind them. The seed's own ``Coordinator`` — the SmartAO domain agent with
``merge_patches()`` — is :class:`kanawa.apps.smartao.Coordinator`, built on this class.

The story of one request:

1. The router (:class:`~kanawa.agents.routing.RuleRouter` or :class:`~kanawa.agents.routing.LLMRouter`)
   decides which agents answer; the stream yields that :class:`~kanawa.agents.routing.RouteDecision`
   (kind ``route``) first.
2. The chosen agents run on the same input — one after another (``mode="sequential"``) or all at once
   (``mode="parallel"``) — each one handoff level below the team, with the request's ``deps``.
   Their events reach the stream as :class:`~kanawa.loop.events.NestedEvent` carrying each agent's name
   (in parallel mode, interleaved as they happen).
3. ``merge(results)`` — the user's function of ``{agent name: RunResult}`` in routing order, sync or
   async — makes the output; without one, a single agent's output is the output and several agents'
   answers are joined under their names. The stream ends with a ``FinalResponse`` of it, and
   :attr:`TeamRun.result` holds the :class:`TeamResult` (every agent's result, usage
   and cost summed).

Errors end the whole request (seed 002 §7): a guardrail that blocks, a handoff past the depth limit,
a provider failure after retries and fallback. In parallel mode the other agents are cancelled.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from kanawa._sync import run_in_new_loop
from kanawa.agents.agent import Agent
from kanawa.agents.routing import LLMRouter, RouteDecision, RuleRouter
from kanawa.loop.errors import InvalidLoopState
from kanawa.loop.events import FinalResponse, NestedEvent
from kanawa.loop.result import RunResult
from kanawa.loop.runner import AgentLoopRunner
from kanawa.types import Usage, UserMessage

MergeT = TypeVar("MergeT")
Merge = Callable[[Mapping[str, RunResult[Any]]], "MergeT | Awaitable[MergeT]"]


@dataclass(frozen=True, slots=True)
class TeamResult(Generic[MergeT]):
    """The merged ``output``, the route taken, each agent's :class:`RunResult` (routing order), the
    summed usage and cost (``None`` when any agent's model has no known price)."""

    output: MergeT
    route: RouteDecision
    results: Mapping[str, RunResult[Any]]
    usage: Usage
    cost: float | None


TeamEvent = RouteDecision | NestedEvent | FinalResponse[Any]


class AgentTeam:
    """A router in front of specialist agents and a merge behind them.

    Args:
        name: the team's name (the depth of its agents' handoffs counts from it).
        router: a :class:`RuleRouter` or :class:`LLMRouter`.
        agents: the agents it may run; their names are what the router returns.
        mode: ``"sequential"`` or ``"parallel"``.
        merge: ``merge({name: RunResult}) -> output`` (sync or async).

    Raises ``ValueError`` when two agents share a name or a rule names an agent it does not have.
    """

    def __init__(
        self,
        name: str,
        *,
        router: RuleRouter | LLMRouter,
        agents: Sequence[Agent[Any, Any]],
        mode: Literal["sequential", "parallel"] = "sequential",
        merge: Merge[Any] | None = None,
    ) -> None:
        if mode not in ("sequential", "parallel"):
            raise ValueError(f"mode must be 'sequential' or 'parallel', not {mode!r}")
        by_name: dict[str, Agent[Any, Any]] = {}
        for agent in agents:
            if agent.name in by_name:
                raise ValueError(f"two agents are named {agent.name!r}")
            by_name[agent.name] = agent
        rules = router if isinstance(router, RuleRouter) else router.fallback
        missing = sorted(rules.agent_names - set(by_name))
        if missing:
            raise ValueError(f"the router names agents the team does not have: {missing}")
        self.name = name
        self.router = router
        self.agents: Mapping[str, Agent[Any, Any]] = by_name
        self.mode = mode
        self.merge = merge

    def stream(
        self, user_input: str, *, deps: Any = None, context: Any = None, stream: bool = True
    ) -> TeamRun:
        """Start a request: iterate for the route, the agents' nested events (with the models' deltas
        unless ``stream=False``) and the final response; ``.result`` afterwards. ``context`` is what
        rule conditions get (default: ``deps``)."""
        return TeamRun(
            self, user_input, deps=deps, context=deps if context is None else context, stream=stream
        )

    async def arun(self, user_input: str, *, deps: Any = None, context: Any = None) -> TeamResult[Any]:
        """Run to the end and return the :class:`TeamResult`."""
        running = self.stream(user_input, deps=deps, context=context, stream=False)
        async for _ in running:
            pass
        return running.result

    def run(self, user_input: str, *, deps: Any = None, context: Any = None) -> TeamResult[Any]:
        """:meth:`arun` for scripts (its own event loop; inside a running loop, await :meth:`arun`)."""
        return run_in_new_loop(
            lambda: self.arun(user_input, deps=deps, context=context), twin="AgentTeam.arun", receiver="team"
        )


class TeamRun:
    """One request through an :class:`AgentTeam`; an async iterator of :data:`TeamEvent`."""

    def __init__(self, team: AgentTeam, user_input: str, *, deps: Any, context: Any, stream: bool) -> None:
        self._team = team
        self._stream = stream
        self._input = user_input
        self._deps = deps
        self._context = context
        self._result: TeamResult[Any] | None = None
        self._gen = self._run()

    def __aiter__(self) -> TeamRun:
        return self

    def __anext__(self) -> Awaitable[TeamEvent]:
        return self._gen.__anext__()

    async def aclose(self) -> None:
        await self._gen.aclose()

    @property
    def result(self) -> TeamResult[Any]:
        if self._result is None:
            raise InvalidLoopState("the request has not finished: iterate it to the end first")
        return self._result

    async def _run(self) -> AsyncGenerator[TeamEvent, None]:
        team = self._team
        router = team.router
        decision = await router.aroute(self._input, self._context)
        yield decision
        results: dict[str, RunResult[Any]] = {}
        if team.mode == "parallel" and len(decision.agents) > 1:
            events = self._parallel(decision.agents, results)
        else:
            events = self._sequential(decision.agents, results)
        async with aclosing(events) as nested:
            async for event in nested:
                yield event
        ordered = {name: results[name] for name in decision.agents}
        output = await _merge(team.merge, ordered)
        usage = sum((r.usage for r in ordered.values()), Usage())
        costs = [r.cost for r in ordered.values()]
        cost = None if any(c is None for c in costs) else sum(c for c in costs if c is not None)
        self._result = TeamResult(output, decision, ordered, usage, cost)
        yield FinalResponse(0, output, output if isinstance(output, str) else str(output), usage)

    def _start(self, name: str) -> AgentLoopRunner[Any]:
        """Agent ``name`` on the request, one handoff level below the team."""
        return self._team.agents[name]._start_nested(
            [UserMessage(self._input)],
            deps=self._deps,
            stream=self._stream,
            tracer=None,
            handoff_path=(self._team.name,),
        )

    async def _sequential(
        self, names: Sequence[str], results: dict[str, RunResult[Any]]
    ) -> AsyncGenerator[TeamEvent, None]:
        for name in names:
            runner = self._start(name)
            async with aclosing(runner) as events:
                async for event in events:
                    yield event if isinstance(event, NestedEvent) else NestedEvent(name, 1, event)
            results[name] = runner.result

    async def _parallel(
        self, names: Sequence[str], results: dict[str, RunResult[Any]]
    ) -> AsyncGenerator[TeamEvent, None]:
        queue: asyncio.Queue[TeamEvent | None] = asyncio.Queue()

        async def drive(name: str) -> None:
            runner = self._start(name)
            try:
                async for event in runner:
                    queue.put_nowait(event if isinstance(event, NestedEvent) else NestedEvent(name, 1, event))
                results[name] = runner.result
            finally:
                queue.put_nowait(None)

        tasks = [asyncio.ensure_future(drive(name)) for name in names]
        try:
            running = len(tasks)
            while running:
                item = await queue.get()
                if item is None:
                    running -= 1
                    failed = next((t for t in tasks if t.done() and t.exception() is not None), None)
                    if failed is not None:
                        raise failed.exception()  # type: ignore[misc]  # checked not None just above
                    continue
                yield item
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)


async def _merge(merge: Merge[Any] | None, results: Mapping[str, RunResult[Any]]) -> Any:
    if merge is None:
        if len(results) == 1:
            return next(iter(results.values())).output
        return "\n\n".join(f"## {name}\n{result.text}" for name, result in results.items())
    merged = merge(results)
    if inspect.isawaitable(merged):
        merged = await merged
    return merged


__all__ = ["AgentTeam", "Merge", "TeamEvent", "TeamResult", "TeamRun"]
