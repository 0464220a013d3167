"""A kanawa run seen as an A2A task: the task id is the run id, its state follows the run's status,
its one artifact (``answer``) is the text the served agent streamed.

The run's chunks are the only source (:mod:`kanawa.server.runs.chunks`), read here once for a
task's snapshot (``GetTask``, ``CancelTask``, the first event of ``SubscribeToTask``) and framed
one by one for a stream (:mod:`.frames`), so both agree on what the task holds: a snapshot taken
after seq *n* plus the stream's events after *n* is the whole task, nothing twice.

==========================  =======================================================
run status                  A2A task state
==========================  =======================================================
``running``                 ``TASK_STATE_WORKING``
``awaiting_approval``       ``TASK_STATE_INPUT_REQUIRED`` (the calls to decide in
                            the status message)
``awaiting_tool_output``    ``TASK_STATE_INPUT_REQUIRED``
``completed``               ``TASK_STATE_COMPLETED``
``failed``                  ``TASK_STATE_FAILED`` (the run's error in the message)
``cancelled``               ``TASK_STATE_CANCELED``
==========================  =======================================================
"""

from __future__ import annotations

import contextlib
import json
import re
import uuid
from collections.abc import Iterable, Sequence
from typing import Final

from a2a.types.a2a_pb2 import Artifact, Message, Part, Role, Task, TaskState, TaskStatus
from google.protobuf.json_format import MessageToDict

from kanawa.server.http.protocols.framing import (
    ApprovalChunk,
    ChunkHooks,
    DoneChunk,
    ErrorChunk,
    FinalChunk,
    TextChunk,
    typed_chunk,
)
from kanawa.server.store.base import ChunksExpired, RunRecord, RunStatus, RunStore

ARTIFACT_ID: Final = "answer"
"""The id (and name) of the one artifact of a task: the served agent's answer."""
TRUNCATED: Final = "kanawa/truncated"
"""The artifact metadata key set (``true``) when a list holds only the start of an answer."""
TASK_ID: Final = re.compile(r"^[0-9a-f]{32}$")
"""What a task id looks like (a run id); anything else names no task."""

STATE: Final[dict[RunStatus, TaskState]] = {
    "running": TaskState.TASK_STATE_WORKING,
    "awaiting_approval": TaskState.TASK_STATE_INPUT_REQUIRED,
    "awaiting_tool_output": TaskState.TASK_STATE_INPUT_REQUIRED,
    "completed": TaskState.TASK_STATE_COMPLETED,
    "failed": TaskState.TASK_STATE_FAILED,
    "cancelled": TaskState.TASK_STATE_CANCELED,
}
"""The task state of each run status (the module's table)."""
DONE_STATE: Final[dict[str, TaskState]] = {str(k): v for k, v in STATE.items()}
"""The same, keyed by the ``status`` a ``done`` chunk carries."""
TERMINAL: Final = frozenset(
    {TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_CANCELED}
)
"""Task states after which a task takes no message and streams nothing more."""


def context_of(record: RunRecord) -> str:
    """A task's context id: the run's session id (the client's ``contextId``), else the run id."""
    return record.session_id or record.run_id


def agent_message(text: str, *, task_id: str, context_id: str) -> Message:
    """A status message from the agent (a failure's reason, the calls waiting for approval)."""
    return Message(
        message_id=uuid.uuid4().hex,
        role=Role.ROLE_AGENT,
        parts=[Part(text=text)],
        task_id=task_id,
        context_id=context_id,
    )


def approval_text(calls: object) -> str:
    """What an ``input-required`` status says: the calls waiting, and how to answer them."""
    listed = []
    for call in calls if isinstance(calls, list) else []:
        if isinstance(call, dict):
            listed.append(f"{call.get('name')}({call.get('arguments')}) [{call.get('id')}]")
    return (
        "Waiting for approval of: " + ", ".join(listed) + ". Answer with a message on this task: "
        '"approve" runs them, anything else rejects them with your words as the reason.'
    )


