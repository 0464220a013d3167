"""Building the default tracer from configuration (keyword arguments, then ``KANAWA_*`` variables).

Environment:

* ``KANAWA_TRACE`` — ``0``/``false``/``off``/``no`` disables tracing (default: on);
* ``KANAWA_TRACE_DIR`` — where JSONL traces go (default ``./.kanawa/traces``), one file per session;
* ``KANAWA_TRACE_REDACT`` — ``secrets`` (default: everything :mod:`kanawa.loop.tracing` records, with
  API keys and credentials masked), ``payloads`` (also keep only the allow-listed, content-free fields:
  no tool results, no error text) or ``none``. Provider error messages are masked at their source
  (:mod:`kanawa.secrets`) whatever the mode.
* ``TRACE_OTLP_ENDPOINT`` (seed 002 §3-6) — also export spans over OTLP/HTTP to this collector
  (:class:`~kanawa.trace.otel.OtelTraceSink`, needs the ``otel`` extra), whether or not JSONL is on;
* ``KANAWA_TRACE_OTLP_TIMEOUT`` — seconds one export to the collector may take, retries included
  (default 5; exports run in the background and never hold up a run);
* ``KANAWA_TRACE_OTLP_CLOSE_TIMEOUT`` — seconds closing the tracer (a CLI command's exit, a server's
  shutdown) waits for the last spans to reach the collector (default 1). Past it the export under way
  is abandoned and its retries cancelled, so an unreachable or silent collector never delays an exit
  by more than this.

Nothing in the loop knows about files: it receives a :class:`~kanawa.trace.events.Tracer` and emits.
Other exporters (OpenTelemetry) are further :class:`~kanawa.trace.events.TraceSink` objects added here.
"""

from __future__ import annotations

import math
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
DEFAULT_OTLP_TIMEOUT: Final = 5.0
"""``KANAWA_TRACE_OTLP_TIMEOUT``: seconds per export, retries included."""
DEFAULT_OTLP_CLOSE_TIMEOUT: Final = 1.0
"""``KANAWA_TRACE_OTLP_CLOSE_TIMEOUT``: the most closing the tracer waits for its last spans."""
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
    otlp_timeout: float = DEFAULT_OTLP_TIMEOUT
    otlp_close_timeout: float = DEFAULT_OTLP_CLOSE_TIMEOUT

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> TraceSettings:
        """Read ``KANAWA_TRACE``, ``KANAWA_TRACE_DIR``, ``KANAWA_TRACE_REDACT``, ``TRACE_OTLP_ENDPOINT``
        and the two ``KANAWA_TRACE_OTLP_*`` timeouts.

        An unknown redaction mode raises :class:`ValueError` (silently writing secrets is worse than
        refusing to start), and so does a timeout that is not a positive number of seconds.
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
        return cls(
            enabled=enabled,
            directory=directory,
            redact=redact,
            otlp_endpoint=otlp,
            otlp_timeout=_seconds(env, "KANAWA_TRACE_OTLP_TIMEOUT", DEFAULT_OTLP_TIMEOUT),
            otlp_close_timeout=_seconds(env, "KANAWA_TRACE_OTLP_CLOSE_TIMEOUT", DEFAULT_OTLP_CLOSE_TIMEOUT),
        )


def _seconds(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{name} must be a number of seconds, not {raw!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a positive number of seconds, not {raw!r}")
    return value


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

        all_sinks.append(
            OtelTraceSink(
                endpoint=config.otlp_endpoint,
                export_timeout=config.otlp_timeout,
                close_timeout=config.otlp_close_timeout,
            )
        )
    return Tracer(sinks=all_sinks, session=session_id, redact=redactor_for(config.redact))


def jsonl_path(tracer: Tracer) -> Path | None:
    """The file the tracer's first JSONL sink writes to, or ``None`` when it has none."""
    for sink in tracer.sinks:
        if isinstance(sink, JsonlTraceSink):
            return sink.path
    return None


__all__ = [
    "DEFAULT_OTLP_CLOSE_TIMEOUT",
    "DEFAULT_OTLP_TIMEOUT",
    "DEFAULT_TRACE_DIR",
    "TraceSettings",
    "jsonl_path",
    "redactor_for",
    "trace_directory",
    "tracer_from_env",
]
