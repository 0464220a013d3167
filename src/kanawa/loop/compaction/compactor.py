"""One run's compaction: measure the history before each request, compact it when it passes the
trigger, and once more when the provider says the context is too long.

The runner holds a :class:`Compactor` only when its agent has ``compaction=``, so a run without it
pays nothing. With it, each check costs the new messages only: per-message token estimates are kept
in a list beside the history (which only grows between compactions) and recounted after one.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from kanawa.llm.adapter import LLMAdapter
from kanawa.llm.pricing import cost_of
from kanawa.llm.settings import ModelSettings
from kanawa.llm.tokens import REPLY_PRIMING_TOKENS, message_tokens, text_counter
from kanawa.loop.compaction.history import split_history
from kanawa.loop.compaction.settings import Compaction
from kanawa.loop.compaction.strategies import CompactionRequest, NativeCompaction
from kanawa.types import Message, ToolSpec, Usage

CompactionCause = Literal["threshold", "context_length"]


@dataclass(frozen=True, slots=True)
class CompactionReport:
    """What one compaction did (traced as a ``compaction`` event)."""

    cause: CompactionCause
    strategy: str
    messages_before: int
    messages_after: int
    tokens_before: int
    tokens_after: int


class Compactor:
    """Keeps one run's history under its model's context window (:class:`Compaction`)."""

    __slots__ = (
        "_count",
        "_counts",
        "_fixed",
        "_model",
        "_server_side",
        "_settings",
        "_strategy",
        "compaction",
        "cost",
        "target_tokens",
        "trigger_tokens",
        "usage",
        "window",
    )

    def __init__(
        self,
        compaction: Compaction,
        model: LLMAdapter,
        *,
        tools: Sequence[ToolSpec],
        settings: ModelSettings | None,
    ) -> None:
        self.compaction = compaction
        self._model = model
        self._strategy = compaction.strategy
        self.window = compaction.window_for(model.model)
        self.trigger_tokens = int(self.window * compaction.trigger)
        self.target_tokens = int(self.window * compaction.target)
        self._count = text_counter(model.model)
        self._fixed = REPLY_PRIMING_TOKENS + sum(
            self._count(json.dumps(spec.parameters)) + self._count(spec.description) + 8 for spec in tools
        )
        extra = (
            self._strategy.request_fields(model.provider, trigger_tokens=self.trigger_tokens)
            if isinstance(self._strategy, NativeCompaction)
            else {}
        )
        self._server_side = bool(extra)
        base = settings if settings is not None else ModelSettings()
        self._settings = base.merged(ModelSettings(extra=extra)) if extra else settings
        self._counts: list[int] = []
        self.usage = Usage()
        self.cost: float | None = 0.0

    @property
    def settings(self) -> ModelSettings | None:
        """The run's settings with what the strategy adds to every request (Anthropic's context edit)."""
        return self._settings

    def tokens(self, messages: Sequence[Message]) -> int:
        """The estimated size of a request carrying ``messages`` (new messages are counted once)."""
        counts = self._counts
        if len(counts) > len(messages):
            counts.clear()
        count = self._count
        for message in messages[len(counts) :]:
            counts.append(message_tokens(message, count))
        return self._fixed + sum(counts)

    async def before_request(self, messages: list[Message]) -> CompactionReport | None:
        """Compact ``messages`` in place when the request would pass the trigger (the whole window
        when the provider clears context itself, as Anthropic's context edit does)."""
        limit = self.window if self._server_side else self.trigger_tokens
        if self.tokens(messages) <= limit:
            return None
        return await self._compact(messages, "threshold")

    async def after_context_error(self, messages: list[Message]) -> CompactionReport | None:
        """Compact after the provider refused the request as too long; ``None`` when nothing could be
        removed (then retrying would fail the same way)."""
        report = await self._compact(messages, "context_length")
        smaller = report.tokens_after < report.tokens_before
        return report if smaller or report.messages_after < report.messages_before else None

    async def _compact(self, messages: list[Message], cause: CompactionCause) -> CompactionReport:
        before = self.tokens(messages)
        size = len(messages)
        counts = dict(zip(map(id, messages), self._counts, strict=True))
        count = self._count

        def cost(message: Message) -> int:
            known = counts.get(id(message))
            return known if known is not None else message_tokens(message, count)

        split = split_history(messages, budget=self.target_tokens, cost=cost, fixed=self._fixed)
        request = CompactionRequest(split, self._model, self._settings, self.target_tokens, count)
        strategy = self._strategy
        if self._server_side and isinstance(strategy, NativeCompaction):
            strategy = strategy.fallback  # the server clears tool results; locally, the fallback cuts
        compacted = await strategy.compact(request)
        if compacted.usage.requests or compacted.usage.input_tokens:
            self.usage = self.usage + compacted.usage
            if self.cost is not None:
                spent = cost_of(compacted.model or self._model.model, compacted.usage)
                self.cost = None if spent is None else self.cost + spent
        messages[:] = compacted.messages
        self._counts.clear()
        return CompactionReport(
            cause=cause,
            strategy=strategy.name,
            messages_before=size,
            messages_after=len(messages),
            tokens_before=before,
            tokens_after=self.tokens(messages),
        )


__all__ = ["CompactionCause", "CompactionReport", "Compactor"]
