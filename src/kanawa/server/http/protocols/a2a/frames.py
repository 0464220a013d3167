"""A run's chunks as the A2A stream of ``SendStreamingMessage`` and ``SubscribeToTask``.

Each event is a JSON-RPC response whose ``result`` is a ``StreamResponse`` (``task``,
``artifactUpdate`` or ``statusUpdate``), one server-sent event each, with the chunk's seq as its
``id:`` (a client that sends it back as ``Last-Event-ID`` resumes right after it). The stream is a
:class:`~kanawa.server.http.event_stream.RunEventStream` like every protocol's, so while the client
keeps up the run's writer sends the frames itself (:mod:`kanawa.server.http.direct`).

The answer's text deltas are the events a stream has thousands of: their frames are a prefix and a
suffix built once per stream around the text as a JSON string. Every other event (the opening task,
the final status) is built as the SDK's own ``StreamResponse`` and serialised the way the SDK does.

The shapes are a :class:`Dialect`'s: :data:`CURRENT` is A2A 1.0's (``SendStreamingMessage``,
``SubscribeToTask``); :mod:`.compat03` gives A2A 0.3's (``message/stream``, ``tasks/resubscribe``)
from the same chunks, so both method sets stream through the one machinery.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Final, Protocol

from a2a.types.a2a_pb2 import StreamResponse, Task, TaskState, TaskStatus, TaskStatusUpdateEvent
from google.protobuf.json_format import MessageToDict

from kanawa.server.http.protocols.a2a.tasks import ARTIFACT_ID, TaskText, agent_message
from kanawa.server.http.protocols.framing import (
    ApprovalChunk,
    ChunkFraming,
    DoneChunk,
    ErrorChunk,
    FinalChunk,
    TextChunk,
)
from kanawa.server.http.protocols.run_parts import JSON, json_string
from kanawa.server.store.base import ChunksExpired

RpcId = str | int | None
"""A JSON-RPC request id (echoed in every event of its stream)."""
_START: Final = '}]},"append":false}}}'
"""The end of the answer's first text event (it creates the artifact)."""
_APPEND: Final = '}]},"append":true}}}'
"""The end of every later one (appended to the artifact)."""
_EXPIRED_CODE: Final = -32001
"""The A2A error code a stream whose chunks are gone ends with (``TaskNotFoundError``'s)."""


def rpc_envelope(rpc_id: RpcId) -> tuple[str, str]:
    """The text before and after a JSON-RPC response's ``result`` value for ``rpc_id``."""
    return '{"jsonrpc":"2.0","id":' + JSON.encode(rpc_id) + ',"result":', "}"


def event_json(rpc_id: RpcId, event: Task | TaskStatusUpdateEvent) -> str:
    """One event as the SDK serialises it: a ``StreamResponse`` in a JSON-RPC response."""
    wrapped = StreamResponse(task=event) if isinstance(event, Task) else StreamResponse(status_update=event)
    head, tail = rpc_envelope(rpc_id)
    return head + JSON.encode(MessageToDict(wrapped, preserving_proto_field_name=False)) + tail


class Dialect(Protocol):
    """The JSON one A2A version's stream events have (everything else about a stream is shared)."""

    def event(self, rpc_id: RpcId, event: Task | TaskStatusUpdateEvent) -> str:
        """The task or status event as one JSON-RPC response."""
        ...

    def text_frame(self, rpc_id: RpcId, task_id: str, context_id: str, *, append: bool) -> tuple[str, str]:
        """The JSON-RPC response of an answer text event, split around the text as a JSON string."""
        ...


class Current:
    """A2A 1.0's shapes: a ``StreamResponse`` as ``result`` (the module docstring)."""

    def event(self, rpc_id: RpcId, event: Task | TaskStatusUpdateEvent) -> str:
        return event_json(rpc_id, event)

    def text_frame(self, rpc_id: RpcId, task_id: str, context_id: str, *, append: bool) -> tuple[str, str]:
        head, _ = rpc_envelope(rpc_id)
        ids = '"taskId":' + json_string(task_id) + ',"contextId":' + json_string(context_id)
        artifact = '"artifact":{"artifactId":"' + ARTIFACT_ID + '","parts":[{"text":'
        return head + '{"artifactUpdate":{' + ids + "," + artifact, _APPEND if append else _START


