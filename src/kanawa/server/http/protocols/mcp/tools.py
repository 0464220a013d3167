"""The served agents as MCP tools, each call a run of the service's run manager (``/mcp``).

Over stdio, :class:`~kanawa.mcp_server.toolset.AgentToolset` runs an agent in the host's own process.
Behind ``kanawa serve`` a call is a run like ``POST /v1/runs`` starts: owned by the caller's tenant,
counted against its run and stream caps and its budgets, its chunks in the run store (in Redis with
``KANAWA_REDIS_URL``, on a Celery worker in Celery mode), visible at ``/v1/runs/{id}``. The call reads
the run's chunks as they are stored and tells the host about them (``notifications/progress``, the
same messages as over stdio, text deltas joined and sent at most every :data:`PROGRESS_INTERVAL`,
a tool call told when the model starts it: :class:`~.progress.McpProgress`); the run's ``done``
chunk ends the call. A call that is cancelled — ``notifications/cancelled``, or the response stream
closed on protocol 2026-07-28 — cancels the run through the manager, on whichever process runs it.

Every servable agent is a tool: an :class:`~kanawa.agents.agent.Agent` with its output type's schema
(:mod:`kanawa.mcp_server.schemas`), a composite (SmartAO's coordinator) as a text tool — the service
runs composites as it runs agents, so the HTTP mount need not refuse them as ``kanawa mcp`` does. The
result carries the run's id in ``_meta["kanawa/run_id"]`` (its timeline, its status).

A text tool's answer follows the rule every protocol does (docs/design.md, "One answer text"): all
the text the served agent writes in the run, every step's in order — what it said before a tool
call included — and only when it streamed none, its ``final`` chunk's text. A handed-off agent's text
is progress, not the answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, cast

import mcp_types as types
from pydantic import ValidationError

from kanawa._logging import get_logger
from kanawa.agents.agent import Agent
from kanawa.mcp_server.schemas import INPUT_SCHEMA, OutputShape, describe, output_shape
from kanawa.mcp_server.toolset import (
    Report,
    UnknownAgentToolError,
    agent_input,
    answer_result,
    approval_message,
    error_result,
    failure_message,
    tool_name,
)
from kanawa.server.http.direct import WriterFed
from kanawa.server.http.event_stream import OpenStreams
from kanawa.server.http.protocols.errors import ProtocolError
from kanawa.server.http.protocols.framing import text_delta, typed_chunk
from kanawa.server.http.protocols.mcp.progress import McpProgress, Outcome
from kanawa.server.http.protocols.opening import opened_run
from kanawa.server.runs.chunks import Chunk
from kanawa.server.runs.manager import RunManager
from kanawa.server.runs.servable import ServableAgent
from kanawa.server.store.base import ChunksExpired, Entry, RunRecord
from kanawa.tools.messages import EXECUTION_ERROR_MESSAGE

_log = get_logger("kanawa.server")

RUN_ID_META: Final = "kanawa/run_id"
"""The ``_meta`` key of a call's result that names the run it was."""

LIMIT_MESSAGE: Final = "tool invoke error: {reason}; try again later"

PROGRESS_INTERVAL: Final = 0.1
"""Seconds between two progress notifications of text: MCP asks senders to rate-limit progress, and
each notification costs the host (and the SDK here) far more than a chunk costs the run. Text that
arrives sooner is joined to the next; a tool call, a handoff or the end is reported at once."""


@dataclass(frozen=True, slots=True)
class ServedTool:
    """One agent as a tool: its registered name, the name its chunks carry, the tool, its output."""

    agent: str
    chunk_agent: str
    tool: types.Tool
    shape: OutputShape | None


def _served_tool(registered: str, agent: ServableAgent) -> ServedTool:
    name = tool_name(registered)
    shape = output_shape(agent) if isinstance(agent, Agent) else None
    tool = types.Tool(
        name=name,
        title=agent.name,
        description=describe(agent, agent.name),  # its own description, never its instructions
        input_schema=INPUT_SCHEMA,
        output_schema=None if shape is None else shape.schema,
    )
    return ServedTool(registered, agent.name, tool, shape)


