"""A message sent to a task: a new run, or a decision for a run waiting for approval.

``SendMessage`` and ``SendStreamingMessage`` both start here (:func:`take_message`), the unary one
through the SDK's JSON-RPC dispatcher (:mod:`.handler`), the streaming one through the route's own
stream (:mod:`.rpc`). A message without ``taskId`` starts a run of the agent with its text (its
``contextId`` becomes the run's session id, or the run id is the context); a message naming an
``input-required`` task is the person's answer to the calls waiting: ``approve`` runs them, anything
else rejects them with the message as the reason, and the same run goes on (same task id).
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from dataclasses import dataclass

from a2a.types.a2a_pb2 import SendMessageRequest, TaskState
from a2a.utils.errors import InvalidParamsError, TaskNotFoundError, UnsupportedOperationError

from kanawa.server.http.protocols.a2a.tasks import (
    STATE,
    TERMINAL,
    message_text,
    owned_task,
    read_text,
    waiting_call_ids,
)
from kanawa.server.runs.manager import InvalidDecisions, NotAwaitingApproval, RunManager
from kanawa.server.store.base import ChunksExpired, RunRecord, RunStore

MAX_CONTEXT_ID = 200
"""The longest ``contextId`` kept (it is the run's session id)."""
APPROVING = frozenset({"approve", "approved", "yes", "y", "ok"})
"""First words of an answer that approve the calls waiting (case-insensitive)."""


@dataclass(frozen=True, slots=True)
class Turn:
    """A run a message started or continued, and the seq after which this turn's chunks come."""

    record: RunRecord
    after: int


async def take_message(manager: RunManager, tenant: str, agent: str, request: SendMessageRequest) -> Turn:
    """Start or continue the run a message is for (module docstring). A2A errors for a message that
    cannot be taken; :class:`~kanawa.server.runs.manager.RunLimitReached` at the tenant's run cap."""
    message = request.message
    text = message_text(message.parts)
    if not text.strip():
        raise InvalidParamsError(message="the message has no text part")
    if message.task_id:
        return await _answer(manager, tenant, agent, message.task_id, text)
    context_id = message.context_id or uuid.uuid4().hex
    if len(context_id) > MAX_CONTEXT_ID:
        raise InvalidParamsError(message=f"contextId is longer than {MAX_CONTEXT_ID} characters")
    record = await manager.start(tenant, agent, text, session_id=context_id)
    return Turn(record, 0)


async def _answer(manager: RunManager, tenant: str, agent: str, task_id: str, text: str) -> Turn:
    """A person's answer to the calls a task waits on."""
    record = await owned_task(manager.store, tenant, agent, task_id)
    if record is None:
        raise TaskNotFoundError
    state = STATE[record.status]
    if record.status != "awaiting_approval":
        name = TaskState.Name(state)
        why = "it has ended" if state in TERMINAL else "it is not waiting for input"
        raise UnsupportedOperationError(message=f"task {task_id} is {name}: {why}")
    calls = waiting_call_ids((await read_text(manager.store, record.run_id, until=record.last_seq)).calls)
    words = text.strip().split()
    if words and words[0].lower().strip(".!,") in APPROVING:
        approved, rejected = list(calls), {}
    else:
        approved, rejected = [], dict.fromkeys(calls, text.strip()[:1000])
    try:
        await manager.approve(record, approved=approved, rejected=rejected)
    except (NotAwaitingApproval, InvalidDecisions) as exc:
        raise UnsupportedOperationError(message=str(exc)) from None
    current = await manager.store.get(tenant, record.run_id)
    return Turn(current or record, record.last_seq)


async def wait_for_turn(store: RunStore, run_id: str, after: int, *, within: float | None = None) -> None:
    """Until the run writes the ``done`` chunk that ends the turn after ``after`` (its end or a wait
    for approval), or ``within`` seconds pass."""
    with contextlib.suppress(TimeoutError, ChunksExpired):
        async with asyncio.timeout(within):
            batches = store.read_batches(run_id, after=after)
            try:
                async for batch in batches:
                    if any(entry.terminal for entry in batch):
                        return
            finally:
                with contextlib.suppress(Exception):
                    await batches.aclose()  # type: ignore[attr-defined]


__all__ = ["APPROVING", "MAX_CONTEXT_ID", "Turn", "take_message", "wait_for_turn"]
