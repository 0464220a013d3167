"""Tracing (seed 002 §3-6, App. C): events, the tracer, sinks, redaction and the timeline model.

The loop only knows :class:`Tracer` and :class:`TraceEvent`; where events go is decided by the sinks
given to the tracer — :class:`JsonlTraceSink` (files), :class:`InMemoryTraceSink` (tests), and any
object with ``emit``/``aclose`` (the :class:`TraceSink` protocol), such as :class:`OtelTraceSink`
(OpenTelemetry GenAI spans over OTLP, on with ``TRACE_OTLP_ENDPOINT``).
:func:`tracer_from_env` builds the default one from ``KANAWA_TRACE*`` settings.

Names are loaded on first use, so the loop importing :mod:`kanawa.trace.events` pays for nothing else.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kanawa._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "EventName": "kanawa.trace.events",
    "Redactor": "kanawa.trace.events",
    "TraceEvent": "kanawa.trace.events",
    "TraceSink": "kanawa.trace.events",
    "Tracer": "kanawa.trace.events",
    "TraceSettings": "kanawa.trace.config",
    "jsonl_path": "kanawa.trace.config",
    "tracer_from_env": "kanawa.trace.config",
    "JsonlTraceSink": "kanawa.trace.jsonl",
    "InMemoryTraceSink": "kanawa.trace.memory",
    "TraceFileError": "kanawa.trace.records",
    "TraceLog": "kanawa.trace.records",
    "TraceRecord": "kanawa.trace.records",
    "read_trace": "kanawa.trace.records",
    "chain": "kanawa.trace.redaction",
    "drop_payloads": "kanawa.trace.redaction",
    "redact_secrets": "kanawa.trace.redaction",
    "event_to_record": "kanawa.trace.serialize",
    "Timeline": "kanawa.trace.timeline",
    "OtelTraceSink": "kanawa.trace.otel",
    "TraceParent": "kanawa.trace.context",
    "current_parent": "kanawa.trace.context",
    "tool_call_scope": "kanawa.trace.context",
    "build_timeline": "kanawa.trace.timeline",
}

if TYPE_CHECKING:
    from kanawa.trace.config import TraceSettings, jsonl_path, tracer_from_env
    from kanawa.trace.context import TraceParent, current_parent, tool_call_scope
    from kanawa.trace.events import EventName, Redactor, TraceEvent, Tracer, TraceSink
    from kanawa.trace.jsonl import JsonlTraceSink
    from kanawa.trace.memory import InMemoryTraceSink
    from kanawa.trace.otel import OtelTraceSink
    from kanawa.trace.records import TraceFileError, TraceLog, TraceRecord, read_trace
    from kanawa.trace.redaction import chain, drop_payloads, redact_secrets
    from kanawa.trace.serialize import event_to_record
    from kanawa.trace.timeline import Timeline, build_timeline


__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)


__all__ = [
    "EventName",
    "InMemoryTraceSink",
    "JsonlTraceSink",
    "OtelTraceSink",
    "Redactor",
    "Timeline",
    "TraceEvent",
    "TraceFileError",
    "TraceLog",
    "TraceParent",
    "TraceRecord",
    "TraceSettings",
    "TraceSink",
    "Tracer",
    "build_timeline",
    "chain",
    "current_parent",
    "drop_payloads",
    "event_to_record",
    "jsonl_path",
    "read_trace",
    "redact_secrets",
    "tool_call_scope",
    "tracer_from_env",
]
