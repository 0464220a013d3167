"""Building the default tracer from configuration (keyword arguments, then ``KANAWA_*`` variables).

Environment:

* ``KANAWA_TRACE`` — ``0``/``false``/``off``/``no`` disables tracing (default: on);
* ``KANAWA_TRACE_DIR`` — where JSONL traces go (default ``./.kanawa/traces``), one file per session;
* ``KANAWA_TRACE_REDACT`` — ``secrets`` (default: everything :mod:`kanawa.loop.tracing` records, with
  API keys and credentials masked), ``payloads`` (also keep only the allow-listed, content-free fields:
  no tool results, no error text) or ``none``. Provider error messages are masked at their source
  (:mod:`kanawa.secrets`) whatever the mode.
* ``TRACE_OTLP_ENDPOINT`` (seed 002 §3-6) — also export spans over OTLP/HTTP to this collector
  (:class:`~kanawa.trace.otel.OtelTraceSink`, needs the ``otel`` extra), whether or not JSONL is on.

Nothing in the loop knows about files: it receives a :class:`~kanawa.trace.events.Tracer` and emits.
Other exporters (OpenTelemetry) are further :class:`~kanawa.trace.events.TraceSink` objects added here.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import KW_ONLY, dataclass
from pathlib import Path
from typing import Final, Literal, TypeAlias, assert_never

from kanawa.trace.events import Redactor, Tracer, TraceSink
from kanawa.trace.jsonl import DEFAULT_BATCH_SIZE, DEFAULT_FLUSH_INTERVAL, JsonlTraceSink, trace_file_name
from kanawa.trace.redaction import chain, drop_payloads, redact_secrets

DEFAULT_TRACE_DIR: Final = Path(".kanawa") / "traces"
_OFF: Final = frozenset({"0", "false", "off", "no"})

RedactMode: TypeAlias = Literal["secrets", "payloads", "none"]


@dataclass(frozen=True, slots=True)
class TraceSettings:
    """Where and whether to write JSONL traces, and how to redact them."""

    _: KW_ONLY
    enabled: bool = True
    directory: Path = DEFAULT_TRACE_DIR
    redact: RedactMode = "secrets"
    batch_size: int = DEFAULT_BATCH_SIZE
    flush_interval: float = DEFAULT_FLUSH_INTERVAL
    otlp_endpoint: str | None = None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> TraceSettings:
        """Read ``KANAWA_TRACE``, ``KANAWA_TRACE_DIR`` and ``KANAWA_TRACE_REDACT``.

        An unknown redaction mode raises :class:`ValueError` (silently writing secrets is worse than
        refusing to start).
        """
        env = os.environ if environ is None else environ
        enabled = env.get("KANAWA_TRACE", "1").strip().lower() not in _OFF
        directory = trace_directory(env)
        mode = env.get("KANAWA_TRACE_REDACT", "secrets").strip().lower() or "secrets"
        if mode == "secrets":
            redact: RedactMode = "secrets"
        elif mode == "payloads":
            redact = "payloads"
        elif mode == "none":
            redact = "none"
        else:
            raise ValueError(f"KANAWA_TRACE_REDACT must be secrets, payloads or none (got {mode!r})")
        otlp = env.get("TRACE_OTLP_ENDPOINT", "").strip() or None
        return cls(enabled=enabled, directory=directory, redact=redact, otlp_endpoint=otlp)


def trace_directory(environ: Mapping[str, str] | None = None) -> Path:
    """``KANAWA_TRACE_DIR`` or :data:`DEFAULT_TRACE_DIR` — where traces are written and looked for."""
    env = os.environ if environ is None else environ
    return Path(env.get("KANAWA_TRACE_DIR", "").strip() or DEFAULT_TRACE_DIR)


def redactor_for(mode: RedactMode) -> Redactor | None:
    """The redactor a :data:`RedactMode` stands for."""
    if mode == "secrets":
        return redact_secrets
    elif mode == "payloads":
        return chain(redact_secrets, drop_payloads)
    elif mode == "none":
        return None
    else:
        assert_never(mode)


def tracer_from_env(
    *,
    session: str | None = None,
    settings: TraceSettings | None = None,
    sinks: Sequence[TraceSink] = (),
    environ: Mapping[str, str] | None = None,
) -> Tracer:
    """The default tracer: a :class:`JsonlTraceSink` in the trace directory (file named after the
    session), an :class:`~kanawa.trace.otel.OtelTraceSink` when an OTLP endpoint is configured (its own
    exporter, shut down by ``tracer.aclose()``), plus any extra ``sinks``, behind the configured redactor.

    With tracing disabled the tracer has only the extra ``sinks`` (none: a no-op tracer). Find the
    file via :func:`jsonl_path`.
    """
    config = settings if settings is not None else TraceSettings.from_env(environ)
    session_id = session or uuid.uuid4().hex
    all_sinks = list(sinks)
    if config.enabled:
        jsonl = JsonlTraceSink(
            config.directory / trace_file_name(session_id),
            session=session_id,
            batch_size=config.batch_size,
            flush_interval=config.flush_interval,
        )
        all_sinks.insert(0, jsonl)
    if config.otlp_endpoint is not None:
        from kanawa.trace.otel import OtelTraceSink

        all_sinks.append(OtelTraceSink(endpoint=config.otlp_endpoint))
    return Tracer(sinks=all_sinks, session=session_id, redact=redactor_for(config.redact))


def jsonl_path(tracer: Tracer) -> Path | None:
    """The file the tracer's first JSONL sink writes to, or ``None`` when it has none."""
    for sink in tracer.sinks:
        if isinstance(sink, JsonlTraceSink):
            return sink.path
    return None


__all__ = [
    "DEFAULT_TRACE_DIR",
    "TraceSettings",
    "jsonl_path",
    "redactor_for",
    "trace_directory",
    "tracer_from_env",
]