CURRENT: Final = Current()
"""A2A 1.0's dialect."""


class TaskFraming(ChunkFraming[str]):
    """The frames of one task's stream (a :class:`~..framing.ChunkFraming`; its state: whether the
    answer's artifact exists yet, and what the chunks said so far for the final status, gathered by
    a :class:`~.tasks.TaskText`).

    ``opening`` is the first event (the task as the client should start from); ``answered`` says
    whether the artifact already has text (a snapshot with text, or a resume after a seq), so the
    next text is appended to it rather than starting it."""

    __slots__ = (
        "_append",
        "_context_id",
        "_dialect",
        "_next",
        "_opening",
        "_rpc_id",
        "_streamed",
        "_task_id",
        "_text",
    )

    def __init__(
        self,
        rpc_id: RpcId,
        task_id: str,
        context_id: str,
        *,
        opening: Task | None,
        answered: bool,
        dialect: Dialect = CURRENT,
    ) -> None:
        super().__init__()
        self._rpc_id = rpc_id
        self._task_id = task_id
        self._context_id = context_id
        self._opening = opening
        self._dialect = dialect
        self._text = TaskText()
        self._append = dialect.text_frame(rpc_id, task_id, context_id, append=True)
        self._next = (
            self._append if answered else dialect.text_frame(rpc_id, task_id, context_id, append=False)
        )
        """The head and tail of the next text event (the first one starts the artifact)."""
        self._streamed = answered
        """Whether the answer has text already (a model's ``final`` text is then not sent again)."""

    def opening(self) -> bytes:
        if self._opening is None:
            return b""
        return b"data: " + self._dialect.event(self._rpc_id, self._opening).encode() + b"\r\n\r\n"

    def more_text(self, text: str, seq: int) -> bytes | None:
        head, tail = self._next
        self._next = self._append
        self._streamed = True
        return f"id: {seq}\r\ndata: {head}{json_string(text)}{tail}\r\n\r\n".encode()

    def frames(self, seq: int, events: Sequence[str]) -> bytes:
        return "".join(events).encode()

    # the hooks: the answer's text, and what the final status says ---------------------------------

    def on_text(self, chunk: TextChunk) -> tuple[str, ...]:
        return (self._answer(chunk.seq, chunk.text),) if chunk.text else ()

    def on_final(self, chunk: FinalChunk) -> tuple[str, ...]:
        self._text.feed(chunk)
        if self._streamed or not self._text.final:
            return ()
        return (self._answer(chunk.seq, self._text.final),)  # a model that streamed no deltas: at once

    def on_error(self, chunk: ErrorChunk) -> Sequence[str]:
        return self._text.feed(chunk)  # the status message's reason (no answer text)

    def on_approval(self, chunk: ApprovalChunk) -> Sequence[str]:
        return self._text.feed(chunk)  # the calls the status lists (no answer text)

    def on_done(self, chunk: DoneChunk) -> tuple[str, ...]:
        self._text.feed(chunk)
        return (self._final(chunk.seq),)

    def _answer(self, seq: int, text: str) -> str:
        self._streamed = True
        head, tail = self._next
        self._next = self._append
        return f"id: {seq}\r\ndata: {head}{json_string(text)}{tail}\r\n\r\n"

    def _final(self, seq: int) -> str:
        state = self._text.state if self._text.state is not None else TaskState.TASK_STATE_COMPLETED
        status = TaskStatus(state=state)
        status.timestamp.FromSeconds(int(time.time()))
        note = self._text.status_note(state)
        if note:
            status.message.CopyFrom(agent_message(note, task_id=self._task_id, context_id=self._context_id))
        update = TaskStatusUpdateEvent(task_id=self._task_id, context_id=self._context_id, status=status)
        return f"id: {seq}\r\ndata: {self._dialect.event(self._rpc_id, update)}\r\n\r\n"

    def expired(self, exc: ChunksExpired) -> bytes:
        error = {"code": _EXPIRED_CODE, "message": f"this task's events are no longer kept ({exc})"}
        body = '{"jsonrpc":"2.0","id":' + JSON.encode(self._rpc_id) + ',"error":' + JSON.encode(error) + "}"
        return b"event: error\r\ndata: " + body.encode() + b"\r\n\r\n"


__all__ = ["CURRENT", "Current", "Dialect", "RpcId", "TaskFraming", "event_json", "rpc_envelope"]
