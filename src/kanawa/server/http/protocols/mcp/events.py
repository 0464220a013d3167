"""What lets an MCP client that lost its stream mid-call pick it up again without losing a message.

The SDK numbers every message it sends on a session's SSE streams with the id the session's
:class:`SessionEvents` gives it (``id:`` of the SSE event), after a first "priming" event carrying
only an id. A client whose connection drops sends ``GET /mcp`` with ``Last-Event-ID``; the SDK asks
the session's events for the stream's messages after that id and sends them, then goes on with the
live ones — the official clients do this by themselves. Progress notifications and the call's result
are messages like any other, so a cut stream resumes at the next piece of the answer.

Each session sees only its own events. The SDK names a call's stream after the JSON-RPC id of the
request (``"1"``, ``"2"`` … in every session), so one store shared as is would mix sessions — and a
``Last-Event-ID`` of another session's stream would replay that session's progress and answer. Here
a stream is keyed by its session too, and an id of another session's event is looked up in the
requesting session only: it is answered exactly as an id that was never given out (nothing is
replayed). Sessions belong to one tenant (the SDK refuses a session id with another key), so a
tenant never reads another's events.

The log lives where the sessions do, in this process's memory (sessions are the SDK's, in memory
too; the runs themselves are the store's). It is bounded three ways: each stream keeps its last
:data:`STREAM_EVENTS` messages; all sessions together keep at most ``max_bytes`` of messages (as
sent: their JSON), the least recently written streams forgotten first (a single message larger
than the budget is not kept at all); and a session that ends
(``DELETE``, idle, evicted) frees its events at once (:meth:`McpEventLog.forget`). A message is kept
as its JSON, so the budget counts what it costs, and nothing holds the call's result objects.
"""

from __future__ import annotations

import secrets
from collections import OrderedDict, deque
from typing import Final

from mcp.server.streamable_http import EventCallback, EventId, EventMessage, EventStore, StreamId
from mcp_types import JSONRPCMessage, jsonrpc_message_adapter

STREAM_EVENTS: Final = 4096
"""Messages kept per stream: a call's progress and its result, with room to spare."""
EVENT_BYTES: Final = 64 * 1024 * 1024
"""The default of ``max_bytes``: messages kept over every session of the process (their JSON)."""

_Key = tuple[str, StreamId]
"""A stream as the log keys it: ``(session id, the SDK's stream id)``."""
_Event = tuple[EventId, bytes | None]
"""One kept message (its JSON; ``None`` for a priming event, which carries only its id)."""


class McpEventLog:
    """Every session's events in one bounded place (module docstring); a session's own view is
    :meth:`session`, the store the SDK's transport of that session is given."""

    def __init__(self, *, max_bytes: int = EVENT_BYTES, stream_events: int = STREAM_EVENTS) -> None:
        self.max_bytes = max_bytes
        self._stream_events = stream_events
        self._streams: OrderedDict[_Key, deque[_Event]] = OrderedDict()
        self._where: dict[EventId, _Key] = {}
        self._of_session: dict[str, set[_Key]] = {}
        self.bytes = 0
        """The JSON bytes of the messages kept now."""

    def session(self, session_id: str) -> SessionEvents:
        """The event store of session ``session_id``: it stores and replays that session's only."""
        return SessionEvents(self, session_id)

    def bytes_of(self, session_id: str) -> int:
        """The JSON bytes of the messages kept for session ``session_id``."""
        keys = self._of_session.get(session_id, ())
        return sum(len(data or b"") for key in keys for _, data in self._streams.get(key, ()))

    def forget(self, session_id: str) -> None:
        """Drop every event of a session that ended."""
        for key in self._of_session.pop(session_id, ()):
            self._drop(key)

    def store(self, session_id: str, stream_id: StreamId, message: JSONRPCMessage | None) -> EventId:
        event_id = secrets.token_hex(12)
        data = None if message is None else _json(message)
        key = (session_id, stream_id)
        events = self._streams.get(key)
        if events is None:
            events = self._streams[key] = deque()
            self._of_session.setdefault(session_id, set()).add(key)
        else:
            self._streams.move_to_end(key)
        if len(events) >= self._stream_events:
            self._pop_oldest(events)
        events.append((event_id, data))
        self._where[event_id] = key
        self.bytes += len(data or b"")
        self._trim(key)
        return event_id

    def _trim(self, newest: _Key) -> None:
        """Within ``max_bytes``: forget the least recently written streams, then the oldest messages
        of the newest one — down to none: a message larger than the whole budget is sent, and not
        kept (a resume past it replays nothing)."""
        while self.bytes > self.max_bytes and len(self._streams) > 1:
            oldest = next(iter(self._streams))
            self._of_session.get(oldest[0], set()).discard(oldest)
            self._drop(oldest)
        events = self._streams.get(newest)
        while events and self.bytes > self.max_bytes:
            self._pop_oldest(events)

    def _pop_oldest(self, events: deque[_Event]) -> None:
        old_id, data = events.popleft()
        self._where.pop(old_id, None)
        self.bytes -= len(data or b"")

    def _drop(self, key: _Key) -> None:
        for event_id, data in self._streams.pop(key, ()):
            self._where.pop(event_id, None)
            self.bytes -= len(data or b"")

    async def replay(
        self, session_id: str, last_event_id: EventId, send_callback: EventCallback
    ) -> StreamId | None:
        key = self._where.get(last_event_id)
        if key is None or key[0] != session_id:  # never given out, forgotten, or another session's
            return None
        after = False
        for event_id, data in list(self._streams.get(key, ())):
            if after and data is not None:
                await send_callback(EventMessage(jsonrpc_message_adapter.validate_json(data), event_id))
            after = after or event_id == last_event_id
        return key[1]


def _json(message: JSONRPCMessage) -> bytes:
    """``message`` as the SDK sends it (an SSE event's ``data``)."""
    return message.model_dump_json(by_alias=True, exclude_unset=True).encode()


class SessionEvents(EventStore):
    """One session's part of the :class:`McpEventLog`: the SDK's :class:`EventStore` for that
    session's transport."""

    def __init__(self, log: McpEventLog, session_id: str) -> None:
        self._log = log
        self._session_id = session_id

    async def store_event(self, stream_id: StreamId, message: JSONRPCMessage | None) -> EventId:
        """Keep ``message`` as the next event of this session's ``stream_id`` and name it."""
        return self._log.store(self._session_id, stream_id, message)

    async def replay_events_after(
        self, last_event_id: EventId, send_callback: EventCallback
    ) -> StreamId | None:
        """Send the messages of ``last_event_id``'s stream that came after it; the stream's id, or
        ``None`` when the id names no event this session has kept."""
        return await self._log.replay(self._session_id, last_event_id, send_callback)


__all__ = ["EVENT_BYTES", "STREAM_EVENTS", "McpEventLog", "SessionEvents"]
