"""SmartAO as a service agent: a coaching run is an ordinary ``POST /v1/runs {"agent": "smartao"}`` run.

The story of one served run:

1. The page (or any client) sends ``input`` as JSON text ``{"essay": …, "policy": …, "university": …,
   "faculty": …, "kind": …}``. :meth:`SmartAOAgent.stream` returns at once; the run parses the input on
   its first step, so a bad input ends the run with an ``error`` chunk (:class:`EssayInputError`,
   one of kanawa's errors, so its message reaches the client) rather than an HTTP 500.
2. The run takes the process's :class:`SmartAOResources` from :class:`SmartAOHost` (made at start-up
   by the extension's lifespan, or on first use) and drives a fresh
   :class:`~kanawa.apps.smartao.coordinator.Coordinator` — fresh per run so the demo models keep no
   history between runs, and the run's options (the server's trace sink, the tenant budget) apply to
   every inner agent of this run alone.
3. The Coordinator's events pass through unchanged; :mod:`kanawa.server.runs.chunks` translates them:
   ``route``, the agents' nested chunks (``delta``, ``tool_call``, ``tool_response``, ``final`` …, with
   the agent's name) and, through SmartAO's own translations (:data:`SMARTAO_EVENT_CHUNKS`, given to
   the server by the extension), ``findings`` (``{"agent", "data"}``), ``patch``
   (``{"patch", "dropped"}``), ``rubric`` (``{"rubric", "cached"}``); then the closing ``final`` whose
   ``output`` is the
   :class:`~kanawa.apps.smartao.coordinator.CoachingReport`, then ``usage`` and ``done`` (with the cost).

The process owns the resources: :meth:`SmartAOHost.lifespan` starts making them when the server
starts (the textlint sidecar when Node and its modules are present) and closes them at shutdown, after
the run manager has drained the runs — no Node process outlives the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Mapping, Sequence
from contextlib import aclosing, asynccontextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from kanawa._logging import get_logger
from kanawa.agents.agent import Agent
from kanawa.apps.smartao.agents import DraftAgent, EvalAgent, GuardAgent, RefAgent, StyleAgent
from kanawa.apps.smartao.coordinator import Coordinator, Findings, PatchReady, RubricReady, SmartAOEvent
from kanawa.apps.smartao.session import EssayRequest, SmartAOResources, sample_resources
from kanawa.apps.smartao.textlint import TextlintSidecar, start_textlint
from kanawa.llm.adapter import LLMAdapter
from kanawa.loop.errors import AgentError
from kanawa.loop.events import FinalResponse, NestedEvent
from kanawa.loop.hooks import RunHooks
from kanawa.loop.options import NO_OPTIONS, RunOptions
from kanawa.loop.state import LoopCounters
from kanawa.server.runs.budgets import CURRENT_TENANT
from kanawa.server.runs.chunks import EventChunks, fields_chunk
from kanawa.tools.base import Tool
from kanawa.trace.events import TraceEvent, Tracer
from kanawa.types import AssistantMessage, Message, Usage, UserMessage

SMARTAO_EVENT_CHUNKS: Mapping[type[Any], EventChunks] = {
    Findings: fields_chunk("findings"),
    PatchReady: fields_chunk("patch"),
    RubricReady: fields_chunk("rubric"),
}
"""SmartAO's own run events as chunks (each one chunk of its fields)."""

logger = get_logger("kanawa.smartao")

DEMO_MODEL_NAME = "smartao-demo"
"""What ``GET /v1/agents`` lists as the model when no model is configured (the page shows デモ出力)."""
INPUT_SHAPE = '{"essay": "…", "policy": "…", "university": "…", "faculty": "…"}'


class EssayInputError(AgentError):
    """The run's input is not a SmartAO request (its message says what is wrong, never echoes it)."""


def essay_request(user_input: object) -> EssayRequest:
    """The :class:`EssayRequest` in a run's input text; :class:`EssayInputError` otherwise."""
    if not isinstance(user_input, str):
        raise EssayInputError(f"SmartAO takes one JSON object as its input: {INPUT_SHAPE}")
    try:
        data = json.loads(user_input)
    except ValueError:
        raise EssayInputError(f"the input is not JSON; send {INPUT_SHAPE}") from None
    if not isinstance(data, dict):
        raise EssayInputError(f"the input must be a JSON object: {INPUT_SHAPE}")
    try:
        request = EssayRequest.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in error['loc']) or 'input'}: {error['msg']}"
            for error in exc.errors(include_input=False, include_url=False)
        )
        raise EssayInputError(f"the input does not fit {INPUT_SHAPE}: {problems}") from None
    if not request.essay.strip():
        raise EssayInputError("the essay is empty")
    return request


def run_text(user_input: object, history: Sequence[Message] = ()) -> object:
    """The run's input as :func:`essay_request` reads it: the request's text as it came, or — for a
    run a Celery worker executes from its checkpoint, whose input is the saved messages — the text of
    the last user message among them. Anything else is left for :func:`essay_request` to refuse."""
    if isinstance(user_input, list | tuple):
        for message in reversed([*history, *user_input]):
            if isinstance(message, UserMessage):
                return message.text
    return user_input


