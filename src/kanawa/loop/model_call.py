"""One model request of the loop (seed 003 ``sendRequest``, the "LLM にリクエスト送信" step).

:class:`ModelCaller` sends a request through ``adapter.chat`` or ``adapter.stream``, sums usage over
the run, emits ``llm_start``/``llm_end``/``llm_error`` trace events and turns every
:class:`~kanawa.llm.errors.LLMError` into :class:`~kanawa.loop.errors.LLMCallFailed` (the original as
``__cause__``). A stream that stops without its ``ResponseCompleted`` is a failed request too.
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, Sequence

from kanawa.llm.adapter import LLMAdapter
from kanawa.llm.errors import LLMConnectionError, LLMError
from kanawa.llm.pricing import cost_of
from kanawa.llm.settings import ModelSettings
from kanawa.loop.errors import LLMCallFailed
from kanawa.loop.events import StreamDelta
from kanawa.loop.tracing import RunTrace
from kanawa.types import LLMResponse, Message, OutputSchema, ResponseCompleted, ToolSpec, Usage


class ModelCaller:
    """Sends the requests of one run and keeps their usage."""

    __slots__ = ("_cost", "_model", "_requests", "_settings", "_trace", "_usage")

    def __init__(self, model: LLMAdapter, *, settings: ModelSettings | None, trace: RunTrace | None) -> None:
        self._model = model
        self._settings = settings
        self._trace = trace
        self._usage = Usage()
        self._requests = 0
        self._cost: float | None = 0.0

    @property
    def cost(self) -> float | None:
        """USD spent so far, priced per response by its model (:mod:`kanawa.llm.pricing`); ``None``
        once any request went to a model without a price, answered or failed (a partial sum would
        understate it, and a failed run's ``$0`` would be made up)."""
        return self._cost

    @property
    def usage(self) -> Usage:
        """Usage summed over every request so far; ``requests`` counts them (failed ones included)."""
        u = self._usage
        return Usage(
            input_tokens=u.input_tokens,
            output_tokens=u.output_tokens,
            reasoning_tokens=u.reasoning_tokens,
            cached_tokens=u.cached_tokens,
            cache_write_tokens=u.cache_write_tokens,
            requests=self._requests,
        )

    async def chat(
        self, step: int, messages: Sequence[Message], tools: Sequence[ToolSpec], schema: OutputSchema | None
    ) -> LLMResponse:
        """One whole response from ``adapter.chat``."""
        if self._trace is not None:
            self._trace.llm_start(step, tools=len(tools), response_schema=schema is not None, streamed=False)
        started = time.perf_counter()
        try:
            response = await self._model.chat(
                messages, tools=tools, settings=self._settings, response_schema=schema
            )
        except LLMError as exc:
            raise self._failed(exc, step, started) from exc
        self._account(step, response, started)
        return response

    async def stream(
        self, step: int, messages: Sequence[Message], tools: Sequence[ToolSpec], schema: OutputSchema | None
    ) -> AsyncGenerator[StreamDelta | LLMResponse, None]:
        """Yield ``adapter.stream``'s deltas as they arrive, then the assembled :class:`LLMResponse`."""
        if self._trace is not None:
            self._trace.llm_start(step, tools=len(tools), response_schema=schema is not None, streamed=True)
        started = time.perf_counter()
        events = self._model.stream(messages, tools=tools, settings=self._settings, response_schema=schema)
        response: LLMResponse | None = None
        try:
            async for event in events:
                if isinstance(event, ResponseCompleted):
                    response = event.response
                else:
                    yield event
        except LLMError as exc:
            raise self._failed(exc, step, started) from exc
        finally:
            if response is None:  # stopped early: close the provider stream now, not at collection
                aclose = getattr(events, "aclose", None)
                if aclose is not None:
                    await aclose()
        if response is None:
            error = LLMConnectionError(
                "the model stream ended without a completed response",
                provider=self._model.provider,
                model=self._model.model,
            )
            raise self._failed(error, step, started) from error
        self._account(step, response, started)
        yield response

    def _account(self, step: int, response: LLMResponse, started: float) -> None:
        self._usage = self._usage + response.usage
        self._requests += response.usage.requests or 1
        if self._cost is not None:
            spent = cost_of(response.model or self._model.model, response.usage)
            self._cost = None if spent is None else self._cost + spent
        if self._trace is not None:
            self._trace.llm_end(step, response, duration_ms=(time.perf_counter() - started) * 1000.0)

    def _failed(self, error: LLMError, step: int, started: float) -> LLMCallFailed:
        """A failed request is billed nothing on a priced model; on a model without a price what it
        cost is unknown, and so is the run's cost from then on (never a made-up ``$0``)."""
        self._requests += 1
        if self._cost is not None and cost_of(error.model or self._model.model, Usage()) is None:
            self._cost = None
        if self._trace is not None:
            self._trace.llm_error(step, error, duration_ms=(time.perf_counter() - started) * 1000.0)
        return LLMCallFailed(error, step=step)


__all__ = ["ModelCaller"]