class ServedToolset:
    """The tools of a service's agents (name → servable, as the server registry holds them), and a
    call as one of the run manager's runs. Of two agents whose names make the same tool name the
    first is the tool (the other is logged, and still served on the other protocols): the service
    starts either way, for an MCP name's sake."""

    def __init__(self, agents: Mapping[str, ServableAgent]) -> None:
        tools: dict[str, ServedTool] = {}
        for registered, agent in agents.items():
            served = _served_tool(registered, agent)
            taken = tools.get(served.tool.name)
            if taken is not None:
                _log.warning(
                    "agent %r is not an MCP tool: agent %r already has the tool name %r",
                    registered,
                    taken.agent,
                    served.tool.name,
                )
                continue
            tools[served.tool.name] = served
        self._tools = tools

    def list_tools(self) -> list[types.Tool]:
        """Every agent's tool, in the registry's order."""
        return [served.tool for served in self._tools.values()]

    async def call(
        self,
        manager: RunManager,
        streams: OpenStreams,
        tenant: str,
        name: str,
        arguments: Mapping[str, Any] | None,
        *,
        report: Report | None = None,
    ) -> types.CallToolResult:
        """Run tool ``name``'s agent for ``tenant`` (module docstring); only an unknown name raises
        (:class:`UnknownAgentToolError`), every other failure is an ``isError`` result."""
        served = self._tools.get(name)
        if served is None:
            raise UnknownAgentToolError(name)
        text = agent_input(arguments)
        if not isinstance(text, str):
            return text
        question: str = text

        async def begin() -> RunRecord:
            return await manager.start(tenant, served.agent, question)

        try:
            async with opened_run(streams, manager, tenant, begin, run_of=_run_id) as opened:
                record = opened.value
                outcome = await _follow(manager, record.run_id, served.chunk_agent, report)
        except ProtocolError as exc:  # cancelled or failed otherwise: the opening stopped the run
            reason = LIMIT_MESSAGE.format(reason=exc.message) if exc.status == 429 else exc.message
            return error_result(reason)
        result = _result(served, outcome, record.run_id)
        result.meta = {RUN_ID_META: record.run_id}
        return result


def _run_id(record: RunRecord) -> str:
    return record.run_id


async def _follow(manager: RunManager, run_id: str, top: str, report: Report | None) -> Outcome:
    """Read the run's chunks up to its ``done`` chunk, reporting progress on the way: text deltas at
    most every :data:`PROGRESS_INTERVAL` (joined), anything else (a tool call, a handoff) at once.

    Behind its run (chunks that came while it reported, a resume) the call reads the store itself; at
    the head it is a :class:`_ProgressFeed` the store hands each new batch to (from the run's writer,
    or from the Redis hub for a run another process writes), so the text it holds back costs no
    wake-up per delta, nor parsing what a writer in this process has just encoded. Whenever there is
    something to report the feed steps aside, the store's read ends, the call reports, and it reads
    on from where the feed stopped."""
    outcome = Outcome()
    feed = _ProgressFeed(top, outcome, reporting=report is not None)
    try:
        while True:
            batches = manager.store.read_batches(run_id, after=feed.cursor, subscriber=feed)
            paused = False  # the read was left to report (it did not end by itself)
            try:
                async for batch in batches:
                    for entry in batch:
                        feed.take(entry)
                    feed.cursor = batch[-1].seq
                    if feed.ended or feed.due or feed.interval_passed():
                        paused = not feed.ended
                        break
            finally:
                with contextlib.suppress(Exception):
                    await batches.aclose()  # type: ignore[attr-defined]
            if report is not None and feed.holding:
                for message in feed.messages():
                    await report(message)
            if feed.ended or not (paused or feed.due):  # the run ended, or is gone from the store
                return outcome
            feed.due = False
    except ChunksExpired:
        _log.warning("run %s: its chunks expired before an MCP call read them", run_id)
    finally:
        feed.close()
    return outcome