class SmartAOHost:
    """The process's SmartAO resources over the shipped samples, stores under ``directory``.

    Args:
        directory: where the reference memory and the evaluation store (SQLite) live.
        textlint: ``True`` to require the textlint sidecar, ``False`` for the Sudachi rules only,
            ``None`` to use textlint when Node and its modules are installed.
    """

    def __init__(self, directory: str | Path, *, textlint: bool | None = None) -> None:
        self.directory = Path(directory)
        self.textlint = textlint
        self.sidecar: TextlintSidecar | None = None
        self._resources: SmartAOResources | None = None
        self._making: asyncio.Task[SmartAOResources] | None = None

    async def get(self) -> SmartAOResources:
        """The resources, made once however many runs ask at the same time. The making is its own
        task (shielded), so a run cancelled while it waits cannot abandon a half-started Node process;
        after a failure the next call tries again."""
        if self._resources is not None:
            return self._resources
        making = self._making
        if making is None or (making.done() and (making.cancelled() or making.exception() is not None)):
            making = self._making = asyncio.create_task(self._make(), name="smartao-resources")
        return await asyncio.shield(making)

    async def _make(self) -> SmartAOResources:
        self.directory.mkdir(parents=True, exist_ok=True)
        self.sidecar, notice = await asyncio.to_thread(start_textlint, self.textlint)
        if notice is not None:
            logger.warning("SmartAO: %s", notice)
        try:
            self._resources = await sample_resources(self.directory, textlint=self.sidecar)
        except BaseException:
            await self._close_sidecar()
            raise
        return self._resources

    async def _close_sidecar(self) -> None:
        sidecar, self.sidecar = self.sidecar, None
        if sidecar is not None:
            await asyncio.to_thread(sidecar.close)

    async def aclose(self) -> None:
        """Close the reference memory and end the textlint process (after any making in progress)."""
        making, self._making = self._making, None
        if making is not None:
            with contextlib.suppress(Exception):
                await making
        resources, self._resources = self._resources, None
        try:
            if resources is not None and resources.references is not None:
                await resources.references.aclose()
        finally:
            await self._close_sidecar()

    @asynccontextmanager
    async def lifespan(self) -> AsyncIterator[SmartAOHost]:
        """Start making the resources when the server starts — in the background, so it answers (and
        serves the page) at once while the corpora load; a run that comes first waits for them — and
        close them when it stops."""
        self._making = asyncio.create_task(self._make(), name="smartao-resources")
        try:
            yield self
        finally:
            await self.aclose()


@dataclass(frozen=True, slots=True)
class _ModelName:
    model: str


@dataclass(slots=True)
class _Step:
    current_step: int = 0


@dataclass(frozen=True, slots=True)
class _Ended:
    termination_reason: str
    usage: Usage
    messages: Sequence[Message]


class _ChildRuns:
    """A trace sink marking the runs the Coordinator starts itself (no tool call above them) as
    children of the service's run ``parent``, then passing every event on. A handoff target already
    names its parent (the tool call that started it) and is left as it is."""

    def __init__(self, tracer: Tracer, parent: str) -> None:
        self._tracer = tracer
        self._parent = parent

    def emit(self, event: TraceEvent) -> None:
        if event.event == "agent_start" and "parent_run_id" not in event.data:
            event = replace(event, data={**event.data, "parent_run_id": self._parent, "parent_step": 0})
        self._tracer.emit(event)

    async def aclose(self) -> None:
        """The service's tracer outlives the run: it is closed with the service."""


