"""Running agents for the service: one task per run, writing numbered chunks to the run store.

The story of a run (``RunManager.start``): a record is created (status ``running``), a task iterates
``agent.stream(...)``, every event becomes chunks (:mod:`kanawa.server.runs.chunks`) numbered 1, 2, 3 … and
appended to the store, and the run's trace events (model calls, tool calls, handoffs) go into the same
stream as ``trace`` chunks for the timeline page — with payloads dropped
(:func:`kanawa.trace.redaction.drop_payloads`: timings, tokens, names and ids only; a tool's hidden
failure details and a run's exception text never reach a client). After each completed step a
checkpoint is saved. The run ends with an ``error`` chunk if it failed (seed 002 §7) and always
with a ``done`` chunk. A run that stopped for a person's approval goes on from its checkpoint with
their decisions (``RunManager.approve``), like a run another worker takes over.

The task belongs to the manager, not to the HTTP request that started it: a client that disconnects
leaves the run going, its chunks buffered until the store's TTL. A cancel reaches the run through the
store (so a cancel sent to another worker works too) and, when the run is local, by cancelling its task.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from kanawa._logging import get_logger
from kanawa.loop.approval import Approvals, unanswered_calls
from kanawa.loop.events import FinalResponse
from kanawa.loop.hooks import RunHooks
from kanawa.loop.options import RunOptions
from kanawa.loop.state import LoopCounters
from kanawa.secrets import mask
from kanawa.server.runs.budgets import CURRENT_TENANT
from kanawa.server.runs.checkpoint import Checkpoint
from kanawa.server.runs.chunk_writer import CHECKPOINT_EVENTS, ChunkWriter, Spent, TraceRouter, trace_chunks
from kanawa.server.runs.chunks import ChunkTranslation, done_chunk, error_chunk
from kanawa.server.runs.servable import ServableAgent, ServableRun
from kanawa.server.store.base import Entry, RunRecord, RunStatus, RunStore
from kanawa.types import Message, ToolMessage, UserMessage

if TYPE_CHECKING:
    from kanawa.server.store.shared_limits import SharedRunSlots

_log = get_logger("kanawa.server")


class RunLimitReached(Exception):  # noqa: N818 - reads as the condition
    """The tenant already has its allowed number of runs going."""


class NotAwaitingApproval(Exception):  # noqa: N818 - reads as the condition
    """Approvals were sent for a run that is not waiting for them."""


class InvalidDecisions(ValueError):  # noqa: N818 - reads as the condition
    """Approval decisions that do not fit the calls waiting (a call both approved and rejected, or
    one that is not waiting): refused before anything is saved or run."""


class NotContinuable(Exception):  # noqa: N818 - reads as the condition
    """A continuation was sent for a run that is not waiting for one (running, failed, cancelled)."""


class InvalidContinuation(ValueError):  # noqa: N818 - reads as the condition
    """A continuation's messages do not fit the run: tool answers for calls that are not waiting, or
    calls waiting without an answer."""


WAITING: frozenset[str] = frozenset({"awaiting_approval", "awaiting_tool_output"})
"""Statuses of a run stopped until someone answers it (no task runs it meanwhile)."""
CONTINUABLE: frozenset[str] = frozenset({"awaiting_tool_output", "completed"})
"""Statuses from which a caller's messages continue a run (:meth:`RunManager.go_on`)."""


def check_answers(history: Sequence[Message], messages: Sequence[Message]) -> tuple[Message, ...]:
    """``messages`` with each tool answer named after the call it answers; refused when they do not
    answer exactly the tool calls ``history`` leaves unanswered (a provider rejects a conversation
    with a call and no result, or a result for no call)."""
    calls = {call.id: call for call in unanswered_calls(history)}
    waiting = set(calls)
    answered = [m.tool_call_id for m in messages if isinstance(m, ToolMessage)]
    unknown = sorted(set(answered) - waiting)
    if unknown:
        raise InvalidContinuation(f"tool outputs for calls that are not waiting: {unknown}")
    missing = sorted(waiting - set(answered))
    if missing:
        raise InvalidContinuation(f"no tool output for the calls waiting: {missing}")
    if not messages:
        raise InvalidContinuation("nothing to continue with: send tool outputs or a message")
    return tuple(
        ToolMessage(m.tool_call_id, m.parts, is_error=m.is_error, name=calls[m.tool_call_id].name)
        if isinstance(m, ToolMessage)
        else m
        for m in messages
    )