class TaskText(ChunkHooks[str]):
    """What a task's chunks say (a :class:`~..framing.ChunkHooks` whose hooks give the answer text
    a chunk adds), gathered in order: the answer's text, the run's error, the calls
    waiting for approval, and the state of the last ``done`` chunk.

    With ``limit``, the answer keeps its first ``limit`` characters only (``truncated`` tells that
    more was said): a list of tasks holds a bounded part of each answer, never the whole of it."""

    __slots__ = ("answer", "calls", "error", "final", "kept", "limit", "needs_rest", "state", "truncated")

    def __init__(self, *, limit: int | None = None, needs_rest: bool = True) -> None:
        self.answer: list[str] = []
        self.final = ""
        self.error = ""
        self.calls: object = None
        self.state: TaskState | None = None
        self.limit = limit
        self.kept = 0
        self.truncated = False
        self.needs_rest = needs_rest
        """What the chunks after a cut answer say is wanted (a failure's error, the calls waiting)."""

    def _keep(self, text: str) -> str:
        """``text`` as far as the ``limit`` leaves room for it."""
        if self.limit is not None and self.kept + len(text) > self.limit:
            text = text[: max(self.limit - self.kept, 0)]
            self.truncated = True
        self.kept += len(text)
        return text

    def on_text(self, chunk: TextChunk) -> tuple[str, ...]:
        kept = self._keep(chunk.text) if chunk.text else ""
        if kept:
            self.answer.append(kept)
            return (kept,)
        return ()

    def on_final(self, chunk: FinalChunk) -> tuple[str, ...]:
        self.final = chunk.text
        if self.limit is not None and len(self.final) > self.limit:
            self.final, self.truncated = self.final[: self.limit], True
        return ()

    def on_error(self, chunk: ErrorChunk) -> tuple[str, ...]:
        self.error = str(chunk.data.get("message") or chunk.data.get("code") or "the run failed")
        return ()

    def on_approval(self, chunk: ApprovalChunk) -> tuple[str, ...]:
        self.calls = chunk.calls
        return ()

    def on_done(self, chunk: DoneChunk) -> tuple[str, ...]:
        self.state = DONE_STATE.get(chunk.status, TaskState.TASK_STATE_COMPLETED)
        return ()

    def text(self) -> str:
        """The answer: its streamed deltas, or the final text of a model that streamed none."""
        return "".join(self.answer) or self.final

    def status_note(self, state: TaskState) -> str:
        """The status message's text for ``state`` (empty: no message)."""
        if state == TaskState.TASK_STATE_FAILED:
            return self.error or "the run failed"
        if state == TaskState.TASK_STATE_INPUT_REQUIRED:
            return approval_text(self.calls)
        return ""


def build_task(record: RunRecord, text: TaskText) -> Task:
    """The task ``record``'s run is, with what its chunks said (``text``)."""
    state = STATE[record.status]
    if state == TaskState.TASK_STATE_WORKING and text.state in TERMINAL:
        # a record read before the run ended, its chunks after: the ``done`` chunk is the truth (an
        # earlier ``input-required`` one is not: the run went on after it)
        state = text.state
    context_id = context_of(record)
    status = TaskStatus(state=state)
    status.timestamp.FromSeconds(int(record.updated))
    note = text.status_note(state)
    if note:
        status.message.CopyFrom(agent_message(note, task_id=record.run_id, context_id=context_id))
    task = Task(id=record.run_id, context_id=context_id, status=status)
    answer = text.text()
    if answer:
        artifact = Artifact(artifact_id=ARTIFACT_ID, name=ARTIFACT_ID, parts=[Part(text=answer)])
        if text.truncated:
            artifact.metadata[TRUNCATED] = True
        task.artifacts.append(artifact)
    return task


async def read_text(store: RunStore, run_id: str, *, until: int, text: TaskText | None = None) -> TaskText:
    """What the run's stored chunks up to seq ``until`` say (whatever is kept of them), gathered in
    ``text`` (a new one by default). A store's reading ends at a ``done`` chunk, and a run that
    waited for approval has one in the middle: the chunks are read part after part. A ``text`` with
    limit stops the reading once its answer is cut, unless it ``needs_rest`` (a failed run's error,
    the calls an approval waits on: what the status says comes after the answer)."""
    text = TaskText() if text is None else text
    after = 0
    while after < until:
        batches = store.read_batches(run_id, after=after)
        start = after
        try:
            async for batch in batches:
                for entry in batch:
                    text.feed(typed_chunk(entry))
                    after = entry.seq
                    if entry.seq >= until or (text.truncated and not text.needs_rest):
                        return text
        except ChunksExpired:
            return text
        finally:
            with contextlib.suppress(Exception):
                await batches.aclose()  # type: ignore[attr-defined]
        if after == start:  # nothing more is stored
            return text
    return text


async def owned_task(store: RunStore, tenant: str, agent: str, task_id: str) -> RunRecord | None:
    """The run behind ``task_id`` when it is ``tenant``'s run of ``agent``; ``None`` otherwise —
    another tenant's task, another agent's, a malformed id and a missing one are the same answer."""
    if not TASK_ID.match(task_id):
        return None
    record = await store.get(tenant, task_id)
    if record is None or record.agent != agent:
        return None
    return record


async def snapshot(store: RunStore, record: RunRecord) -> Task:
    """The task as its stored chunks up to ``record.last_seq`` make it."""
    return build_task(record, await read_text(store, record.run_id, until=record.last_seq))


def message_text(parts: Iterable[Part]) -> str:
    """A message's text for the run: its text parts, and its data parts as JSON."""
    pieces: list[str] = []
    for part in parts:
        if part.HasField("text"):
            pieces.append(part.text)
        elif part.HasField("data"):
            pieces.append(json.dumps(MessageToDict(part.data), ensure_ascii=False))
    return "\n".join(piece for piece in pieces if piece)


def waiting_call_ids(calls: object) -> Sequence[str]:
    """The ids of the calls an ``approval_required`` chunk lists."""
    if not isinstance(calls, list):
        return ()
    return [str(call["id"]) for call in calls if isinstance(call, dict) and "id" in call]


__all__ = [
    "ARTIFACT_ID",
    "DONE_STATE",
    "STATE",
    "TASK_ID",
    "TERMINAL",
    "TRUNCATED",
    "TaskText",
    "agent_message",
    "approval_text",
    "build_task",
    "context_of",
    "message_text",
    "owned_task",
    "read_text",
    "snapshot",
    "waiting_call_ids",
]
