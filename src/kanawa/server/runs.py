"""Running agents for the service: one task per run, writing numbered chunks to the run store.

The story of a run (``RunManager.start``): a record is created (status ``running``), a task iterates
``agent.stream(...)``, every event becomes chunks (:mod:`kanawa.server.chunks`) numbered 1, 2, 3 … and
appended to the store, and the run's trace events (model calls, tool calls, handoffs) go into the same
stream as ``trace`` chunks for the timeline page — with payloads dropped
(:func:`kanawa.trace.redaction.drop_payloads`: timings, tokens, names and ids only; a tool's hidden
failure details and a run's exception text never reach a client). After each completed step a
checkpoint is saved. The run ends with an ``error`` chunk if it failed (seed 002 §7) and always
with a ``done`` chunk.

The task belongs to the manager, not to the HTTP request that started it: a client that disconnects
leaves the run going, its chunks buffered until the store's TTL. A cancel reaches the run through the
store (so a cancel sent to another worker works too) and, when the run is local, by cancelling its task.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kanawa._logging import get_logger
from kanawa.agents.agent import Agent
from kanawa.loop.runner import AgentLoopRunner
from kanawa.loop.steps import FinalResponse
from kanawa.server.budgets import CURRENT_TENANT
from kanawa.server.checkpoint import Checkpoint
from kanawa.server.chunks import Chunk, done_chunk, error_chunk, event_chunks
from kanawa.server.store import Entry, RunRecord, RunStatus, RunStore
from kanawa.trace.events import TraceEvent, Tracer
from kanawa.trace.redaction import drop_payloads
from kanawa.trace.serialize import event_to_record
from kanawa.types import Message, Usage, UserMessage

_log = get_logger("kanawa.server")
CHECKPOINT_KINDS = frozenset(
    {"tool_result", "thinking", "final_response", "handoff_end", "approval_required"}
)
"""Events after which a step is complete and the run's state is saved."""


class RunLimitReached(Exception):  # noqa: N818 - reads as the condition
    """The tenant already has its allowed number of runs going."""


class NotAwaitingApproval(Exception):  # noqa: N818 - reads as the condition
    """Approvals were sent for a run that is not waiting for them."""


class _TraceRouter:
    """A trace sink that hands each event of a run the server executes to that run's chunk writer."""

    def __init__(self) -> None:
        self.pending: dict[str, list[TraceEvent]] = {}
        self.skip_start: set[str] = set()
        """Runs continued from a checkpoint: their ``agent_start`` was sent by the first worker."""

    def emit(self, event: TraceEvent) -> None:
        queue = self.pending.get(event.run_id)
        if queue is not None:
            if event.event == "agent_start" and event.run_id in self.skip_start:
                return
            queue.append(event)

    async def aclose(self) -> None:
        self.pending.clear()


class _Forward:
    """Sends events on to an agent's own tracer (its redaction and sinks apply unchanged)."""

    def __init__(self, tracer: Tracer) -> None:
        self._tracer = tracer

    def emit(self, event: TraceEvent) -> None:
        self._tracer.emit(event)

    async def aclose(self) -> None:
        await self._tracer.aclose()


@dataclass(slots=True)
class _Writer:
    """Numbers chunks and appends them. Chunks up to ``replayed_to`` were already sent by a worker that
    died after its last checkpoint; the step being replayed produces them again, and they are skipped
    so no client sees one twice."""

    store: RunStore
    run_id: str
    agent: str
    seq: int
    replayed_to: int = 0

    async def write(self, chunk: Chunk, *, terminal: bool = False) -> bool:
        self.seq += 1
        if self.seq <= self.replayed_to:
            return False
        return await self.store.append(self.run_id, Entry(self.seq, chunk.encode(self.seq), terminal))


