"""OpenTelemetry export (seed 002 §3-6): kanawa trace events become spans per the GenAI conventions.

The story of one run through this sink:

1. ``agent_start`` opens ``invoke_agent {agent}`` — under the ``execute_tool`` span of the tool call
   it was started from when there is one (``data.parent_*``, see :mod:`kanawa.trace.context`), else
   under whatever OpenTelemetry span is current (a web request, the caller's own span);
2. each ``llm_start`` opens ``chat {model}`` and each ``tool_start`` opens ``execute_tool {tool}``
   under the agent span, so parallel tool calls are siblings;
3. ``llm_end`` / ``llm_error`` / ``tool_end`` close them with usage, response model, finish reason and
   ``error.type``; ``agent_end`` closes the run (and anything the run left open).

Spans take their start and end times from the events, so they are right even though they are built
after the fact. Attribute names are the OpenTelemetry GenAI semantic conventions as written
(``gen_ai.operation.name``, ``gen_ai.agent.name``, ``gen_ai.provider.name``, ``gen_ai.request.model``,
``gen_ai.response.model``, ``gen_ai.usage.input_tokens`` …, ``error.type``); nothing is invented.

Export is in the background: ``emit`` only creates and ends span objects in memory, and a
``BatchSpanProcessor`` thread ships them, so a slow or dead collector never slows a run (spans beyond
its queue are dropped by the SDK). Nor does it slow an exit: each export has a deadline, retries
included (``export_timeout``, ``KANAWA_TRACE_OTLP_TIMEOUT``, 5 s), and :meth:`OtelTraceSink.aclose`
waits at most ``close_timeout`` (``KANAWA_TRACE_OTLP_CLOSE_TIMEOUT``, 1 s) for the last spans, then
cancels the export under way — the SDK's own shutdown would wait out the whole retry schedule (about
7 s for a refused connection) or up to 30 s for a collector that accepts and never answers.

Redaction is the JSONL sink's: the tracer's redactor runs before this sink sees an event, and the sink
applies :func:`~kanawa.trace.redaction.redact_secrets` again itself so a sink attached to an unredacted
tracer leaks no credentials either. Tool results are exported (``gen_ai.tool.call.result``) only with
``capture_content=True``, as the conventions advise.

Needs the ``otel`` extra (``pip install 'kanawa[otel]'``).
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import Span, SpanKind, Status, StatusCode
from opentelemetry.util.types import AttributeValue

from kanawa.trace.config import DEFAULT_OTLP_CLOSE_TIMEOUT, DEFAULT_OTLP_TIMEOUT
from kanawa.trace.events import TraceEvent
from kanawa.trace.redaction import redact_secrets

ENDPOINT_ENV: Final = "TRACE_OTLP_ENDPOINT"
"""Seed 002 §3-6: export when this is set (an OTLP/HTTP base URL, e.g. ``http://127.0.0.1:4318``)."""

INSTRUMENTATION_NAME: Final = "kanawa"

_Attributes = dict[str, AttributeValue]


def _ns(seconds: float) -> int:
    return int(seconds * 1_000_000_000)


def traces_url(endpoint: str) -> str:
    """The OTLP/HTTP traces URL for ``endpoint``: a base URL gets ``/v1/traces``, a full one is kept."""
    base = endpoint.rstrip("/")
    return base if base.endswith("/v1/traces") else f"{base}/v1/traces"


class _CancellableExporter(SpanExporter):
    """The OTLP exporter behind a switch: :meth:`cancel` shuts it down at once — the backoff wait of an
    export under way ends, later exports fail at once — without waiting for the batch thread, which is
    what lets :meth:`OtelTraceSink.aclose` bound its wait. The batch processor's own ``shutdown`` call
    afterwards does nothing (the OTLP exporter would warn about a second shutdown)."""

    def __init__(self, inner: SpanExporter) -> None:
        self._inner = inner
        self._lock = threading.Lock()
        self._stopped = False

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if self._stopped:
            return SpanExportResult.FAILURE
        return self._inner.export(spans)

    def cancel(self) -> None:
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
        self._inner.shutdown()

    def shutdown(self) -> None:
        self.cancel()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return self._inner.force_flush(timeout_millis)


@dataclass(slots=True)
class _RunSpans:
    """The open spans of one run: the agent span, chat spans by step, tool spans by (step, call id)."""

    agent: Span
    provider: str | None
    chats: dict[int, Span] = field(default_factory=dict)
    tools: dict[tuple[int, str], Span] = field(default_factory=dict)


class OtelTraceSink:
    """A :class:`~kanawa.trace.events.TraceSink` that turns kanawa trace events into OpenTelemetry spans.

    Give it a ``tracer_provider`` you own (it is flushed, not shut down, on :meth:`aclose`), or an
    ``endpoint`` (default: ``TRACE_OTLP_ENDPOINT``) for which the sink builds its own provider with an
    OTLP/HTTP exporter behind a ``BatchSpanProcessor`` (shut down on :meth:`aclose`). Raises
    ``ValueError`` when neither is available.

    With its own provider, ``export_timeout`` bounds each export, retries included, and
    ``close_timeout`` bounds how long :meth:`aclose` waits for the last spans (both in seconds; see
    the module docstring).
    """

    def __init__(
        self,
        *,
        tracer_provider: trace.TracerProvider | None = None,
        endpoint: str | None = None,
        capture_content: bool = False,
        environ: Mapping[str, str] | None = None,
        export_timeout: float = DEFAULT_OTLP_TIMEOUT,
        close_timeout: float = DEFAULT_OTLP_CLOSE_TIMEOUT,
    ) -> None:
        self._owned: TracerProvider | None = None
        self._exporter: _CancellableExporter | None = None
        self._close_timeout = close_timeout
        if tracer_provider is None:
            env = os.environ if environ is None else environ
            url = endpoint or env.get(ENDPOINT_ENV, "").strip()
            if not url:
                raise ValueError(f"give a tracer_provider or an OTLP endpoint (or set {ENDPOINT_ENV})")
            owned = TracerProvider(resource=Resource.create({"service.name": "kanawa"}))
            exporter = _CancellableExporter(
                OTLPSpanExporter(endpoint=traces_url(url), timeout=export_timeout)
            )
            owned.add_span_processor(BatchSpanProcessor(exporter))
            self._owned, self._exporter, tracer_provider = owned, exporter, owned
        self._provider = tracer_provider
        self._tracer = tracer_provider.get_tracer(INSTRUMENTATION_NAME)
        self._capture = capture_content
        self._runs: dict[str, _RunSpans] = {}
        self._lock = threading.Lock()  # emit may be called from worker threads (sync tools)

    # ------------------------------------------------------------------------------------ hot path

    def emit(self, event: TraceEvent) -> None:
        """Open or close the span ``event`` stands for; in-memory work only, export is in the background."""
        event = redact_secrets(event)
        with self._lock:
            kind = event.event
            if kind == "agent_start":
                self._agent_start(event)
            elif kind == "llm_start":
                self._llm_start(event)
            elif kind in ("llm_end", "llm_error"):
                self._llm_end(event)
            elif kind == "tool_start":
                self._tool_start(event)
            elif kind == "tool_end":
                self._tool_end(event)
            elif kind == "agent_end":
                self._agent_end(event)
            # handoff_start / handoff_end: the target run's own agent_start carries its parent.

    def _agent_start(self, event: TraceEvent) -> None:
        data = event.data
        provider = data.get("provider")
        attributes: _Attributes = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": event.agent,
            "gen_ai.conversation.id": event.session,
        }
        if isinstance(provider, str):
            attributes["gen_ai.provider.name"] = provider
        if event.model:
            attributes["gen_ai.request.model"] = event.model
        span = self._tracer.start_span(
            f"invoke_agent {event.agent}",
            context=self._parent_context(data),
            kind=SpanKind.INTERNAL,
            attributes=attributes,
            start_time=_ns(event.time),
        )
        self._runs[event.run_id] = _RunSpans(span, provider if isinstance(provider, str) else None)

    def _parent_context(self, data: Mapping[str, object]) -> otel_context.Context | None:
        """The tool-call span this run was started from, else ``None`` (the current OTel context)."""
        parent_run = data.get("parent_run_id")
        if not isinstance(parent_run, str):
            return None
        run = self._runs.get(parent_run)
        if run is None:
            return None
        step, call_id = data.get("parent_step"), data.get("parent_call_id")
        parent = (
            run.tools.get((step, call_id)) if isinstance(step, int) and isinstance(call_id, str) else None
        )
        return trace.set_span_in_context(parent if parent is not None else run.agent)

    def _llm_start(self, event: TraceEvent) -> None:
        run = self._runs.get(event.run_id)
        if run is None or event.step is None:
            return
        attributes: _Attributes = {"gen_ai.operation.name": "chat"}
        if run.provider:
            attributes["gen_ai.provider.name"] = run.provider
        if event.model:
            attributes["gen_ai.request.model"] = event.model
        stream = event.data.get("stream")
        if isinstance(stream, bool):
            attributes["gen_ai.request.stream"] = stream
        run.chats[event.step] = self._tracer.start_span(
            f"chat {event.model or ''}".rstrip(),
            context=trace.set_span_in_context(run.agent),
            kind=SpanKind.CLIENT,
            attributes=attributes,
            start_time=_ns(event.time),
        )

    def _llm_end(self, event: TraceEvent) -> None:
        run = self._runs.get(event.run_id)
        span = run.chats.pop(event.step, None) if run is not None and event.step is not None else None
        if span is None:
            return
        data = event.data
        if event.event == "llm_end":
            if event.model:
                span.set_attribute("gen_ai.response.model", event.model)
            response_id = data.get("response_id")
            if isinstance(response_id, str):
                span.set_attribute("gen_ai.response.id", response_id)
            stop = data.get("stop_reason")
            if isinstance(stop, str):
                span.set_attribute("gen_ai.response.finish_reasons", [stop])
            _set_usage(span, event)
        else:
            error_type = data.get("error_type")
            _fail(span, error_type if isinstance(error_type, str) else "_OTHER", event.error)
        span.end(end_time=_ns(event.time))

    def _tool_start(self, event: TraceEvent) -> None:
        run = self._runs.get(event.run_id)
        if run is None or event.step is None or event.call_id is None or event.tool is None:
            return
        run.tools[(event.step, event.call_id)] = self._tracer.start_span(
            f"execute_tool {event.tool}",
            context=trace.set_span_in_context(run.agent),
            kind=SpanKind.INTERNAL,
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": event.tool,
                "gen_ai.tool.call.id": event.call_id,
            },
            start_time=_ns(event.time),
        )

    def _tool_end(self, event: TraceEvent) -> None:
        run = self._runs.get(event.run_id)
        if run is None or event.step is None or event.call_id is None:
            return
        span = run.tools.pop((event.step, event.call_id), None)
        if span is None:
            return
        if event.error is not None:
            kind = event.data.get("error_kind")
            _fail(span, kind if isinstance(kind, str) else "_OTHER", event.error)
        elif self._capture and event.result is not None:
            result = event.result
            span.set_attribute(
                "gen_ai.tool.call.result",
                result if isinstance(result, str) else json.dumps(result, ensure_ascii=False),
            )
        span.end(end_time=_ns(event.time))

    def _agent_end(self, event: TraceEvent) -> None:
        run = self._runs.pop(event.run_id, None)
        if run is None:
            return
        end = _ns(event.time)
        for span in (*run.chats.values(), *run.tools.values()):  # left open by an aborted run
            span.end(end_time=end)
        _set_usage(run.agent, event)
        if event.error is not None:
            _fail(run.agent, event.error.split(":", 1)[0] or "_OTHER", event.error)
        run.agent.end(end_time=end)

    # ----------------------------------------------------------------------------------- lifecycle

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        """Export every ended span now (blocking); ``False`` if the provider could not within the timeout."""
        flush = getattr(self._provider, "force_flush", None)
        return bool(flush(timeout_millis)) if callable(flush) else True

    async def aclose(self) -> None:
        """Flush (a provider passed in) or shut down (the sink's own provider, waiting at most
        ``close_timeout``) without blocking the loop."""
        if self._owned is not None and self._exporter is not None:
            await asyncio.to_thread(_shut_down, self._owned, self._exporter, self._close_timeout)
        else:
            await asyncio.to_thread(self.force_flush)