@dataclass
class SmartAOAgent:
    """The SmartAO Coordinator under one service name (:class:`~kanawa.server.runs.servable.ServableAgent`).

    ``model`` / ``models`` as for :class:`Coordinator` (``None``: the offline demo model); ``tracer``
    and ``guardrails`` reach every inner agent of every run, and so do a run's
    :class:`~kanawa.loop.options.RunOptions` for that run (the service's are never put on this object).
    """

    host: SmartAOHost
    model_spec: str | LLMAdapter | None = None
    models: Mapping[str, str | LLMAdapter] = field(default_factory=dict)
    name: str = "smartao"
    depth: int = 2
    tracer: Tracer | None = None
    _guardrails: tuple[RunHooks, ...] = ()
    _tools: tuple[Tool, ...] = field(init=False, default=())

    def __post_init__(self) -> None:
        inner = (GuardAgent(), StyleAgent(), DraftAgent(depth=self.depth), RefAgent(), EvalAgent())
        self._tools = tuple(t for agent in inner for t in agent.tools)

    @property
    def demo(self) -> bool:
        return self.model_spec is None and not self.models

    @property
    def tools(self) -> tuple[Tool, ...]:
        """The inner agents' tools (``GET /v1/agents`` lists them)."""
        return self._tools

    @property
    def model(self) -> _ModelName:
        spec = self.model_spec
        if spec is None:
            return _ModelName(DEMO_MODEL_NAME if self.demo else "mixed")
        return _ModelName(spec if isinstance(spec, str) else spec.model)

    @property
    def handoffs(self) -> tuple[()]:
        """None: the inner agents are made per run and get :attr:`guardrails` directly."""
        return ()

    @property
    def guardrails(self) -> tuple[RunHooks, ...]:
        return self._guardrails

    @guardrails.setter
    def guardrails(self, value: Sequence[RunHooks]) -> None:
        self._guardrails = tuple(value)

    def coordinator(
        self, resources: SmartAOResources, *, run_id: str | None = None, options: RunOptions | None = None
    ) -> Coordinator:
        """A Coordinator for one run, with the guardrails and tracer (this agent's, and the run's
        ``options``) on every agent. Given the service's ``run_id``, each inner agent's run names it as
        its parent in the trace (:class:`_ChildRuns`), so the run's timeline shows every agent."""
        extra = options if options is not None else NO_OPTIONS
        coordinator = Coordinator(
            resources,
            model=self.model_spec,
            models=self.models,
            guardrails=(*self._guardrails, *extra.guardrails),
            depth=self.depth,
        )
        run_tracer = extra.tracer_for(self.tracer)
        if run_tracer is not None:
            tracer = run_tracer
            if run_id is not None:
                tracer = Tracer(sinks=[_ChildRuns(run_tracer, run_id)], session=run_tracer.session)
            inner: list[Agent[Any, Any]] = [coordinator.front, coordinator.eval_agent]
            for agent in [*inner, *coordinator.agents.values()]:
                agent.tracer = tracer
        return coordinator

    def stream(
        self,
        user_input: Any,
        *,
        history: Sequence[Message] = (),
        run_id: str | None = None,
        options: RunOptions | None = None,
    ) -> SmartAOServiceRun:
        """Start a run (nothing happens until it is iterated; a bad input fails it then). ``options``
        are accepted like any servable's: their trace sinks and guardrails reach the inner agents;
        the coaching run follows its own agents' instructions and tools (it offers no client tools),
        so a request's other additions do not change it. From a checkpoint (a Celery worker) the
        input is the saved messages: the essay is the last user message's text (:func:`run_text`)."""
        return SmartAOServiceRun(self, run_text(user_input, history), run_id=run_id, options=options)


class SmartAOServiceRun:
    """One served coaching run: the Coordinator's events, plus what the run manager reads of a run."""

    def __init__(
        self,
        agent: SmartAOAgent,
        user_input: object,
        *,
        run_id: str | None = None,
        options: RunOptions | None = None,
    ) -> None:
        self._agent = agent
        self._input = user_input
        self._options = options
        self.run_id = run_id
        """The service's run id: every inner agent runs under it, so the run's timeline shows them."""
        self.state = _Step()
        self._usage = Usage()
        self._cost: float | None = None
        self._messages: list[Message] = [UserMessage(user_input if isinstance(user_input, str) else "")]
        self._result: _Ended | None = None
        self._gen = self._run()

    def __aiter__(self) -> SmartAOServiceRun:
        return self

    def __anext__(self) -> Awaitable[SmartAOEvent]:
        return self._gen.__anext__()

    async def aclose(self) -> None:
        await self._gen.aclose()

    @property
    def usage(self) -> Usage:
        """Usage of the agents finished so far (the whole run's once it ended)."""
        return self._usage

    @property
    def messages(self) -> Sequence[Message]:
        return self._messages

    @property
    def step(self) -> int:
        """Agents finished so far."""
        return self.state.current_step

    def counters(self) -> LoopCounters:
        """The run's steps (agents finished): a composite run keeps no loop counters of its own."""
        return LoopCounters(self.state.current_step)

    def restore_counters(self, counters: LoopCounters) -> None:
        self.state.current_step = counters.steps

    @property
    def cost(self) -> float | None:
        """The run's USD cost once it ended (``None`` before, or when a model has no known price)."""
        return self._cost

    @property
    def result(self) -> _Ended:
        if self._result is None:
            raise EssayInputError("the run has not finished")
        return self._result

    async def _run(self) -> AsyncGenerator[SmartAOEvent, None]:
        request = essay_request(self._input)
        resources = await self._agent.host.get()
        tenant = CURRENT_TENANT.get() or ""  # the run manager's: whose key started this run
        coordinator = self._agent.coordinator(resources, run_id=self.run_id, options=self._options)
        running = coordinator.stream(request, tenant=tenant)
        async with aclosing(running) as events:
            async for event in events:
                if isinstance(event, NestedEvent) and isinstance(event.event, FinalResponse):
                    if event.depth == 1:
                        self.state.current_step += 1
                        self._usage = self._usage + event.event.usage
                elif isinstance(event, FinalResponse):
                    report = running.result
                    self._usage, self._cost = event.usage, report.cost
                    self._messages.append(AssistantMessage(text=report.patch.new_text))
                    self._result = _Ended("completed", event.usage, tuple(self._messages))
                yield event


__all__ = [
    "DEMO_MODEL_NAME",
    "SMARTAO_EVENT_CHUNKS",
    "EssayInputError",
    "SmartAOAgent",
    "SmartAOHost",
    "SmartAOServiceRun",
    "essay_request",
    "run_text",
]
