"""Same-model retries with backoff, then fallback models (seed 002 §7).

``RetryingLLM`` wraps any :class:`LLMAdapter`. A retryable :class:`LLMError` (408, 409, 429, 5xx,
connection faults, timeouts) is tried on the same model up to ``RetryPolicy.max_attempts`` times in
all (the first try included: 3 means two retries), sleeping with exponential backoff and full jitter
— or exactly what the server's ``Retry-After`` asked for, when it said. When the attempts are used
up, each fallback model is tried the same way.
Non-retryable errors (bad request, auth) are raised at once: a fallback would fail the same way or
hide a configuration mistake.

Streams: a stream that fails *before* yielding anything is retried like a request. A stream that
breaks *after* the caller has seen output is never re-sent — the caller would see the same text
twice — and raises :class:`LLMStreamInterruptedError` (not retryable) carrying the original error
as ``__cause__``. The loop turns it into ``LLMCallFailed``; the caller decides whether to rerun.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass

from kanawa._logging import get_logger
from kanawa.llm.adapter import LLMAdapter, ToolLike
from kanawa.llm.errors import LLMError, LLMStreamInterruptedError
from kanawa.llm.lifecycle import ClosableAdapter, close_adapter
from kanawa.llm.settings import ModelSettings
from kanawa.types import LLMResponse, Message, OutputSchema, StreamEvent

logger = get_logger("kanawa.llm.retry")

Sleep = Callable[[float], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how patiently to retry one model.

    ``max_attempts`` counts the first try (seed 002 §7: three attempts on the same model).
    ``max_retry_after`` caps a server's ``Retry-After`` so a hostile value cannot stall a run.
    """

    max_attempts: int = 3
    initial_delay: float = 0.5
    max_delay: float = 20.0
    multiplier: float = 2.0
    max_retry_after: float = 60.0

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("RetryPolicy.max_attempts must be at least 1")
        if self.initial_delay < 0 or self.max_delay < 0:
            raise ValueError("RetryPolicy delays must not be negative")

    def delay(self, attempt: int, error: LLMError, *, rng: random.Random | None = None) -> float:
        """Seconds to wait after failed ``attempt`` (1-based): the server's hint, else full jitter."""
        if error.retry_after is not None:
            return min(max(error.retry_after, 0.0), self.max_retry_after)
        ceiling = min(self.max_delay, self.initial_delay * self.multiplier ** (attempt - 1))
        return (rng or random).uniform(0.0, ceiling)


NO_RETRY = RetryPolicy(max_attempts=1)


class RetryingLLM(ClosableAdapter):
    """An :class:`LLMAdapter` that retries its primary model, then falls back (seed 002 §7)."""

    def __init__(
        self,
        primary: LLMAdapter,
        *,
        fallbacks: Sequence[LLMAdapter] = (),
        policy: RetryPolicy | None = None,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self.primary = primary
        self.fallbacks = tuple(fallbacks)
        self.policy = policy or RetryPolicy()
        self._sleep = sleep

    @property
    def provider(self) -> str:
        return self.primary.provider

    @property
    def model(self) -> str:
        return self.primary.model

    def count_tokens(self, content: str | Sequence[Message]) -> int:
        return self.primary.count_tokens(content)

    def normalize_model_name(self, name: str | None = None) -> str:
        return self.primary.normalize_model_name(name)

    async def aclose(self) -> None:
        """Close the primary and every fallback (each closes only what it owns)."""
        for adapter in self._candidates():
            await close_adapter(adapter)

    def _candidates(self) -> tuple[LLMAdapter, ...]:
        return (self.primary, *self.fallbacks)

    async def _back_off(self, adapter: LLMAdapter, attempt: int, error: LLMError) -> None:
        delay = self.policy.delay(attempt, error)
        logger.warning(
            "LLM call failed; retrying",
            extra={
                "provider": adapter.provider,
                "model": adapter.model,
                "attempt": attempt,
                "status_code": error.status_code,
                "error_type": type(error).__name__,
                "delay_s": round(delay, 3),
            },
        )
        await self._sleep(delay)

    def _log_fallback(self, adapter: LLMAdapter, error: LLMError) -> None:
        logger.warning(
            "LLM model exhausted its retries; trying the fallback model",
            extra={"provider": adapter.provider, "model": adapter.model, "error_type": type(error).__name__},
        )

    async def chat(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolLike] = (),
        settings: ModelSettings | None = None,
        response_schema: OutputSchema | None = None,
    ) -> LLMResponse:
        last: LLMError | None = None
        for adapter in self._candidates():
            if last is not None:
                self._log_fallback(adapter, last)
            for attempt in range(1, self.policy.max_attempts + 1):
                try:
                    return await adapter.chat(
                        messages, tools=tools, settings=settings, response_schema=response_schema
                    )
                except LLMError as error:
                    if not error.retryable:
                        raise
                    last = error
                    if attempt < self.policy.max_attempts:
                        await self._back_off(adapter, attempt, error)
        assert last is not None
        raise last

    async def stream(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolLike] = (),
        settings: ModelSettings | None = None,
        response_schema: OutputSchema | None = None,
    ) -> AsyncIterator[StreamEvent]:
        last: LLMError | None = None
        for adapter in self._candidates():
            if last is not None:
                self._log_fallback(adapter, last)
            for attempt in range(1, self.policy.max_attempts + 1):
                delivered = False
                try:
                    async for event in adapter.stream(
                        messages, tools=tools, settings=settings, response_schema=response_schema
                    ):
                        delivered = True
                        yield event
                    return
                except LLMError as error:
                    if delivered:
                        raise LLMStreamInterruptedError(
                            f"stream broke after output was delivered; not re-sent ({error.message})",
                            provider=error.provider or adapter.provider,
                            model=error.model or adapter.model,
                            status_code=error.status_code,
                            request_id=error.request_id,
                        ) from error
                    if not error.retryable:
                        raise
                    last = error
                    if attempt < self.policy.max_attempts:
                        await self._back_off(adapter, attempt, error)
        assert last is not None
        raise last
