"""The model side of a run (seed 003 ``sendRequest``, the "LLM にリクエスト送信" step): asking,
streaming, and keeping the history under the window.

:class:`ModelCaller` sends a request through ``adapter.chat`` or ``adapter.stream``, sums usage and
cost over the run (compaction's own requests included), emits ``llm_start``/``llm_end``/``llm_error``
trace events and turns every :class:`~kanawa.llm.errors.LLMError` into
:class:`~kanawa.loop.errors.LLMCallFailed` (the original as ``__cause__``). A stream that stops
without its ``ResponseCompleted`` is a failed request too.

With ``compaction=`` the history is compacted before a request that would pass the trigger, and a
context-length refusal compacts once more and is retried once (a streamed one only when no delta
had arrived yet) — :mod:`kanawa.loop.compaction`, loaded only by runs that compact.
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing
from typing import TYPE_CHECKING

from kanawa.llm.adapter import LLMAdapter
from kanawa.llm.errors import LLMConnectionError, LLMError, is_context_length_error
from kanawa.llm.pricing import cost_of
from kanawa.llm.settings import ModelSettings
from kanawa.loop.errors import LLMCallFailed
from kanawa.loop.events import StreamDelta
from kanawa.loop.tracing import RunTrace
from kanawa.types import LLMResponse, Message, OutputSchema, ResponseCompleted, ToolSpec, Usage

if TYPE_CHECKING:  # imported when a run has compaction: most runs never load it
    from kanawa.loop.compaction.compactor import CompactionReport, Compactor
    from kanawa.loop.compaction.settings import Compaction


class ModelCaller:
    """Sends the requests of one run, compacts its history when asked to, and keeps the usage."""

    __slots__ = ("_compactor", "_cost", "_model", "_requests", "_settings", "_trace", "_usage")

    def __init__(
        self,
        model: LLMAdapter,
        *,
        settings: ModelSettings | None,
        trace: RunTrace | None,
        compaction: Compaction | None = None,
        tools: Sequence[ToolSpec] = (),
    ) -> None:
        self._model = model
        self._trace = trace
        self._usage = Usage()
        self._requests = 0
        self._cost: float | None = 0.0
        self._compactor: Compactor | None = None
        if compaction is not None:
            from kanawa.loop.compaction.compactor import Compactor

            self._compactor = Compactor(compaction, model, tools=tools, settings=settings)
            settings = self._compactor.settings  # with what the strategy adds to every request
        self._settings = settings

    @property
    def cost(self) -> float | None:
        """USD spent so far, priced per response by its model (:mod:`kanawa.llm.pricing`); ``None``
        once any request went to a model without a price, answered or failed (a partial sum would
        understate it, and a failed run's ``$0`` would be made up). Compaction's requests count."""
        cost = self._cost
        compactor = self._compactor
        if compactor is None or cost is None:
            return cost
        return None if compactor.cost is None else cost + compactor.cost

    @property
    def usage(self) -> Usage:
        """Usage summed over every request so far; ``requests`` counts them (failed ones included),
        and compaction's requests (a summary, a provider's compaction) are added."""
        u = self._usage
        usage = Usage(
            input_tokens=u.input_tokens,
            output_tokens=u.output_tokens,
            reasoning_tokens=u.reasoning_tokens,
            cached_tokens=u.cached_tokens,
            cache_write_tokens=u.cache_write_tokens,
            requests=self._requests,
        )
        return usage if self._compactor is None else usage + self._compactor.usage

    async def ask(
        self, step: int, messages: list[Message], tools: Sequence[ToolSpec], schema: OutputSchema | None
    ) -> LLMResponse:
        """One whole answer; with compaction, ``messages`` is compacted in place first when it has
        grown past the trigger, and a context-length refusal compacts once more and retries once."""
        if self._compactor is None:
            return await self.chat(step, messages, tools, schema)
        await self._compact(step, messages)
        try:
            return await self.chat(step, messages, tools, schema)
        except LLMCallFailed as failed:
            if not await self._compact_after(step, messages, failed):
                raise
        return await self.chat(step, messages, tools, schema)

    async def ask_streamed(
        self,
        step: int,
        messages: list[Message],
        tools: Sequence[ToolSpec],
        schema: OutputSchema | None,
        held: list[StreamDelta] | None,
    ) -> AsyncGenerator[StreamDelta | LLMResponse, None]:
        """:meth:`ask` for a streamed answer: deltas as they arrive (into ``held`` instead when an
        output guardrail must see the answer first), then the assembled response. A refusal is
        retried after compaction only when no delta had arrived."""
        if self._compactor is not None:
            await self._compact(step, messages)
        retried = False
        while True:
            arrived = False
            try:
                async with aclosing(self.stream(step, messages, tools, schema)) as stream:
                    async for item in stream:
                        if isinstance(item, LLMResponse):
                            yield item
                            return
                        arrived = True
                        if held is not None:
                            held.append(item)
                        else:
                            yield item
            except LLMCallFailed as failed:
                if retried or arrived or not await self._compact_after(step, messages, failed):
                    raise
                retried = True

    async def _compact(self, step: int, messages: list[Message]) -> None:
        """Compact the history before a request that would pass the compaction trigger."""
        assert self._compactor is not None
        try:
            report = await self._compactor.before_request(messages)
        except LLMError as exc:  # a summariser's request failed: the run fails as for its own
            raise LLMCallFailed(exc, step=step) from exc
        self._traced(step, report)

    async def _compact_after(self, step: int, messages: list[Message], failed: LLMCallFailed) -> bool:
        """After a provider refused the request as too long: compact and say whether to retry."""
        if self._compactor is None or not is_context_length_error(failed.error):
            return False
        try:
            report = await self._compactor.after_context_error(messages)
        except LLMError as exc:
            raise LLMCallFailed(exc, step=step) from exc
        self._traced(step, report)
        return report is not None

    def _traced(self, step: int, report: CompactionReport | None) -> None:
        if report is not None and self._trace is not None:
            self._trace.compaction(step, report)

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
