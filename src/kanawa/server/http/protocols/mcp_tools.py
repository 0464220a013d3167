"""The served agents as MCP tools, each call a run of the service's run manager (``/mcp``).

Over stdio, :class:`~kanawa.mcp_server.toolset.AgentToolset` runs an agent in the host's own process.
Behind ``kanawa serve`` a call is a run like ``POST /v1/runs`` starts: owned by the caller's tenant,
counted against its run and stream caps and its budgets, its chunks in the run store (in Redis with
``KANAWA_REDIS_URL``, on a Celery worker in Celery mode), visible at ``/v1/runs/{id}``. The call reads
the run's chunks as they are stored and tells the host about them (``notifications/progress``, the
same messages as over stdio, text deltas joined and sent at most every :data:`PROGRESS_INTERVAL`:
:func:`~kanawa.mcp_server.progress.batch_progress`); the run's ``done``
chunk ends the call. A call that is cancelled — ``notifications/cancelled``, or the response stream
closed on protocol 2026-07-28 — cancels the run through the manager, on whichever process runs it.

Every servable agent is a tool: an :class:`~kanawa.agents.agent.Agent` with its output type's schema
(:mod:`kanawa.mcp_server.schemas`), a composite (SmartAO's coordinator) as a text tool — the service
runs composites as it runs agents, so the HTTP mount need not refuse them as ``kanawa mcp`` does. The
result carries the run's id in ``_meta["kanawa/run_id"]`` (its timeline, its status).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import anyio
import mcp_types as types
from pydantic import ValidationError

from kanawa._logging import get_logger
from kanawa.agents.agent import Agent
from kanawa.mcp_server.progress import batch_progress
from kanawa.mcp_server.schemas import INPUT_SCHEMA, OutputShape, describe, output_shape
from kanawa.mcp_server.toolset import (
    Report,
    UnknownAgentToolError,
    agent_input,
    answer_result,
    approval_message,
    error_result,
    tool_name,
)
from kanawa.server.http.event_stream import OpenStreams, TooManyStreams
from kanawa.server.http.protocols.openai_runs import chunk_of
from kanawa.server.runs.manager import RunLimitReached, RunManager
from kanawa.server.runs.servable import ServableAgent
from kanawa.server.store.base import ChunksExpired
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
    if isinstance(agent, Agent):
        shape = output_shape(agent)
        description = describe(agent)
    else:
        shape = None
        description = f"The kanawa agent {agent.name!r} (it answers in text)."
    tool = types.Tool(
        name=name,
        title=agent.name,
        description=description,
        input_schema=INPUT_SCHEMA,
        output_schema=None if shape is None else shape.schema,
    )
    return ServedTool(registered, agent.name, tool, shape)


@dataclass(slots=True)
class _Outcome:
    """What the call learns from the run's chunks."""

    status: str = "failed"
    text: str = ""
    output: object = None
    approvals: tuple[str, ...] = ()
    error: str | None = None


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
        try:
            streams.admit(tenant, None)
        except TooManyStreams as exc:
            return error_result(LIMIT_MESSAGE.format(reason=exc))
        try:
            try:
                record = await manager.start(tenant, served.agent, text)
            except RunLimitReached as exc:
                return error_result(LIMIT_MESSAGE.format(reason=exc))
            try:
                outcome = await _follow(manager, record.run_id, served.chunk_agent, report)
            except BaseException:  # cancelled (or the connection failed): the run stops too
                with anyio.CancelScope(shield=True):
                    await manager.cancel(record)
                raise
        finally:
            streams.release(tenant, None)
        result = _result(served, outcome, record.run_id)
        result.meta = {RUN_ID_META: record.run_id}
        return result


async def _follow(manager: RunManager, run_id: str, top: str, report: Report | None) -> _Outcome:
    """Read the run's chunks up to its ``done`` chunk, reporting progress on the way: text deltas at
    most every :data:`PROGRESS_INTERVAL` (joined), anything else (a tool call, a handoff) at once."""
    outcome = _Outcome()
    batches = manager.store.read_batches(run_id, after=0)
    held: list[Mapping[str, Any]] = []  # chunks not yet reported
    sent = 0.0
    try:
        async for batch in batches:
            ended = False
            only_text = True
            for entry in batch:
                chunk = chunk_of(entry)
                held.append(chunk)
                _note(outcome, chunk, top)
                only_text = only_text and chunk.get("type") == "delta"
                if entry.terminal:
                    ended = True
                    break
            now = time.monotonic()
            if report is not None and (ended or not only_text or now - sent >= PROGRESS_INTERVAL):
                for message in batch_progress(held, top_agent=top):
                    await report(message)
                held.clear()
                sent = now
            if ended:
                return outcome
            if report is not None and only_text:
                # the next text may not be sent before the interval: let it gather in the store and
                # read it in one batch then, rather than waking for each delta (the run is not held)
                await asyncio.sleep(max(0.0, sent + PROGRESS_INTERVAL - time.monotonic()))
    except ChunksExpired:
        _log.warning("run %s: its chunks expired before an MCP call read them", run_id)
    finally:
        with contextlib.suppress(Exception):
            await batches.aclose()  # type: ignore[attr-defined]
    return outcome


def _note(outcome: _Outcome, chunk: Mapping[str, Any], top: str) -> None:
    kind = chunk.get("type")
    data = chunk.get("data")
    if not isinstance(data, dict):
        return
    if kind == "done":
        outcome.status = str(data.get("status"))
    elif chunk.get("agent") != top:
        return  # a handed-off agent's answer and errors are not the call's
    elif kind == "final":
        outcome.text = str(data.get("text") or "")
        outcome.output = data.get("output")
    elif kind == "approval_required":
        calls = data.get("calls")
        names = [str(call.get("name")) for call in calls or () if isinstance(call, dict)]
        outcome.approvals = (*outcome.approvals, *names)
    elif kind == "error":
        outcome.error = f"{data.get('code')}: {data.get('message')}"


def _result(served: ServedTool, outcome: _Outcome, run_id: str) -> types.CallToolResult:
    if outcome.status == "awaiting_approval":
        return error_result(approval_message(outcome.approvals))
    if outcome.status != "completed":
        _log.warning(
            "agent %s ended without an answer over MCP (run %s, %s)", served.agent, run_id, outcome.status
        )
        detail = f" ({outcome.error})" if outcome.error else ""
        return error_result(EXECUTION_ERROR_MESSAGE + detail)
    if served.shape is None:
        text = outcome.text
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