def _shut_down(provider: TracerProvider, exporter: _CancellableExporter, timeout: float) -> None:
    """The SDK's shutdown exports what is queued and joins its thread for up to 30 s; run it aside, wait
    ``timeout`` seconds, then cancel the export still under way (its spans are dropped). The shutdown
    thread is a daemon: a request stuck on a silent collector never holds up an exit."""
    closing = threading.Thread(target=provider.shutdown, name="kanawa-otel-close", daemon=True)
    closing.start()
    closing.join(timeout)
    if closing.is_alive():
        exporter.cancel()


def _set_usage(span: Span, event: TraceEvent) -> None:
    if event.tok_prompt is not None:
        span.set_attribute("gen_ai.usage.input_tokens", event.tok_prompt)
    if event.tok_completion is not None:
        span.set_attribute("gen_ai.usage.output_tokens", event.tok_completion)
    cached = event.data.get("cached_tokens")
    if isinstance(cached, int) and cached:
        span.set_attribute("gen_ai.usage.cache_read.input_tokens", cached)
    written = event.data.get("cache_write_tokens")
    if isinstance(written, int) and written:
        span.set_attribute("gen_ai.usage.cache_creation.input_tokens", written)
    reasoning = event.data.get("reasoning_tokens")
    if isinstance(reasoning, int) and reasoning:
        span.set_attribute("gen_ai.usage.reasoning.output_tokens", reasoning)


def _fail(span: Span, error_type: str, message: str | None) -> None:
    span.set_attribute("error.type", error_type)
    span.set_status(Status(StatusCode.ERROR, message))


__all__ = ["ENDPOINT_ENV", "OtelTraceSink", "traces_url"]
