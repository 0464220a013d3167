"""InMemoryTraceSink keeps events in order and shows the records a JSONL sink would write."""

from __future__ import annotations

from kanawa.trace.events import TraceEvent, Tracer
from kanawa.trace.memory import InMemoryTraceSink


async def test_keeps_events_in_order_and_filters_by_name() -> None:
    sink = InMemoryTraceSink()
    tracer = Tracer(sinks=[sink], session="s")
    for name in ("agent_start", "tool_start", "tool_end", "agent_end"):
        tracer.emit(TraceEvent(name, "s", "a", time=0))
    assert [e.event for e in sink.named("tool_start", "tool_end")] == ["tool_start", "tool_end"]
    assert len(sink) == 4
    assert sink.records()[0] == {
        "event": "agent_start",
        "time": "1970-01-01T00:00:00.000Z",
        "session": "s",
        "agent": "a",
    }
    await tracer.aclose()
    assert sink.closed


def test_a_failing_sink_does_not_stop_the_others() -> None:
    class Broken:
        def emit(self, event: TraceEvent) -> None:
            raise OSError("disk gone")

        async def aclose(self) -> None:
            return None

    good = InMemoryTraceSink()
    tracer = Tracer(sinks=[Broken(), good])
    tracer.emit(TraceEvent("agent_start", "s", "a"))
    assert len(good) == 1


def test_tracer_without_sinks_is_disabled_and_cheap() -> None:
    tracer = Tracer()
    assert not tracer.enabled
    tracer.emit(TraceEvent("agent_start", "s", "a"))
    assert tracer.sinks == ()
