"""Trace events of one run (seed 002 §3-6, App. C): the runner's side channel.

The runner holds a :class:`RunTrace` only when its tracer has sinks, so a run without tracing builds
no events at all (one ``is None`` check per emission point).

What an event may carry that is not a count, a flag, a name or an id (all of it cut to
:data:`RESULT_LIMIT` characters): a tool's result text (``tool_end.result``), a failed tool's details
(``tool_end.error``: ``ToolResult.detail``, which seed 000 §6.2 sends to the trace and never to the
model — it may quote the tool's input), the provider's error message (``llm_error.error``) and the
run's exception text (``agent_end.error``). Prompts, model text, reasoning and tool arguments are
never traced. The tracer's redactor decides what of this reaches a sink
(:mod:`kanawa.trace.redaction`: ``secrets`` masks keys in it, ``payloads`` removes it).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from kanawa.llm.errors import LLMError
from kanawa.llm.tokens import text_counter
from kanawa.tools.base import ToolResult
from kanawa.trace.context import TraceParent, current_parent
from kanawa.trace.events import TraceEvent, Tracer
from kanawa.types import JsonValue, LLMResponse, ToolCall, Usage, text_of

if TYPE_CHECKING:
    from kanawa.loop.compaction.compactor import CompactionReport

RESULT_LIMIT: Final = 300
"""Longest tool result text kept in a ``tool_end`` event."""


def _truncate(text: str, limit: int = RESULT_LIMIT) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


class RunTrace:
    """Builds and emits the events of one run; every method is a single ``Tracer.emit``."""

    __slots__ = ("_agent", "_model", "_run_id", "_session", "_tracer")

    def __init__(self, tracer: Tracer, *, agent: str, run_id: str, model: str) -> None:
        self._tracer = tracer
        self._session = tracer.session
        self._agent = agent
        self._run_id = run_id
        self._model = model

    def _event(self, event: TraceEvent) -> None:
        self._tracer.emit(event)

    def agent_start(self, *, provider: str, tools: int, streamed: bool) -> None:
        """A run started inside a tool call (see :mod:`kanawa.trace.context`) names that call its parent."""
        data: dict[str, JsonValue] = {"provider": provider, "tools": tools, "stream": streamed}
        parent = current_parent()
        if parent is not None:
            data.update(parent_run_id=parent.run_id, parent_step=parent.step, parent_call_id=parent.call_id)
        self._event(
            TraceEvent(
                "agent_start",
                self._session,
                self._agent,
                run_id=self._run_id,
                model=self._model,
                data=data,
            )
        )

    def llm_start(self, step: int, *, tools: int, response_schema: bool, streamed: bool) -> None:
        self._event(
            TraceEvent(
                "llm_start",
                self._session,
                self._agent,
                run_id=self._run_id,
                step=step,
                model=self._model,
                data={"tools": tools, "response_schema": response_schema, "stream": streamed},
            )
        )

    def llm_end(self, step: int, response: LLMResponse, *, duration_ms: float) -> None:
        usage = response.usage
        stop = response.stop_reason
        self._event(
            TraceEvent(
                "llm_end",
                self._session,
                self._agent,
                run_id=self._run_id,
                step=step,
                model=response.model or self._model,
                tok_prompt=usage.input_tokens,
                tok_completion=usage.output_tokens,
                duration_ms=duration_ms,
                data={
                    "stop_reason": None if stop is None else stop.value,
                    "tool_calls": len(response.message.tool_calls),
                    "reasoning_tokens": usage.reasoning_tokens,
                    "cached_tokens": usage.cached_tokens,
                    "cache_write_tokens": usage.cache_write_tokens,
                    "response_id": response.response_id,
                },
            )
        )

    def llm_error(self, step: int, error: LLMError, *, duration_ms: float) -> None:
        self._event(
            TraceEvent(
                "llm_error",
                self._session,
                self._agent,
                run_id=self._run_id,
                step=step,
                model=self._model,
                duration_ms=duration_ms,
                error=str(error),
                data={
                    "error_type": type(error).__name__,
                    "status_code": error.status_code,
                    "retryable": error.retryable,
                    "retry_after": error.retry_after,
                },
            )
        )

    def compaction(self, step: int, report: CompactionReport) -> None:
        """The history was compacted before this step's request (counts only, never content)."""
        self._event(
            TraceEvent(
                "compaction",
                self._session,
                self._agent,
                run_id=self._run_id,
                step=step,
                model=self._model,
                data={
                    "cause": report.cause,
                    "strategy": report.strategy,
                    "messages_before": report.messages_before,
                    "messages_after": report.messages_after,
                    "tokens_before": report.tokens_before,
                    "tokens_after": report.tokens_after,
                },
            )
        )

    def tool_starts(self, step: int, calls: Sequence[ToolCall]) -> float:
        """Emit ``tool_start`` for each call; returns the start time for :meth:`tool_ends`."""
        now = time.time()
        for call in calls:
            self._event(
                TraceEvent(
                    "tool_start",
                    self._session,
                    self._agent,
                    time=now,
                    run_id=self._run_id,
                    step=step,
                    tool=call.name,
                    call_id=call.id,
                )
            )
        return now

    def tool_ends(
        self, step: int, calls: Sequence[ToolCall], results: Sequence[ToolResult], *, started: float
    ) -> None:
        """Emit ``tool_end`` per result, in call order, each stamped with its own finish time.

        As in seed 002 App. C, ``tok_prompt``/``tok_completion`` are the tool's I/O in tokens: its
        arguments (what the model wrote) and its result (what the model will read), counted offline.
        """
        count = text_counter(self._model)
        for call, result in zip(calls, results, strict=True):
            text = text_of(result.content)
            failed = result.is_error
            self._event(
                TraceEvent(
                    "tool_end",
                    self._session,
                    self._agent,
                    time=started + result.duration_ms / 1000.0,
                    run_id=self._run_id,
                    step=step,
                    tool=result.name,
                    call_id=result.call_id,
                    tok_prompt=count(call.arguments),
                    tok_completion=count(text),
                    duration_ms=result.duration_ms,
                    result=None if failed else _truncate(text),
                    error=_truncate(result.detail or text) if failed else None,
                    data={"error_kind": result.error_kind.value} if result.error_kind is not None else {},
                )
            )

    def agent_end(
        self,
        *,
        usage: Usage,
        steps: int,
        duration_ms: float,
        termination_reason: str | None,
        error: BaseException | None = None,
    ) -> None:
        self._event(
            TraceEvent(
                "agent_end",
                self._session,
                self._agent,
                run_id=self._run_id,
                model=self._model,
                tok_prompt=usage.input_tokens,
                tok_completion=usage.output_tokens,
                duration_ms=duration_ms,
                error=None if error is None else f"{type(error).__name__}: {_truncate(str(error))}",
                data={
                    "termination_reason": termination_reason,
                    "steps": steps,
                    "requests": usage.requests,
                    "reasoning_tokens": usage.reasoning_tokens,
                    "cached_tokens": usage.cached_tokens,
                    "cache_write_tokens": usage.cache_write_tokens,
                    **({} if error is None else {"error_type": type(error).__name__}),
                },
            )
        )

    def parent_of(self, step: int, call: ToolCall) -> TraceParent:
        """The :class:`TraceParent` a run started inside ``call`` reports."""
        return TraceParent(self._run_id, step, call.id)


__all__ = ["RESULT_LIMIT", "RunTrace"]
