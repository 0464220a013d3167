"""Seed 002 §7: same-model retry ×3 with backoff (honouring Retry-After), then the fallback model."""

from __future__ import annotations

import random

import pytest

from kanawa.llm.errors import (
    LLMAuthError,
    LLMBadRequestError,
    LLMConnectionError,
    LLMError,
    LLMRateLimitError,
    LLMStreamInterruptedError,
    LLMTimeoutError,
)
from kanawa.llm.models import resolve_model
from kanawa.llm.retry import NO_RETRY, RetryingLLM, RetryPolicy
from kanawa.llm.testing import FunctionLLM, ModelRequest, ScriptedLLM
from kanawa.types import (
    AssistantMessage,
    LLMResponse,
    ResponseCompleted,
    StopReason,
    StreamEvent,
    TextDelta,
    UserMessage,
)

MESSAGES = [UserMessage("hi")]


class Sleeps:
    """Records the back-off delays instead of sleeping."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def failing_then(errors: list[LLMError], answer: str = "ok", *, model: str = "m") -> FunctionLLM:
    queue = list(errors)

    def respond(_: ModelRequest) -> str:
        if queue:
            raise queue.pop(0)
        return answer

    return FunctionLLM(respond, model=model)


async def test_retryable_error_is_retried_on_same_model_then_succeeds() -> None:
    primary = failing_then(
        [LLMConnectionError("502", status_code=502), LLMTimeoutError("408", status_code=408)]
    )
    sleeps = Sleeps()
    llm = RetryingLLM(primary, sleep=sleeps)
    response = await llm.chat(MESSAGES)
    assert response.message.text == "ok"
    assert len(primary.requests) == 3
    assert len(sleeps.delays) == 2


async def test_three_attempts_then_fallback_model() -> None:
    primary = failing_then([LLMConnectionError("502", status_code=502)] * 3)
    fallback = failing_then([], answer="from fallback", model="fb")
    sleeps = Sleeps()
    llm = RetryingLLM(primary, fallbacks=[fallback], sleep=sleeps)
    response = await llm.chat(MESSAGES)
    assert response.message.text == "from fallback"
    assert len(primary.requests) == 3
    assert len(fallback.requests) == 1


async def test_all_models_exhausted_raises_last_error() -> None:
    primary = failing_then([LLMConnectionError("p", status_code=503)] * 3)
    fallback = failing_then([LLMRateLimitError("f", status_code=429)] * 3, model="fb")
    llm = RetryingLLM(primary, fallbacks=[fallback], sleep=Sleeps())
    with pytest.raises(LLMRateLimitError):
        await llm.chat(MESSAGES)
    assert len(fallback.requests) == 3


@pytest.mark.parametrize("error", [LLMBadRequestError("bad", status_code=400), LLMAuthError("no key")])
async def test_non_retryable_error_is_raised_at_once_without_fallback(error: LLMError) -> None:
    primary = failing_then([error])
    fallback = failing_then([], model="fb")
    llm = RetryingLLM(primary, fallbacks=[fallback], sleep=Sleeps())
    with pytest.raises(type(error)):
        await llm.chat(MESSAGES)
    assert len(primary.requests) == 1
    assert fallback.requests == []


async def test_retry_after_is_honoured_exactly() -> None:
    primary = failing_then([LLMRateLimitError("slow down", status_code=429, retry_after=7.5)])
    sleeps = Sleeps()
    await RetryingLLM(primary, sleep=sleeps).chat(MESSAGES)
    assert sleeps.delays == [7.5]


async def test_retry_after_is_capped() -> None:
    primary = failing_then([LLMRateLimitError("slow down", status_code=429, retry_after=3600)])
    sleeps = Sleeps()
    await RetryingLLM(primary, policy=RetryPolicy(max_retry_after=30), sleep=sleeps).chat(MESSAGES)
    assert sleeps.delays == [30]


def test_backoff_is_exponential_with_full_jitter() -> None:
    policy = RetryPolicy(initial_delay=1.0, multiplier=2.0, max_delay=5.0)
    error = LLMConnectionError("x")
    rng = random.Random(1)
    for attempt, ceiling in [(1, 1.0), (2, 2.0), (3, 4.0), (4, 5.0), (9, 5.0)]:
        delays = [policy.delay(attempt, error, rng=rng) for _ in range(200)]
        assert all(0.0 <= d <= ceiling for d in delays)
        assert max(delays) > ceiling * 0.8  # jitter spreads over the whole window


def test_policy_rejects_nonsense() -> None:
    with pytest.raises(ValueError, match="max_attempts"):
        RetryPolicy(max_attempts=0)


def _stream_events(text: str) -> list[StreamEvent]:
    response = LLMResponse(AssistantMessage(text=text), StopReason.END_TURN)
    return [TextDelta(text), ResponseCompleted(response)]


async def test_stream_failing_before_output_is_retried() -> None:
    calls = {"n": 0}

    async def respond(_: ModelRequest) -> list[StreamEvent]:
        calls["n"] += 1
        if calls["n"] == 1:
            raise LLMConnectionError("connection refused")
        return _stream_events("hello")

    llm = RetryingLLM(FunctionLLM(respond), sleep=Sleeps())
    events = [e async for e in llm.stream(MESSAGES)]
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["hello"]
    assert calls["n"] == 2


class BreaksMidStream(ScriptedLLM):
    """Yields one delta, then fails as a dropped connection would."""

    async def stream(self, messages, *, tools=(), settings=None, response_schema=None):  # type: ignore[no-untyped-def,override]
        self.requests.append(ModelRequest(tuple(messages), (), settings, response_schema, True))
        yield TextDelta("partial ")
        raise LLMConnectionError("peer closed connection", status_code=None)


async def test_stream_broken_after_output_is_not_resent() -> None:
    primary = BreaksMidStream([])
    fallback = failing_then([], model="fb")
    llm = RetryingLLM(primary, fallbacks=[fallback], sleep=Sleeps())
    seen: list[StreamEvent] = []

    async def consume() -> None:
        async for event in llm.stream(MESSAGES):
            seen.append(event)

    with pytest.raises(LLMStreamInterruptedError) as info:
        await consume()
    assert seen == [TextDelta("partial ")]  # the client saw the partial text exactly once
    assert isinstance(info.value.__cause__, LLMConnectionError)
    assert not info.value.retryable
    assert len(primary.requests) == 1
    assert fallback.requests == []


def test_resolve_model_wraps_providers_but_not_test_models() -> None:
    assert not isinstance(resolve_model("test"), RetryingLLM)
    fallback = failing_then([])
    wrapped = resolve_model("test", fallback_model=fallback)
    assert isinstance(wrapped, RetryingLLM)
    assert wrapped.fallbacks == (fallback,)
    assert isinstance(resolve_model(fallback, retry_policy=NO_RETRY), RetryingLLM)
