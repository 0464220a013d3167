"""Models for tests: :class:`ScriptedLLM`, :class:`FunctionLLM` and :class:`TestLLM`.

They implement :class:`~kanawa.llm.LLMAdapter` fully (``chat`` and ``stream``), so the loop cannot
tell them from a provider. Use them in your own tests in place of a model string.
"""

from __future__ import annotations

import inspect
import json
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeAlias

from kanawa.llm.base import ToolLike, tool_specs
from kanawa.llm.settings import ModelSettings
from kanawa.llm.tokens import count_message_tokens
from kanawa.types import (
    AssistantMessage,
    LLMResponse,
    Message,
    OutputSchema,
    ReasoningDelta,
    ResponseCompleted,
    StopReason,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallArgsDelta,
    ToolCallStarted,
    ToolSpec,
    Usage,
)


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """What a test model was sent on one call; kept in ``.requests`` and passed to assertions."""

    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...]
    settings: ModelSettings | None
    response_schema: OutputSchema | None
    streamed: bool


Script: TypeAlias = "LLMResponse | AssistantMessage | str | Sequence[StreamEvent]"
"""One scripted step: a whole response, an assistant message (stop reason inferred), plain text, or a
sequence of stream events ending with :class:`ResponseCompleted`."""

RequestCheck: TypeAlias = Callable[[ModelRequest], None]


def response_from(item: LLMResponse | AssistantMessage | str, *, model: str = "test") -> LLMResponse:
    """Build a full :class:`LLMResponse` from the shorthand forms, inferring the stop reason."""
    if isinstance(item, LLMResponse):
        return item
    message = AssistantMessage(text=item) if isinstance(item, str) else item
    reason = StopReason.TOOL_USE if message.tool_calls else StopReason.END_TURN
    usage = Usage(input_tokens=10, output_tokens=max(1, len(message.text) // 4), requests=1)
    return LLMResponse(message, reason, usage, model)


def events_for(response: LLMResponse, *, chunk_size: int = 8) -> list[StreamEvent]:
    """Render a response as the stream a provider would send: reasoning, text, tool calls, completion."""
    events: list[StreamEvent] = []
    message = response.message
    for part in message.reasoning:
        if part.text:
            events.append(ReasoningDelta(part.text))
    for start in range(0, len(message.text), chunk_size):
        events.append(TextDelta(message.text[start : start + chunk_size]))
    for index, call in enumerate(message.tool_calls):
        events.append(ToolCallStarted(index, call.id, call.name))
        for start in range(0, len(call.arguments), chunk_size):
            events.append(ToolCallArgsDelta(index, call.id, call.arguments[start : start + chunk_size]))
    events.append(ResponseCompleted(response))
    return events


class _TestModelBase(ABC):
    """Shared adapter plumbing: request recording, token counting, chat/stream symmetry."""

    provider = "test"

    def __init__(self, *, model: str = "test") -> None:
        self._model = model
        self.requests: list[ModelRequest] = []

    @property
    def model(self) -> str:
        return self._model

    def count_tokens(self, content: str | Sequence[Message]) -> int:
        return count_message_tokens(content)

    def normalize_model_name(self, name: str | None = None) -> str:
        return (name or self._model).strip().lower()

    def _record(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolLike],
        settings: ModelSettings | None,
        response_schema: OutputSchema | None,
        streamed: bool,
    ) -> ModelRequest:
        request = ModelRequest(tuple(messages), tuple(tool_specs(tools)), settings, response_schema, streamed)
        self.requests.append(request)
        return request

    @abstractmethod
    async def _produce(self, request: ModelRequest) -> Script:
        """Decide the answer to one recorded request."""

    async def chat(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolLike] = (),
        settings: ModelSettings | None = None,
        response_schema: OutputSchema | None = None,
    ) -> LLMResponse:
        request = self._record(messages, tools, settings, response_schema, streamed=False)
        item = await self._produce(request)
        if isinstance(item, LLMResponse | AssistantMessage | str):
            return response_from(item, model=self._model)
        final = item[-1] if item else None
        if not isinstance(final, ResponseCompleted):
            raise ValueError("a scripted stream must end with ResponseCompleted")
        return final.response

    async def stream(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolLike] = (),
        settings: ModelSettings | None = None,
        response_schema: OutputSchema | None = None,
    ) -> AsyncIterator[StreamEvent]:
        request = self._record(messages, tools, settings, response_schema, streamed=True)
        item = await self._produce(request)
        if isinstance(item, LLMResponse | AssistantMessage | str):
            events: Sequence[StreamEvent] = events_for(response_from(item, model=self._model))
        else:
            events = item
        for event in events:
            yield event


