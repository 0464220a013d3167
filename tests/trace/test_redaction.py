"""Redactors (DESIGN principle 5): API keys, bearer tokens and credential fields never reach a trace;
``drop_payloads`` keeps only allow-listed, content-free fields; ``chain`` composes. The masking rule
itself is tested in ``tests/test_secrets.py``."""

from __future__ import annotations

import dataclasses
import json
import logging
from pathlib import Path

import pytest

from kanawa.secrets import MASK
from kanawa.trace.config import jsonl_path, tracer_from_env
from kanawa.trace.events import TraceEvent, Tracer
from kanawa.trace.memory import InMemoryTraceSink
from kanawa.trace.redaction import chain, drop_payloads, redact_secrets

OPENAI_KEY = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWx0123456789"
ANTHROPIC_KEY = "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWx-0123456789"
GOOGLE_KEY = "AIzaSyA-1234567890abcdefghijklmnopqrstu"
BEARER = "Bearer eyJhbGciOiJIUzI1NiJ9.payload.signature"


def test_redact_secrets_masks_result_error_and_nested_data() -> None:
    event = TraceEvent(
        "tool_end",
        "s",
        "a",
        result={"headers": {"Authorization": BEARER}, "items": [f"key={GOOGLE_KEY}"], "max_tokens": 5},
        error=f"401 for {OPENAI_KEY}",
        data={"arguments": json.dumps({"api_key": "plain-looking-value", "q": "weather"}), "password": 1234},
    )
    out = redact_secrets(event)
    assert out.result == {"headers": {"Authorization": MASK}, "items": [f"key={MASK}"], "max_tokens": 5}
    assert out.error == f"401 for {MASK}"
    assert json.loads(str(out.data["arguments"])) == {"api_key": MASK, "q": "weather"}
    assert out.data["password"] == MASK


def test_redact_secrets_returns_clean_events_unchanged() -> None:
    event = TraceEvent("tool_end", "s", "a", result={"value": 42}, data={"arguments": '{"x": 1}'})
    assert redact_secrets(event) is event


def test_drop_payloads_keeps_only_allow_listed_content_free_fields() -> None:
    event = TraceEvent(
        "tool_end",
        "s",
        "a",
        tool="t",
        call_id="call_1",
        duration_ms=3.0,
        result={"x": 1},
        error="ValueError: the essay says MARKER",
        data={
            "arguments": "{}",
            "stop_reason": "tool_use",
            "error_kind": "execution_error",
            "quoted": "MARKER",
            "termination_reason": {"nested": "MARKER"},
        },
    )
    out = drop_payloads(event)
    assert out.result is None
    assert out.error == MASK
    assert out.data == {"stop_reason": "tool_use", "error_kind": "execution_error"}
    assert (out.tool, out.call_id, out.duration_ms) == ("t", "call_1", 3.0)


def test_drop_payloads_carries_every_other_field_over() -> None:
    """drop_payloads builds its event field by field: a field added to TraceEvent must be carried
    over too (or listed here as one it drops), never silently reset to its default."""
    dropped = {"result", "error", "data", "tool", "call_id"}
    values: dict[str, object] = {
        "time": 1234.5,
        "run_id": "r1",
        "step": 3,
        "model": "m",
        "tok_prompt": 5,
        "tok_completion": 7,
        "duration_ms": 9.5,
    }
    keyword = {f.name for f in dataclasses.fields(TraceEvent) if f.kw_only}
    assert keyword - dropped == set(values), "a new TraceEvent field: carry it over in drop_payloads"
    event = TraceEvent("llm_end", "s", "a", tool="t", call_id="c", **values)  # type: ignore[arg-type]
    out = drop_payloads(event)
    assert (out.event, out.session, out.agent) == ("llm_end", "s", "a")
    assert {name: getattr(out, name) for name in values} == values


def test_drop_payloads_masks_tool_names_and_ids_that_are_not_identifiers() -> None:
    event = TraceEvent("tool_start", "s", "a", tool="tell me about MARKER", call_id="id with spaces")
    out = drop_payloads(event)
    assert (out.tool, out.call_id) == (MASK, MASK)
    assert drop_payloads(TraceEvent("tool_start", "s", "a", tool="web.search-2", call_id="c:1")).tool == (
        "web.search-2"
    )


def test_chain_applies_in_order_and_stops_at_a_drop() -> None:
    seen: list[str] = []

    def first(e: TraceEvent) -> TraceEvent | None:
        seen.append("first")
        return None if e.tool == "secret_tool" else e

    def second(e: TraceEvent) -> TraceEvent | None:
        seen.append("second")
        return e

    redactor = chain(first, second)
    assert redactor(TraceEvent("tool_end", "s", "a", tool="secret_tool")) is None
    assert seen == ["first"]
    assert redactor(TraceEvent("tool_end", "s", "a", tool="ok")) is not None


async def test_an_api_key_never_reaches_the_trace_file(tmp_path: Path) -> None:
    tracer = tracer_from_env(session="sess", environ={"KANAWA_TRACE_DIR": str(tmp_path)})
    tracer.emit(
        TraceEvent(
            "tool_start",
            "sess",
            "agent",
            tool="http_get",
            data={"arguments": json.dumps({"url": "https://x", "headers": {"Authorization": BEARER}})},
        )
    )
    tracer.emit(TraceEvent("tool_end", "sess", "agent", tool="http_get", result={"echo": OPENAI_KEY}))
    tracer.emit(TraceEvent("llm_error", "sess", "agent", error=f"invalid x-api-key {ANTHROPIC_KEY}"))
    await tracer.aclose()
    path = jsonl_path(tracer)
    assert path is not None
    text = path.read_text(encoding="utf-8")
    assert len(text.splitlines()) == 3
    for secret in (OPENAI_KEY, ANTHROPIC_KEY, "eyJhbGciOiJIUzI1NiJ9"):
        assert secret not in text


async def test_a_raising_redactor_drops_the_event_and_never_breaks_the_run(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def broken(event: TraceEvent) -> TraceEvent | None:
        raise RuntimeError("bug in redactor")

    sink = InMemoryTraceSink()
    tracer = Tracer(sinks=[sink], redact=broken)
    with caplog.at_level(logging.WARNING, logger="kanawa.trace"):
        tracer.emit(TraceEvent("agent_start", "s", "a"))
        tracer.emit(TraceEvent("agent_end", "s", "a"))
    assert sink.events == []  # fail closed: an event that could not be redacted is not written
    assert len([r for r in caplog.records if "redactor" in r.getMessage()]) == 1
