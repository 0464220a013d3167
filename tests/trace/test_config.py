"""tracer_from_env: KANAWA_TRACE / KANAWA_TRACE_DIR / KANAWA_TRACE_REDACT and per-session file names."""

from __future__ import annotations

from pathlib import Path

import pytest

from kanawa.trace.config import (
    DEFAULT_OTLP_CLOSE_TIMEOUT,
    DEFAULT_OTLP_TIMEOUT,
    DEFAULT_TRACE_DIR,
    TraceSettings,
    jsonl_path,
    tracer_from_env,
)
from kanawa.trace.events import TraceEvent
from kanawa.trace.memory import InMemoryTraceSink


def test_default_directory_is_dot_kanawa_traces_and_file_names_the_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    tracer = tracer_from_env(session="abc123", environ={})
    path = jsonl_path(tracer)
    assert path is not None
    assert path.parent == DEFAULT_TRACE_DIR == Path(".kanawa/traces")
    assert path.name.endswith("_abc123.jsonl")
    assert tracer.session == "abc123"


def test_trace_dir_is_always_a_directory_even_with_a_suffix(tmp_path: Path) -> None:
    tracer = tracer_from_env(session="s", environ={"KANAWA_TRACE_DIR": str(tmp_path / "traces.d")})
    path = jsonl_path(tracer)
    assert path is not None
    assert path.parent == tmp_path / "traces.d"
    assert path.name.endswith("_s.jsonl")


def test_kanawa_trace_dir_is_honoured(tmp_path: Path) -> None:
    tracer = tracer_from_env(session="s", environ={"KANAWA_TRACE_DIR": str(tmp_path / "elsewhere")})
    path = jsonl_path(tracer)
    assert path is not None
    assert path.parent == tmp_path / "elsewhere"


@pytest.mark.parametrize("value", ["0", "false", "OFF", "no"])
def test_kanawa_trace_0_disables_file_tracing(value: str) -> None:
    tracer = tracer_from_env(environ={"KANAWA_TRACE": value})
    assert not tracer.enabled
    assert jsonl_path(tracer) is None


def test_extra_sinks_are_kept_when_tracing_is_disabled_and_still_redacted() -> None:
    memory = InMemoryTraceSink()
    tracer = tracer_from_env(environ={"KANAWA_TRACE": "0"}, sinks=[memory])
    tracer.emit(TraceEvent("tool_end", tracer.session, "a", result="key sk-abcdefghijklmnopqrstuvwx"))
    assert memory.events[0].result == "key [REDACTED]"


def test_a_session_id_is_generated_when_none_is_given(tmp_path: Path) -> None:
    tracer = tracer_from_env(environ={"KANAWA_TRACE_DIR": str(tmp_path)})
    assert len(tracer.session) == 32
    path = jsonl_path(tracer)
    assert path is not None
    assert tracer.session in path.name


async def test_payloads_mode_drops_results(tmp_path: Path) -> None:
    memory = InMemoryTraceSink()
    tracer = tracer_from_env(environ={"KANAWA_TRACE": "0", "KANAWA_TRACE_REDACT": "payloads"}, sinks=[memory])
    tracer.emit(TraceEvent("tool_end", "s", "a", result={"private": "essay text"}))
    assert memory.events[0].result is None


def test_unknown_redaction_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="KANAWA_TRACE_REDACT"):
        TraceSettings.from_env({"KANAWA_TRACE_REDACT": "some"})


async def test_settings_object_overrides_the_environment(tmp_path: Path) -> None:
    """The environment says: tracing off, another directory, payloads redacted. The settings object
    says: on, ``tmp_path``, nothing redacted — and wins on all three."""
    environ = {
        "KANAWA_TRACE": "0",
        "KANAWA_TRACE_DIR": str(tmp_path / "from-env"),
        "KANAWA_TRACE_REDACT": "payloads",
    }
    settings = TraceSettings(directory=tmp_path, redact="none")
    tracer = tracer_from_env(session="s", settings=settings, environ=environ)
    path = jsonl_path(tracer)
    assert path is not None
    assert path.parent == tmp_path
    tracer.emit(TraceEvent("tool_end", "s", "a", result={"private": "essay text"}))
    await tracer.aclose()
    assert "essay text" in path.read_text(encoding="utf-8")
    assert not (tmp_path / "from-env").exists()


def test_otlp_timeouts_default_to_the_documented_values_and_read_the_environment() -> None:
    defaults = TraceSettings.from_env({})
    assert (defaults.otlp_timeout, defaults.otlp_close_timeout) == (5.0, 1.0)
    assert (DEFAULT_OTLP_TIMEOUT, DEFAULT_OTLP_CLOSE_TIMEOUT) == (5.0, 1.0)
    tuned = TraceSettings.from_env(
        {"KANAWA_TRACE_OTLP_TIMEOUT": "2.5", "KANAWA_TRACE_OTLP_CLOSE_TIMEOUT": "0.25"}
    )
    assert (tuned.otlp_timeout, tuned.otlp_close_timeout) == (2.5, 0.25)


@pytest.mark.parametrize("value", ["0", "-1", "soon", "nan", "inf"])
def test_an_otlp_timeout_that_is_not_a_positive_number_is_refused(value: str) -> None:
    with pytest.raises(ValueError, match="KANAWA_TRACE_OTLP_CLOSE_TIMEOUT must be a"):
        TraceSettings.from_env({"KANAWA_TRACE_OTLP_CLOSE_TIMEOUT": value})