class ScriptedLLM(_TestModelBase):
    """Answers from a fixed script, one item per request, and fails loudly when the script runs out.

    ``checks`` (same length as the script, ``None`` to skip) assert on what each request carried,
    e.g. ``lambda req: assert not req.tools``; a failing check raises in the test, at that step.
    """

    def __init__(
        self,
        script: Sequence[Script],
        *,
        checks: Sequence[RequestCheck | None] = (),
        model: str = "scripted",
    ) -> None:
        super().__init__(model=model)
        self._script = list(script)
        self._checks = list(checks)
        self._position = 0

    @property
    def remaining(self) -> int:
        return len(self._script) - self._position

    async def _produce(self, request: ModelRequest) -> Script:
        index = self._position
        if index >= len(self._script):
            raise AssertionError(f"ScriptedLLM: request {index + 1} but the script has {len(self._script)} steps")
        self._position += 1
        if index < len(self._checks) and (check := self._checks[index]) is not None:
            check(request)
        return self._script[index]


ResponseFunction: TypeAlias = Callable[[ModelRequest], "Script | Awaitable[Script]"]


class FunctionLLM(_TestModelBase):
    """Calls ``fn(request)`` (sync or async) to decide each response."""

    def __init__(self, fn: ResponseFunction, *, model: str = "function") -> None:
        super().__init__(model=model)
        self._fn = fn

    async def _produce(self, request: ModelRequest) -> Script:
        result = self._fn(request)
        if inspect.isawaitable(result):
            return await result
        return result


@dataclass
class _TestLLMState:
    called: set[str] = field(default_factory=set)
    counter: int = 0


class TestLLM(_TestModelBase):
    """A model with no script: it calls every offered tool once, with arguments generated to satisfy
    the tool's JSON schema, then answers. The answer validates against the response schema when one is
    sent, else it is a short text naming the tool results it saw.
    """

    __test__ = False  # not a pytest test class

    def __init__(self, *, model: str = "test", seed: int = 0) -> None:
        super().__init__(model=model)
        self._seed = seed
        self._state = _TestLLMState()

    async def _produce(self, request: ModelRequest) -> Script:
        from kanawa.llm.schema_values import value_for_schema

        pending = [t for t in request.tools if t.name not in self._state.called]
        if pending:
            calls = []
            for spec in pending:
                self._state.called.add(spec.name)
                self._state.counter += 1
                args = value_for_schema(spec.parameters, seed=self._seed + self._state.counter)
                calls.append(ToolCall(f"call_{self._state.counter}", spec.name, json.dumps(args)))
            return AssistantMessage(text="", tool_calls=tuple(calls))
        if request.response_schema is not None:
            value = value_for_schema(request.response_schema.schema, seed=self._seed)
            return AssistantMessage(text=json.dumps(value, ensure_ascii=False))
        results = [m for m in request.messages if m.role == "tool"]
        summary = "; ".join(f"{m.name}: {m.text[:60]}" for m in results)  # type: ignore[union-attr]
        return AssistantMessage(text=f"Done. Tool results — {summary}" if summary else "Done.")
