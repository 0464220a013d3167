"""What each ACE role spent: a model wrapper that counts usage and prices it, per role and per case.

The Generator, Reflector and Curator each run their own kanawa :class:`~kanawa.Agent`, which keep a
run's usage to themselves. Wrapping the *model* instead sees every request a role makes — retries,
decode repairs, tool turns — without changing the roles. Each answer's usage is priced by the model
that answered (:func:`kanawa.llm.pricing.cost_of`); a model without a known price makes the role's cost
unknown (``None``), never a made-up zero.

A case's own usage (what :class:`~kanawa.evals.ScoreContext` carries) comes from :meth:`MeteredModel.case`:
held-out cases run concurrently on one wrapper, so the per-case bucket lives in a context variable
that each case's task sees alone.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field

from kanawa.llm.adapter import LLMAdapter, ToolLike
from kanawa.llm.lifecycle import close_adapter
from kanawa.llm.pricing import cost_of
from kanawa.llm.settings import ModelSettings
from kanawa.types import LLMResponse, Message, OutputSchema, ResponseCompleted, StreamEvent, Usage


@dataclass(slots=True)
class Spend:
    """Usage and USD of some requests; ``cost_usd`` is ``None`` once any of them had no known price."""

    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = 0.0

    def add(self, usage: Usage, cost: float | None) -> None:
        self.usage = self.usage + usage
        self.cost_usd = None if self.cost_usd is None or cost is None else self.cost_usd + cost

    def plus(self, other: Spend) -> Spend:
        total = Spend(self.usage, self.cost_usd)
        total.add(other.usage, other.cost_usd)
        return total

    def minus(self, earlier: Spend) -> Spend:
        """What was spent since ``earlier`` (a copy taken from the same meter)."""
        usage = Usage(
            input_tokens=self.usage.input_tokens - earlier.usage.input_tokens,
            output_tokens=self.usage.output_tokens - earlier.usage.output_tokens,
            reasoning_tokens=self.usage.reasoning_tokens - earlier.usage.reasoning_tokens,
            cached_tokens=self.usage.cached_tokens - earlier.usage.cached_tokens,
            requests=self.usage.requests - earlier.usage.requests,
            cache_write_tokens=self.usage.cache_write_tokens - earlier.usage.cache_write_tokens,
        )
        cost = (
            None
            if self.cost_usd is None or earlier.cost_usd is None
            else max(0.0, self.cost_usd - earlier.cost_usd)
        )
        return Spend(usage, cost)

    def copy(self) -> Spend:
        return Spend(self.usage, self.cost_usd)


_CASE: ContextVar[Spend | None] = ContextVar("kanawa_ace_learning_case", default=None)


class MeteredModel:
    """An :class:`~kanawa.llm.LLMAdapter` that forwards to ``inner`` and counts what it spends.

    Args:
        inner: the model the role really uses.
        owned: close ``inner`` in :meth:`aclose` (the wrapper resolved it from a model string).
    """

    def __init__(self, inner: LLMAdapter, *, owned: bool = False) -> None:
        self.inner = inner
        self.owned = owned
        self.spent = Spend()

    @property
    def provider(self) -> str:
        return self.inner.provider

    @property
    def model(self) -> str:
        return self.inner.model

    def _record(self, response: LLMResponse) -> None:
        cost = cost_of(response.model or self.inner.model, response.usage)
        self.spent.add(response.usage, cost)
        bucket = _CASE.get()
        if bucket is not None:
            bucket.add(response.usage, cost)

    async def chat(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolLike] = (),
        settings: ModelSettings | None = None,
        response_schema: OutputSchema | None = None,
    ) -> LLMResponse:
        response = await self.inner.chat(
            messages, tools=tools, settings=settings, response_schema=response_schema
        )
        self._record(response)
        return response

    async def stream(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolLike] = (),
        settings: ModelSettings | None = None,
        response_schema: OutputSchema | None = None,
    ) -> AsyncIterator[StreamEvent]:
        async for event in self.inner.stream(
            messages, tools=tools, settings=settings, response_schema=response_schema
        ):
            if isinstance(event, ResponseCompleted):
                self._record(event.response)
            yield event

    def count_tokens(self, content: str | Sequence[Message]) -> int:
        return self.inner.count_tokens(content)

    def normalize_model_name(self, name: str | None = None) -> str:
        return self.inner.normalize_model_name(name)

    async def aclose(self) -> None:
        if self.owned:
            await close_adapter(self.inner)

    @staticmethod
    @contextlib.contextmanager
    def case() -> Iterator[Spend]:
        """Count the requests made inside this block (in this task) into the yielded :class:`Spend`."""
        bucket = Spend()
        token = _CASE.set(bucket)
        try:
            yield bucket
        finally:
            _CASE.reset(token)


__all__ = ["MeteredModel", "Spend"]
