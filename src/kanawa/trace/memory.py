"""An in-memory trace sink, for tests and for the CLI (which renders a run's events after it ends)."""

from __future__ import annotations

from kanawa.trace.events import EventName, TraceEvent
from kanawa.trace.serialize import event_to_record
from kanawa.types import JsonValue


class InMemoryTraceSink:
    """Keeps every event in :attr:`events`, in emission order. ``emit`` is a list append.

    ``records()`` gives the exact JSON objects a :class:`~kanawa.trace.jsonl.JsonlTraceSink` would
    write, so a test can assert on the App. C shape without touching the file system.
    """

    def __init__(self) -> None:
        self.events: list[TraceEvent] = []
        self.closed = False

    def emit(self, event: TraceEvent) -> None:
        self.events.append(event)

    async def aclose(self) -> None:
        self.closed = True

    def close(self) -> None:
        self.closed = True

    def named(self, *names: EventName) -> list[TraceEvent]:
        """The events whose ``event`` is one of ``names``, in order."""
        return [e for e in self.events if e.event in names]

    def records(self) -> list[dict[str, JsonValue]]:
        return [event_to_record(e) for e in self.events]

    def clear(self) -> None:
        self.events.clear()

    def __len__(self) -> int:
        return len(self.events)


__all__ = ["InMemoryTraceSink"]
