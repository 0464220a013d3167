"""`TraceEvent`'s written-out ``__init__`` keeps the dataclass's contract: the same parameters in
field order, the same defaults, a frozen object, and ``dataclasses.replace`` still works (redaction
relies on it)."""

from __future__ import annotations

import dataclasses
import inspect
import time

import pytest

from kanawa.trace.events import TraceEvent, new_trace_id


def test_the_init_takes_every_field_in_order_and_nothing_else() -> None:
    parameters = inspect.signature(TraceEvent).parameters
    assert list(parameters) == [f.name for f in dataclasses.fields(TraceEvent)]
    positional = [p.name for p in parameters.values() if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
    assert positional == ["event", "session", "agent"]


def test_defaults_are_the_fields_defaults() -> None:
    before = time.time()
    event = TraceEvent("agent_start", "s", "a")
    assert before <= event.time <= time.time()
    for f in dataclasses.fields(TraceEvent):
        if f.default is not dataclasses.MISSING:
            assert getattr(event, f.name) == f.default, f.name
    assert event.data == {}
    assert TraceEvent("agent_start", "s", "a").data is not event.data  # a new dict each time


def test_every_argument_lands_in_its_field() -> None:
    values = {
        "time": 12.5,
        "run_id": "r",
        "step": 3,
        "tool": "search",
        "call_id": "c1",
        "model": "m",
        "tok_prompt": 7,
        "tok_completion": 9,
        "duration_ms": 1.25,
        "result": {"k": [1, 2]},
        "error": "boom",
        "data": {"x": 1},
    }
    event = TraceEvent("tool_end", "sess", "agent", **values)  # type: ignore[arg-type]
    assert (event.event, event.session, event.agent) == ("tool_end", "sess", "agent")
    for name, value in values.items():
        assert getattr(event, name) == value, name


def test_events_stay_frozen_and_replace_builds_a_new_one() -> None:
    event = TraceEvent("llm_end", "s", "a", step=1, data={"stop_reason": "stop"})
    with pytest.raises(dataclasses.FrozenInstanceError):
        event.step = 2  # type: ignore[misc]
    changed = dataclasses.replace(event, error="masked", data={})
    assert (changed.step, changed.time, changed.error, changed.data) == (1, event.time, "masked", {})
    assert event.error is None
    assert changed != event
    assert dataclasses.replace(event) == event


def test_trace_ids_look_like_uuid4_hex_and_do_not_repeat() -> None:
    import uuid

    ids = [new_trace_id() for _ in range(2000)]
    assert len(set(ids)) == len(ids)
    for value in ids[:200]:
        parsed = uuid.UUID(hex=value)
        assert parsed.hex == value
        assert parsed.version == 4
        assert parsed.variant == uuid.RFC_4122