class RunManager:
    """Starts, tracks and cancels the runs of one process."""

    def __init__(
        self,
        agents: Mapping[str, ServableAgent],
        store: RunStore,
        *,
        max_runs: int = 64,
        dispatch: Callable[[str], Awaitable[None]] | None = None,
        slots: SharedRunSlots | None = None,
        translation: ChunkTranslation | None = None,
        guardrails: Sequence[RunHooks] = (),
    ) -> None:
        self.agents = dict(agents)
        self.translation = translation if translation is not None else ChunkTranslation()
        """Run events → chunks: kanawa's own, and the applications' (:mod:`.chunks`)."""
        self.store = store
        self.max_runs = max_runs
        self.dispatch = dispatch
        self.slots = slots
        """With Redis: the tenants' running runs counted across processes
        (:mod:`kanawa.server.store.shared_limits`); ``None``: counted in this process."""
        self._releases: set[asyncio.Task[None]] = set()
        """Set in Celery mode: sends a run to the workers instead of running it here."""
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._by_tenant: dict[str, set[str]] = {}
        self._router = TraceRouter()
        self._options = RunOptions(trace_sinks=(self._router,), guardrails=tuple(guardrails))
        """What every run gets from the service (the agents are never changed): its trace events'
        sink, and ``guardrails`` (the tenants' budget)."""

    def _for_run(self, requested: RunOptions | None) -> RunOptions:
        """A run's options: the request's own (kept in its checkpoints) with the service's sink and
        guardrails added — those are this process's objects, never saved with the run."""
        if requested is None:
            return self._options
        service = self._options
        return dataclasses.replace(
            requested,
            trace_sinks=(*requested.trace_sinks, *service.trace_sinks),
            guardrails=(*requested.guardrails, *service.guardrails),
        )

    async def start(
        self,
        tenant: str,
        agent_name: str,
        user_input: str | Sequence[Message],
        *,
        session_id: str | None = None,
        history: Sequence[Message] = (),
        options: RunOptions | None = None,
        run_id: str | None = None,
    ) -> RunRecord:
        """Create the run and start its task; ``KeyError`` for an unknown agent. ``user_input`` is the
        question, or messages to append to ``history`` (an earlier conversation a client sent);
        ``options`` the request's own additions (client tools, instructions …); ``run_id`` an id the
        caller derived itself (32 hex digits: a protocol whose conversations have their own ids, such
        as an AG-UI thread), a fresh one without it; :class:`~kanawa.server.store.base.RunExists` when
        another request has just started a run with that id."""
        agent = self.agents[agent_name]
        if (
            not isinstance(user_input, str)
            and user_input
            and all(isinstance(m, ToolMessage) for m in user_input)
        ):
            # tool outputs must answer the calls the history leaves open, on every door: a result for
            # no call is refused here (InvalidContinuation: 400), never sent on to a provider
            user_input = check_answers(history, user_input)
        running = self._by_tenant.setdefault(tenant, set())
        derived = run_id is not None
        run_id = run_id if run_id is not None else uuid.uuid4().hex
        if self.slots is not None:
            going = await self.slots.acquire(tenant, run_id, self.max_runs)
            if going:
                raise RunLimitReached(f"tenant has {going} runs going (limit {self.max_runs})")
        elif len(running) >= self.max_runs:
            raise RunLimitReached(f"tenant has {len(running)} runs going (limit {self.max_runs})")
        now = time.time()
        record = RunRecord(run_id, tenant, agent_name, "running", now, now, session_id=session_id)
        try:
            await self.store.create(record, writes_here=self.dispatch is None, exclusive=derived)
            if self.dispatch is not None:
                asked = (UserMessage(user_input),) if isinstance(user_input, str) else tuple(user_input)
                fresh = Checkpoint(agent_name, (*history, *asked), next_seq=1, fresh=True, options=options)
                await self.store.save_checkpoint(run_id, fresh.dumps())
                await self.dispatch(run_id)
                return record
        except BaseException:
            if self.slots is not None:
                await self.slots.release(tenant, run_id)
            raise
        runner = agent.stream(user_input, history=history, run_id=run_id, options=self._for_run(options))
        self._spawn(tenant, run_id, self._execute(agent, runner, run_id, seq=0, options=options))
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
        CURRENT_TENANT.set(record.tenant)  # this task serves only this run
        try:
            agent = self.agents[point.agent]
            resumed = self._resume(agent, run_id, point, replayed_to=record.last_seq)
        except Exception as exc:  # an agent this worker lacks, a servable that cannot take the counters
            await self.fail_unstarted(record, exc)
            return
        if self.slots is not None:  # this worker renews the run's place while it runs it
            self.slots.hold(record.tenant, run_id)
        work = asyncio.create_task(resumed)
        watcher = asyncio.create_task(self._watch_cancel(run_id, work))
        try:
            await work
        finally:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher
            if self.slots is not None:
                ended = await self.store.get_any(run_id)
                if ended is None or ended.status != "running":
                    await self.slots.release(record.tenant, run_id)

    async def fail_unstarted(self, record: RunRecord, exc: BaseException) -> None:
        """End a run this process cannot start — the agent is not in its registry, the servable
        refused the run's restored counters, an extension's resources failed to start — with its
        ``error`` chunk and a failed ``done``, so its clients are not left waiting until the TTL."""
        _log.warning("run %s could not start: %s: %s", record.run_id, type(exc).__name__, mask(str(exc)))
        writer = ChunkWriter(self.store, record.run_id, record.agent, record.last_seq)
        await writer.write_many([error_chunk(exc, agent=record.agent, now=time.time())])
        await self.store.set_status(record.run_id, "failed", reason="error")
        await writer.write(
            done_chunk("failed", agent=record.agent, now=time.time(), reason="error"), terminal=True
        )
        if self.slots is not None:
            await self.slots.release(record.tenant, record.run_id)

    def _resume(
        self, agent: ServableAgent, run_id: str, point: Checkpoint, *, replayed_to: int
    ) -> Coroutine[Any, Any, None]:
        """The run going on from ``point``: with the decisions it carries (an approval), else from its
        messages; the loop's counters (steps, tool calls) and phase restored so its limits hold for
        the whole run. Chunks up to ``replayed_to`` were sent before and are not sent again."""
        user_input: Approvals | list[Message] = (
            point.approvals if point.approvals is not None else list(point.pending)
        )
        runner = agent.stream(
            user_input, history=list(point.messages), run_id=run_id, options=self._for_run(point.options)
        )
        runner.restore_counters(
            LoopCounters(point.steps, tool_calls=point.tool_calls, decode_retries=point.decode_retries)
        )
        return self._execute(
            agent,
            runner,
            run_id,
            seq=point.next_seq - 1,
            replayed_to=replayed_to,
            # an approval's or a caller's continuation is a new part of the run, with its own agent_start
            continuation=not point.fresh and point.approvals is None and not point.pending,
            spent=Spent(point.usage, point.cost_usd),
            options=point.options,
        )

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
        slots = self.slots
        if slots is not None:
            slots.hold(tenant, run_id)

        def forget(_: asyncio.Task[None]) -> None:
            self._tasks.pop(run_id, None)
            self._by_tenant.get(tenant, set()).discard(run_id)
            if slots is not None:  # the run's place in Redis is given back
                release = asyncio.get_running_loop().create_task(slots.release(tenant, run_id))
                self._releases.add(release)
                release.add_done_callback(self._releases.discard)

        task.add_done_callback(forget)

    async def _execute(
        self,
        agent: ServableAgent,
        runner: ServableRun,
        run_id: str,
        *,
        seq: int,
        replayed_to: int = 0,
        continuation: bool = False,
        spent: Spent | None = None,
        options: RunOptions | None = None,
    ) -> None:
        """Drive one runner to its end, writing chunks. ``continuation``: the run goes on from a
        checkpoint (its ``agent_start`` was sent before); ``spent``: usage and cost of the run's
        earlier parts, added to this runner's; ``options``: the request's, kept in checkpoints."""
        writer = ChunkWriter(self.store, run_id, agent.name, seq, replayed_to)
        traces = self._router.pending.setdefault(run_id, [])
        self._router.starts[run_id] = functools.partial(writer.flush_soon, traces)
        before = spent if spent is not None else Spent()
        offset = before.usage
        if continuation:
            self._router.skip_start.add(run_id)
        status: RunStatus = "completed"
        reason: str | None = None
        translate = self.translation.chunks
        name = agent.name
        carried = offset.requests > 0
        try:
            async for event in runner:
                if carried and isinstance(event, FinalResponse):
                    event = dataclasses.replace(event, usage=offset + event.usage)
                chunks = translate(event, agent=name, now=time.time())
                if traces:  # what the trace recorded up to the event goes first
                    chunks = [*trace_chunks(traces), *chunks]
                # most events are one chunk (a text delta): stored as one, with no batch around it
                stop = await (writer.write(chunks[0]) if len(chunks) == 1 else writer.write_many(chunks))
                if isinstance(event, CHECKPOINT_EVENTS):
                    await self._checkpoint(agent.name, run_id, runner, writer.seq, before, options)
                if stop:
                    status, reason = "cancelled", "cancelled"
                    break
            else:
                await writer.write_many(trace_chunks(traces))
                result = runner.result
                reason = str(result.termination_reason)
                if reason == "approval_required":
                    status = "awaiting_approval"
                    await self._checkpoint(agent.name, run_id, runner, writer.seq, before, options)
                elif reason == "tools_pending":  # the model called a client's tools: the client answers
                    status = "awaiting_tool_output"
                    await self._checkpoint(agent.name, run_id, runner, writer.seq, before, options)
        except asyncio.CancelledError:
            status, reason = "cancelled", "cancelled"
        except Exception as exc:
            # the whole (masked) text for the operator; the client gets failures.client_message's
            _log.info("run %s failed: %s: %s", run_id, type(exc).__name__, mask(str(exc)))
            status, reason = "failed", "error"
            failure = trace_chunks(traces)
            failure.append(error_chunk(exc, agent=agent.name, now=time.time()))
            await writer.write_many(failure)
        finally:
            self._router.end(run_id)
            with contextlib.suppress(Exception):
                await runner.aclose()
        await self.store.set_status(run_id, status, reason=reason)
        await writer.write(
            done_chunk(
                status, agent=agent.name, now=time.time(), reason=reason, cost_usd=before.plus(runner.cost)
            ),
            terminal=True,
        )

    async def _checkpoint(
        self,
        agent: str,
        run_id: str,
        runner: ServableRun,
        seq: int,
        before: Spent,
        options: RunOptions | None = None,
    ) -> None:
        counters = runner.counters()  # the loop's counters, so its limits span the run
        point = Checkpoint(
            agent,
            tuple(runner.messages),
            seq + 1,
            before.usage + runner.usage,
            counters.steps,
            tool_calls=counters.tool_calls,
            cost_usd=before.plus(runner.cost),
            decode_retries=counters.decode_retries,
            options=options,
        )
        await self.store.save_checkpoint(run_id, point.dumps())

    async def cancel(self, record: RunRecord) -> None:
        """Ask the run to stop: through the store (any worker) and, when it runs here, its task.

        A run waiting for approval has no task anywhere: it is ended here — its status set to
        ``cancelled`` in the same atomic step that a decision would take to continue it (so of a
        cancel and a decision racing, one wins; a later decision finds it cancelled) and a ``done``
        chunk of status ``cancelled`` appended to its stream."""
        if record.status in WAITING and await self._cancel_waiting(record):
            return
        await self.store.request_cancel(record.run_id)
        task = self._tasks.get(record.run_id)
        if task is not None:
            # one tick later: a task started this tick has not taken its first step, and cancelled
            # now its run's code would never run (no status, no done chunk: "running" until the TTL);
            # its first step is queued before this call, so the cancel finds it inside the run
            asyncio.get_running_loop().call_soon(task.cancel)

    async def _cancel_waiting(self, record: RunRecord) -> bool:
        """End a run that waits for approval (:meth:`cancel`); ``False`` when a decision came first."""
        run_id = record.run_id
        if not await self.store.claim_status(run_id, record.status, "cancelled"):
            return False
        await self.store.request_cancel(run_id)
        await self.store.set_status(run_id, "cancelled", reason="cancelled")
        current = await self.store.get_any(run_id)
        last_seq = current.last_seq if current is not None else record.last_seq
        text = await self.store.load_checkpoint(run_id)
        cost = Checkpoint.loads(text).cost_usd if text is not None else None
        done = done_chunk("cancelled", agent=record.agent, now=time.time(), reason="cancelled", cost_usd=cost)
        await self.store.append(run_id, Entry(last_seq + 1, done.encode(last_seq + 1), True, done))
        return True

    async def approve(
        self, record: RunRecord, *, approved: Sequence[str], rejected: Mapping[str, str]
    ) -> None:
        """Continue a run that waits for human approval with the decisions given: they are saved in
        the run's checkpoint and the run goes on from it like a run a worker takes over — here, or in
        Celery mode on a worker (the web process only relays)."""
        if record.status != "awaiting_approval":
            raise NotAwaitingApproval(f"run is {record.status}, not awaiting approval")
        text = await self.store.load_checkpoint(record.run_id)
        if text is None:
            raise NotAwaitingApproval("the run's saved state has expired")
        point = Checkpoint.loads(text)
        try:
            decisions = Approvals(approved=tuple(approved), rejected=dict(rejected))
        except ValueError as exc:
            raise InvalidDecisions(str(exc)) from None
        waiting = {call.id for call in unanswered_calls(point.messages)}
        unknown = sorted((set(approved) | set(rejected)) - waiting)
        if unknown:
            raise InvalidDecisions(f"decisions name calls that are not waiting for approval: {unknown}")
        decided = dataclasses.replace(
            point,
            # after every chunk already written, the awaiting_approval ``done`` chunk included
            next_seq=max(point.next_seq, record.last_seq + 1),
            approvals=decisions,
        )
        # the first of several decisions racing for the run wins; the others find it running
        if not await self.store.claim_status(record.run_id, "awaiting_approval", "running"):
            raise NotAwaitingApproval("run is no longer awaiting approval (another decision came first)")
        try:
            await self.store.save_checkpoint(record.run_id, decided.dumps())
        except BaseException:
            # the decisions are not saved: the run waits for them again rather than hang "running"
            await self.store.set_status(record.run_id, "awaiting_approval", reason="approval_required")
            raise
        if self.slots is not None:  # the run goes on: it takes its place again (beyond the limit too)
            await self.slots.acquire(record.tenant, record.run_id, self.max_runs, force=True)
        if self.dispatch is not None:
            await self.dispatch(record.run_id)
            return
        agent = self.agents[record.agent]
        self._spawn(
            record.tenant,
            record.run_id,
            self._resume(agent, record.run_id, decided, replayed_to=decided.next_seq - 1),
        )

    async def go_on(
        self, record: RunRecord, messages: Sequence[Message], *, options: RunOptions | None = None
    ) -> int:
        """Continue a run that waits for its caller's tools, or one that completed, with the caller's
        ``messages`` (tool answers; a next question) and the request's ``options``: the same run, from
        its checkpoint, here or on a Celery worker. Returns the seq after which the new part's chunks
        come. :class:`NotContinuable` when the run cannot go on; :class:`InvalidContinuation` when the
        messages do not answer exactly the calls waiting."""
        if record.status not in CONTINUABLE:
            raise NotContinuable(f"run is {record.status}: it cannot be continued")
        text = await self.store.load_checkpoint(record.run_id)
        if text is None:
            raise NotContinuable("the run's saved state has expired")
        point = Checkpoint.loads(text)
        answers = check_answers(point.messages, messages)
        after = max(point.next_seq - 1, record.last_seq)
        going = dataclasses.replace(
            point, next_seq=after + 1, pending=answers, options=options, approvals=None
        )
        if record.status == "completed":
            # a next question is a new turn: the loop's limits (max_steps, the calls per tool)
            # count it afresh, as a new run on the same conversation would; tool outputs go on
            # with the turn they answer
            going = dataclasses.replace(going, steps=0, tool_calls=(), decode_retries=None)
        # of two continuations racing for the run, the first wins; the other finds it running
        if not await self.store.claim_status(record.run_id, record.status, "running"):
            raise NotContinuable("run is no longer waiting (another request continued it first)")
        try:
            await self.store.save_checkpoint(record.run_id, going.dumps())
        except BaseException:
            await self.store.set_status(record.run_id, record.status, reason=record.termination_reason)
            raise
        if self.slots is not None:
            await self.slots.acquire(record.tenant, record.run_id, self.max_runs, force=True)
        if self.dispatch is not None:
            await self.dispatch(record.run_id)
            return after
        agent = self.agents[record.agent]
        self._spawn(
            record.tenant, record.run_id, self._resume(agent, record.run_id, going, replayed_to=after)
        )
        return after

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
        for release in list(self._releases):
            with contextlib.suppress(Exception):
                await release
        if self.slots is not None:
            await self.slots.aclose()


__all__ = [
    "CONTINUABLE",
    "WAITING",
    "InvalidContinuation",
    "InvalidDecisions",
    "NotAwaitingApproval",
    "NotContinuable",
    "RunLimitReached",
    "RunManager",
    "check_answers",
]