class _ProgressFeed(WriterFed):
    """What an MCP call has read of its run and not yet reported; while the call waits at the head
    of the run, a :class:`~kanawa.server.store.base.Subscriber` the writer offers each batch to
    (:func:`_follow`). It steps aside — ``finished`` for the store's read, which then ends — when
    there is something to report now: the run's end, a chunk other than text, or text held for
    :data:`PROGRESS_INTERVAL` (one timer per interval, not a check per delta)."""

    __slots__ = ("_reporting", "_timer", "_top", "due", "ended", "outcome", "progress", "sent")

    def __init__(self, top: str, outcome: Outcome, *, reporting: bool) -> None:
        super().__init__()
        self._top = top
        self.outcome = outcome
        self._reporting = reporting
        """The host asked for progress; without it nothing is held, only the outcome noted."""
        self.progress = McpProgress(top, outcome, reporting=reporting)
        """The chunks' translation: the outcome, and the messages not yet reported."""
        self._timer: asyncio.TimerHandle | None = None
        self.due = False
        """Something is to be reported now: the store's read ends for it."""
        self.ended = False
        """The run's terminal chunk was taken."""
        self.sent = self._loop.time() - PROGRESS_INTERVAL
        """When progress was last reported (the loop's clock): the first is due at once."""

    @property
    def finished(self) -> bool:
        return self.ended or self.due

    @property
    def holding(self) -> bool:
        return self.progress.holding

    def until_due(self) -> float:
        return max(0.0, self.sent + PROGRESS_INTERVAL - self._loop.time())

    def interval_passed(self) -> bool:
        return self._reporting and self.holding and self.until_due() == 0.0

    def take(self, entry: Entry) -> None:
        """One chunk, the writer's (its ``source`` unparsed) or read back from the store."""
        text = text_delta(entry)
        if text is not None and cast(Chunk, entry.source).agent == self._top:
            self.outcome.answer.append(text)
            self.progress.hold_text(self._top, text)
        elif self.progress.take(typed_chunk(entry)) and self._reporting:
            self.due = True
        if entry.terminal:
            self.ended = True

    def messages(self) -> list[str]:
        """What is held, as progress messages; it is reported from now."""
        messages = self.progress.messages()
        self.sent = self._loop.time()
        return messages

    # the Subscriber side: the writer's task

    def attach(self, cursor: int) -> None:
        super().attach(cursor)
        if self.holding:
            self._due_later()

    def offer(self, entries: Sequence[Entry]) -> bool:
        if not self.attached:
            return False
        if entries[0].seq != self.cursor + 1:
            self.detach()
            return False
        for entry in entries:
            self.take(entry)
        self.cursor = entries[-1].seq
        if self.ended or self.due:
            self.detach()
        elif self._timer is None and self.holding:
            self._due_later()
        return True

    def _due_later(self) -> None:
        if self._reporting and self._timer is None:
            self._timer = self._loop.call_later(self.until_due(), self._interval_ended)

    def _interval_ended(self) -> None:
        self._timer = None
        if self.attached and self.holding:
            self.due = True
            self.detach()

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self.detach()


def _result(served: ServedTool, outcome: Outcome, run_id: str) -> types.CallToolResult:
    if outcome.status == "awaiting_approval":
        return error_result(approval_message(outcome.approvals))
    if outcome.status != "completed":
        _log.warning(
            "agent %s ended without an answer over MCP (run %s, %s)", served.agent, run_id, outcome.status
        )
        return error_result(failure_message(outcome.error))
    if served.shape is None:
        text = "".join(outcome.answer) or outcome.text  # the answer rule (module docstring)
        if not text and outcome.output is not None:  # a composite's answer that is not text
            text = json.dumps(outcome.output, ensure_ascii=False)
        return answer_result(None, text, None)
    try:
        output = served.shape.adapter.validate_python(outcome.output)
    except ValidationError:
        _log.warning("agent %s: run %s's answer does not fit its output type", served.agent, run_id)
        return error_result(EXECUTION_ERROR_MESSAGE)
    return answer_result(served.shape, outcome.text, output)


__all__ = ["LIMIT_MESSAGE", "RUN_ID_META", "ServedTool", "ServedToolset"]
