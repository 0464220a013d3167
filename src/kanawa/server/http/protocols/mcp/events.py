"""What lets an MCP client that lost its stream mid-call pick it up again without losing a message.

The SDK numbers every message it sends on a session's SSE streams with the id :class:`McpEventLog`
gives it (``id:`` of the SSE event), after a first "priming" event carrying only an id. A client whose
connection drops sends ``GET /mcp`` with ``Last-Event-ID``; the SDK asks the log for the stream's
messages after that id and sends them, then goes on with the live ones — the official clients do this
by themselves. Progress notifications and the call's result are messages like any other, so a cut
stream resumes at the next piece of the answer.

The log is the session's companion and lives where the session does, in this process's memory
(sessions are the SDK's, in memory too; the runs themselves are the store's). It is bounded: each
stream keeps its last :data:`STREAM_EVENTS` messages and the log its last :data:`STREAMS` streams,
the oldest forgotten first. Event ids are random (a tenant cannot name another's), so the
``Last-Event-ID`` of a stream that is gone or was never this process's replays nothing.
"""

from __future__ import annotations

import secrets
from collections import OrderedDict, deque
from typing import Final

from mcp.server.streamable_http import EventCallback, EventId, EventMessage, EventStore, StreamId
from mcp_types import JSONRPCMessage

STREAM_EVENTS: Final = 4096
"""Messages kept per stream: a call's progress and its result, with room to spare."""
STREAMS: Final = 4096
"""Streams kept at once, over every session of the process."""


class McpEventLog(EventStore):
    """The SDK's :class:`EventStore`, in memory and bounded (module docstring)."""

    def __init__(self, *, stream_events: int = STREAM_EVENTS, streams: int = STREAMS) -> None:
        self._stream_events = stream_events
        self._max_streams = streams
        self._streams: OrderedDict[StreamId, deque[tuple[EventId, JSONRPCMessage | None]]] = OrderedDict()
        self._where: dict[EventId, StreamId] = {}

    async def store_event(self, stream_id: StreamId, message: JSONRPCMessage | None) -> EventId:
        """Keep ``message`` as the next event of ``stream_id`` and name it."""
        event_id = secrets.token_hex(12)
        events = self._streams.get(stream_id)
        if events is None:
            events = self._streams[stream_id] = deque()
            while len(self._streams) > self._max_streams:
                _, dropped = self._streams.popitem(last=False)
                for old_id, _ in dropped:
                    self._where.pop(old_id, None)
        else:
            self._streams.move_to_end(stream_id)
        if len(events) >= self._stream_events:
            old_id, _ = events.popleft()
            self._where.pop(old_id, None)
        events.append((event_id, message))
        self._where[event_id] = stream_id
        return event_id

    async def replay_events_after(
        self, last_event_id: EventId, send_callback: EventCallback
    ) -> StreamId | None:
        """Send the messages of ``last_event_id``'s stream that came after it; the stream's id, or
        ``None`` when the id names no event kept here."""
        stream_id = self._where.get(last_event_id)
        if stream_id is None:
            return None
        after = False
        for event_id, message in list(self._streams.get(stream_id, ())):
            if after and message is not None:
                await send_callback(EventMessage(message, event_id))
            after = after or event_id == last_event_id
        return stream_id


__all__ = ["STREAMS", "STREAM_EVENTS", "McpEventLog"]