class RunManager:
    """Starts, tracks and cancels the runs of one process."""

    def __init__(
        self,
        agents: Mapping[str, Agent[Any, Any]],
        store: RunStore,
        *,
        max_runs: int = 64,
        dispatch: Callable[[str], Awaitable[None]] | None = None,
    ) -> None:
        self.agents = dict(agents)
        self.store = store
        self.max_runs = max_runs
        self.dispatch = dispatch
        """Set in Celery mode: sends a run to the workers instead of running it here."""
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._by_tenant: dict[str, set[str]] = {}
        self._router = _TraceRouter()
        for agent in self.agents.values():
            sinks: list[Any] = [self._router]
            if agent.tracer is not None and agent.tracer.enabled:
                sinks.append(_Forward(agent.tracer))
            agent.tracer = Tracer(sinks, session=agent.tracer.session if agent.tracer else None)

    async def start(
        self, tenant: str, agent_name: str, user_input: str, *, session_id: str | None = None
    ) -> RunRecord:
        """Create the run and start its task; ``KeyError`` for an unknown agent."""
        agent = self.agents[agent_name]
        running = self._by_tenant.setdefault(tenant, set())
        if len(running) >= self.max_runs:
            raise RunLimitReached(f"tenant has {len(running)} runs going (limit {self.max_runs})")
        run_id = uuid.uuid4().hex
        now = time.time()
        record = RunRecord(run_id, tenant, agent_name, "running", now, now, session_id=session_id)
        await self.store.create(record, writes_here=self.dispatch is None)
        if self.dispatch is not None:
            fresh = Checkpoint(agent_name, (UserMessage(user_input),), next_seq=1, fresh=True)
            await self.store.save_checkpoint(run_id, fresh.dumps())
            await self.dispatch(run_id)
            return record
        runner = agent.stream(user_input, run_id=run_id)
        self._spawn(tenant, run_id, self._execute(agent, runner, run_id, seq=0))
        return record

    async def continue_run(self, run_id: str) -> None:
        """Run (or go on with) a run from its checkpoint — what a Celery worker does with a run it
        receives, first or again after another worker died. A run that already ended is left alone."""
        text = await self.store.load_checkpoint(run_id)
        if text is None:
            return
        point = Checkpoint.loads(text)
        record = await self.store.get_any(run_id)
        if record is None or record.status != "running":
            return
        agent = self.agents[point.agent]
        runner = agent.stream([], history=list(point.messages), run_id=run_id)
        runner.state.current_step = point.steps  # steps go on numbering (and counting towards max_steps)
        CURRENT_TENANT.set(record.tenant)  # this task serves only this run
        work = asyncio.create_task(
            self._execute(
                agent,
                runner,
                run_id,
                seq=point.next_seq - 1,
                replayed_to=record.last_seq,
                continuation=not point.fresh,
                usage_offset=point.usage,
            )
        )
        watcher = asyncio.create_task(self._watch_cancel(run_id, work))
        try:
            await work
        finally:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher

    async def _watch_cancel(self, run_id: str, work: asyncio.Task[None], *, every: float = 0.2) -> None:
        """A cancel sent to the web process reaches a worker's run even while it waits on a model."""
        while not work.done():
            await asyncio.sleep(every)
            if await self.store.cancel_requested(run_id):
                work.cancel()
                return

    def _spawn(self, tenant: str, run_id: str, coro: Any) -> None:
        token = CURRENT_TENANT.set(tenant)  # the task copies this context: budgets know whose run it is
        try:
            task = asyncio.create_task(coro, name=f"kanawa-run-{run_id}")
        finally:
            CURRENT_TENANT.reset(token)
        self._tasks[run_id] = task
        self._by_tenant.setdefault(tenant, set()).add(run_id)

        def forget(_: asyncio.Task[None]) -> None:
            self._tasks.pop(run_id, None)
            self._by_tenant.get(tenant, set()).discard(run_id)

        task.add_done_callback(forget)

    async def _execute(
        self,
        agent: Agent[Any, Any],
        runner: AgentLoopRunner[Any],
        run_id: str,
        *,
        seq: int,
        replayed_to: int = 0,
        continuation: bool = False,
        usage_offset: Usage | None = None,
    ) -> None:
        """Drive one runner to its end, writing chunks. ``continuation``: the run goes on from a
        checkpoint (its ``agent_start`` was sent before; usage adds ``usage_offset``)."""
        writer = _Writer(self.store, run_id, agent.name, seq, replayed_to)
        traces = self._router.pending.setdefault(run_id, [])
        offset = usage_offset if usage_offset is not None else Usage()
        if continuation:
            self._router.skip_start.add(run_id)
        status: RunStatus = "completed"
        reason: str | None = None
        try:
            async for event in runner:
                stop = await self._flush_traces(writer, traces)
                if offset.requests and isinstance(event, FinalResponse):
                    event = dataclasses.replace(event, usage=offset + event.usage)
                for chunk in event_chunks(event, agent=agent.name, now=time.time()):
                    stop = await writer.write(chunk) or stop
                if getattr(event, "kind", "") in CHECKPOINT_KINDS:
                    usage = offset + runner.usage
                    await self._checkpoint(
                        agent.name, run_id, runner.messages, writer.seq, usage, runner.step
                    )
                if stop:
                    status, reason = "cancelled", "cancelled"
                    break
            else:
                await self._flush_traces(writer, traces)
                result = runner.result
                reason = str(result.termination_reason)
                if reason == "approval_required":
                    status = "awaiting_approval"
                    usage = offset + result.usage
                    await self._checkpoint(
                        agent.name, run_id, result.messages, writer.seq, usage, runner.step
                    )
        except asyncio.CancelledError:
            status, reason = "cancelled", "cancelled"
        except Exception as exc:
            _log.info("run %s failed: %s", run_id, type(exc).__name__)
            await self._flush_traces(writer, traces)
            status, reason = "failed", "error"
            await writer.write(error_chunk(exc, agent=agent.name, now=time.time()))
        finally:
            self._router.pending.pop(run_id, None)
            self._router.skip_start.discard(run_id)
            with contextlib.suppress(Exception):
                await runner.aclose()
        await self.store.set_status(run_id, status, reason=reason)
        await writer.write(
            done_chunk(status, agent=agent.name, now=time.time(), reason=reason, cost_usd=runner.cost),
            terminal=True,
        )

    async def _flush_traces(self, writer: _Writer, traces: list[TraceEvent]) -> bool:
        stop = False
        while traces:
            event = traces.pop(0)
            record = event_to_record(drop_payloads(event))
            record.pop("session", None)  # the agent's tracer session is shared by every tenant's runs
            stop = await writer.write(Chunk(event.agent, "trace", dict(record), event.time)) or stop
        return stop

    async def _checkpoint(
        self, agent: str, run_id: str, messages: Sequence[Message], seq: int, usage: Usage, steps: int
    ) -> None:
        point = Checkpoint(agent, tuple(messages), seq + 1, usage, steps)
        await self.store.save_checkpoint(run_id, point.dumps())

    async def cancel(self, record: RunRecord) -> None:
        """Ask the run to stop: through the store (any worker) and, when it runs here, its task."""
        await self.store.request_cancel(record.run_id)
        task = self._tasks.get(record.run_id)
        if task is not None:
            task.cancel()

    async def approve(
        self, record: RunRecord, *, approved: Sequence[str], rejected: Mapping[str, str]
    ) -> None:
        """Continue a run that waits for human approval with the decisions given."""
        if record.status != "awaiting_approval":
            raise NotAwaitingApproval(f"run is {record.status}, not awaiting approval")
        from kanawa import agents as agents_module

        approvals_type = getattr(agents_module, "Approvals", None)
        if approvals_type is None:
            raise NotAwaitingApproval("this kanawa version has no human approval")
        text = await self.store.load_checkpoint(record.run_id)
        if text is None:
            raise NotAwaitingApproval("the run's saved state has expired")
        point = Checkpoint.loads(text)
        agent = self.agents[record.agent]
        decisions = approvals_type(approved=list(approved), rejected=dict(rejected))
        runner = agent.stream(decisions, history=list(point.messages), run_id=record.run_id)
        await self.store.set_status(record.run_id, "running")
        self._spawn(
            record.tenant,
            record.run_id,
            # after every chunk already written, the awaiting_approval ``done`` chunk included
            self._execute(agent, runner, record.run_id, seq=max(point.next_seq - 1, record.last_seq)),
        )

    def read(self, run_id: str, *, after: int) -> AsyncIterator[Entry]:
        return self.store.read(run_id, after=after)

    async def aclose(self) -> None:
        """Cancel the runs still going (server shutdown) and wait for their last chunks."""
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task


__all__ = ["NotAwaitingApproval", "RunLimitReached", "RunManager"]
