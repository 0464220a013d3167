"""JSONL line shape (seed 002 App. C): key order, ISO-8601 UTC time with milliseconds, omitted Nones,
and serialisation that never fails."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kanawa.trace.events import TraceEvent
from kanawa.trace.serialize import (
    dumps_record,
    event_to_line,
    event_to_record,
    iso_time,
    parse_iso_time,
    safe_repr,
)

APP_C_TIME = 1747973673.892  # 2025-05-23T04:14:33.892Z, the time in seed 002 App. C


def test_app_c_line_has_app_c_keys_in_app_c_order() -> None:
    event = TraceEvent(
        "tool_end",
        "f3a",
        "DraftAgent",
        time=APP_C_TIME,
        tool="generate_draft",
        tok_prompt=812,
        tok_completion=74,
        duration_ms=940,
        result={"new_text": "...", "change_map": []},
    )
    line = event_to_line(event)
    assert line == (
        '{"event":"tool_end","time":"2025-05-23T04:14:33.892Z","session":"f3a","agent":"DraftAgent",'
        '"tool":"generate_draft","tok_prompt":812,"tok_completion":74,"duration_ms":940,'
        '"result":{"new_text":"...","change_map":[]}}'
    )


def test_time_is_iso8601_utc_with_milliseconds_and_z() -> None:
    assert iso_time(APP_C_TIME) == "2025-05-23T04:14:33.892Z"
    assert iso_time(0) == "1970-01-01T00:00:00.000Z"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", iso_time(1_800_000_000.123456))


def test_parse_iso_time_inverts_iso_time() -> None:
    assert abs(parse_iso_time(iso_time(APP_C_TIME)) - APP_C_TIME) < 0.001
    assert parse_iso_time("1970-01-01T00:00:01") == 1.0  # naive means UTC


def test_none_fields_and_empty_run_id_and_data_are_omitted() -> None:
    record = event_to_record(TraceEvent("agent_start", "s", "a", time=0))
    assert list(record) == ["event", "time", "session", "agent"]


def test_loop_fields_follow_app_c_fields_when_set() -> None:
    event = TraceEvent(
        "llm_end",
        "s",
        "a",
        time=0,
        run_id="r1",
        step=2,
        call_id="c",
        model="gpt-5",
        tok_prompt=0,
        error="boom",
        data={"stop_reason": "end_turn"},
    )
    record = event_to_record(event)
    assert list(record) == [
        "event",
        "time",
        "session",
        "agent",
        "run_id",
        "step",
        "call_id",
        "model",
        "tok_prompt",
        "error",
        "data",
    ]
    assert record["tok_prompt"] == 0  # zero is a value, not "missing"


def test_unserialisable_values_become_truncated_repr_instead_of_failing() -> None:
    class Weird:
        def __repr__(self) -> str:
            return "W" * 1000

    cyclic: dict[str, object] = {}
    cyclic["self"] = cyclic
    record = event_to_record(TraceEvent("tool_end", "s", "a", time=0, result=None))
    record["result"] = {"obj": Weird(), "nan": float("nan"), "cycle": cyclic, "tuple": (1, 2)}  # type: ignore[dict-item]
    decoded = json.loads(dumps_record(record))
    assert decoded["result"]["obj"].startswith("WWW")
    assert len(decoded["result"]["obj"]) <= 200
    assert decoded["result"]["nan"] == "nan"
    assert decoded["result"]["tuple"] == [1, 2]
    assert isinstance(decoded["result"]["cycle"], dict)


def test_safe_repr_survives_a_raising_repr() -> None:
    class Broken:
        def __repr__(self) -> str:
            raise RuntimeError("no")

    assert safe_repr(Broken()) == "<unrepresentable Broken>"


def test_non_ascii_is_written_as_is() -> None:
    line = event_to_line(TraceEvent("tool_end", "s", "添削エージェント", time=0, result="金輪継ぎ"))
    assert "添削エージェント" in line
    assert "金輪継ぎ" in line


def _datetime_form(timestamp: float) -> str:
    moment = datetime.fromtimestamp(timestamp, UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


@given(st.floats(min_value=-62_000_000_000, max_value=250_000_000_000, allow_nan=False))
def test_iso_time_is_exactly_the_datetime_form(timestamp: float) -> None:
    """The fast path (the second's text cached, milliseconds formatted) never differs from datetime's
    own rounding and formatting, at second boundaries and around the epoch included."""
    expected = _datetime_form(timestamp)
    assert iso_time(timestamp) == expected


@pytest.mark.parametrize("timestamp", [0.9999995, 1.9999994999, -0.0000005, -1.5, 1_700_000_000.9999996])
def test_iso_time_rounds_to_the_microsecond_like_datetime(timestamp: float) -> None:
    expected = _datetime_form(timestamp)
    assert iso_time(timestamp) == expected
    assert iso_time(timestamp) == expected  # and again, from the cached second
