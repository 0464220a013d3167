"""Redactors (DESIGN principle 5): API keys, bearer tokens and credential fields never reach a trace;
``drop_payloads`` removes results and tool arguments; ``chain`` composes."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from kanawa.trace.config import jsonl_path, tracer_from_env
from kanawa.trace.events import TraceEvent, Tracer
from kanawa.trace.memory import InMemoryTraceSink
from kanawa.trace.redaction import MASK, chain, drop_payloads, is_secret_key, mask_text, redact_secrets

OPENAI_KEY = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWx0123456789"
ANTHROPIC_KEY = "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWx-0123456789"
GOOGLE_KEY = "AIzaSyA-1234567890abcdefghijklmnopqrstu"
BEARER = "Bearer eyJhbGciOiJIUzI1NiJ9.payload.signature"


@pytest.mark.parametrize("secret", [OPENAI_KEY, ANTHROPIC_KEY, GOOGLE_KEY, "sk-" + "a" * 48])
def test_key_shaped_values_are_masked_inside_text(secret: str) -> None:
    masked = mask_text(f"call failed with key {secret} (retry)")
    assert secret not in masked
    assert masked == f"call failed with key {MASK} (retry)"


def test_bearer_tokens_are_masked_keeping_the_scheme() -> None:
    assert mask_text(f"Authorization: {BEARER}") == f"Authorization: Bearer {MASK}"


def test_ordinary_text_is_left_alone() -> None:
    text = "ask-me anything; sk- is a prefix; Bearer tokens are short; tokens=12"
    assert mask_text(text) == text


@pytest.mark.parametrize(
    "key",
    [
        "api_key",
        "API-KEY",
        "x-api-key",
        "Authorization",
        "password",
        "client_secret",
        "token",
        "refresh_token",
    ],
)
def test_credential_named_keys_are_secret(key: str) -> None:
    assert is_secret_key(key)


@pytest.mark.parametrize(
    "key", ["max_tokens", "input_tokens", "tokens", "tool", "key_points", "secretary_name"]
)
def test_counts_and_ordinary_names_are_not_secret(key: str) -> None:
    assert not is_secret_key(key)


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


def test_drop_payloads_removes_results_and_tool_arguments() -> None:
    event = TraceEvent(
        "tool_end", "s", "a", tool="t", result={"x": 1}, data={"arguments": "{}", "stop_reason": "tool_use"}
    )
    out = drop_payloads(event)
    assert out.result is None
    assert out.data == {"stop_reason": "tool_use"}
    assert out.tool == "t"


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
    tracer = tracer_from_env("sess", environ={"KANAWA_TRACE_DIR": str(tmp_path)})
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
    tracer = Tracer([sink], redact=broken)
    with caplog.at_level(logging.WARNING, logger="kanawa.trace"):
        tracer.emit(TraceEvent("agent_start", "s", "a"))
        tracer.emit(TraceEvent("agent_end", "s", "a"))
    assert sink.events == []  # fail closed: an event that could not be redacted is not written
    assert len([r for r in caplog.records if "redactor" in r.getMessage()]) == 1
