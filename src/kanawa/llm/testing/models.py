"""Models for tests: :class:`ScriptedLLM`, :class:`FunctionLLM` and :class:`TestLLM`.

They implement :class:`~kanawa.llm.LLMAdapter` fully (``chat``, ``stream``, ``count_tokens``), so the
loop cannot tell them from a provider; use them in your own tests in place of a model string (the
string ``"test"`` resolves to :class:`TestLLM`). Each records what it was sent in ``.requests``.

A step of a script (or a :class:`FunctionLLM` answer) is one of:

* ``str`` — a plain text answer;
* :class:`~kanawa.types.AssistantMessage` — text, tool calls and reasoning; the stop reason is
  ``tool_use`` when it has tool calls, else ``end_turn``;
* :class:`~kanawa.types.LLMResponse` — taken as is;
* an ``Exception`` (usually an :class:`~kanawa.llm.errors.LLMError`) — raised by ``chat`` and by
  ``stream`` before any event, as a provider fault would be;
* a sequence of stream events ending with :class:`~kanawa.types.ResponseCompleted` — streamed
  verbatim (``chat`` returns the completed response); an ``Exception`` in the sequence is raised at
  that point, which is how a connection dropped mid-stream looks.

Shorthand answers stream as :func:`events_for` renders them and carry a :class:`~kanawa.types.Usage`
estimated offline from the request (:mod:`kanawa.llm.tokens`).
"""

from __future__ import annotations

import inspect
import json
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TypeAlias

from kanawa.llm.adapter import ToolLike, tool_specs
from kanawa.llm.lifecycle import ClosableAdapter
from kanawa.llm.settings import ModelSettings
from kanawa.llm.tokens import (
    REPLY_PRIMING_TOKENS,
    TextCounter,
    count_message_tokens,
    message_tokens,
    text_counter,
)
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
    ToolMessage,
    ToolSpec,
    Usage,
    UserMessage,
)


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """What a test model was sent on one call; kept in ``.requests`` and passed to checks."""

    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...]
    settings: ModelSettings | None
    response_schema: OutputSchema | None
    streamed: bool

    @property
    def tool_names(self) -> tuple[str, ...]:
        """Names of the tools offered, in order."""
        return tuple(spec.name for spec in self.tools)

    @property
    def last_message(self) -> Message | None:
        return self.messages[-1] if self.messages else None

    @property
    def last_user_text(self) -> str:
        """Text of the latest user message ("" when there is none)."""
        return next((m.text for m in reversed(self.messages) if isinstance(m, UserMessage)), "")

    @property
    def tool_results(self) -> tuple[ToolMessage, ...]:
        """Every tool result in the conversation so far, oldest first."""
        return tuple(m for m in self.messages if isinstance(m, ToolMessage))


StreamScript: TypeAlias = "Sequence[StreamEvent | Exception]"
Script: TypeAlias = "LLMResponse | AssistantMessage | str | Exception | StreamScript"
"""One scripted step (see the module docstring)."""

RequestCheck: TypeAlias = Callable[[ModelRequest], "bool | None"]
"""Asserts on one request: raise ``AssertionError`` (or return ``False``) to fail the test there."""

ResponseFunction: TypeAlias = Callable[[ModelRequest], "Script | Awaitable[Script]"]


def response_from(
    item: LLMResponse | AssistantMessage | str,
    *,
    model: str = "test",
    usage: Usage | None = None,
) -> LLMResponse:
    """Build a full :class:`LLMResponse` from the shorthand forms, inferring the stop reason
    (``tool_use`` with tool calls, else ``end_turn``). Without ``usage``, output tokens are estimated
    from the message and input tokens are 0."""
    if isinstance(item, LLMResponse):
        return item
    message = AssistantMessage(text=item) if isinstance(item, str) else item
    reason = StopReason.TOOL_USE if message.tool_calls else StopReason.END_TURN
    return LLMResponse(message, reason, usage=usage or _usage(message, 0, text_counter(model)), model=model)


def events_for(response: LLMResponse, *, chunk_size: int = 8) -> list[StreamEvent]:
    """Render a response as the stream a provider would send: reasoning deltas, text deltas, then per
    tool call a :class:`ToolCallStarted` and its argument deltas, and :class:`ResponseCompleted` last.
    Text and arguments are cut into ``chunk_size``-character pieces."""
    if chunk_size < 1:
        raise ValueError("chunk_size must be at least 1")
    return list(_iter_events(response, chunk_size))


def _iter_events(response: LLMResponse, chunk_size: int) -> Iterator[StreamEvent]:
    """:func:`events_for`'s events one at a time: a streaming test model makes each when it is sent,
    like a provider, instead of holding the whole stream for the length of the answer."""
    message = response.message
    for part in message.reasoning:
        for start in range(0, len(part.text), chunk_size):
            yield ReasoningDelta(part.text[start : start + chunk_size])
    for start in range(0, len(message.text), chunk_size):
        yield TextDelta(message.text[start : start + chunk_size])
    for index, call in enumerate(message.tool_calls):
        yield ToolCallStarted(index, call.id, call.name)
        for start in range(0, len(call.arguments), chunk_size):
            yield ToolCallArgsDelta(index, call.id, call.arguments[start : start + chunk_size])
    yield ResponseCompleted(response)


def _usage(message: AssistantMessage, prompt_tokens: int, count: TextCounter) -> Usage:
    reasoning = sum(count(part.text) for part in message.reasoning)
    visible = count(message.text)
    visible += sum(count(call.name) + count(call.arguments) for call in message.tool_calls)
    return Usage(
        input_tokens=prompt_tokens,
        output_tokens=max(1, visible + reasoning),
        reasoning_tokens=reasoning,
        requests=1,
    )


class _PromptTokens:
    """Counts prompts incrementally. A conversation grows by appending the same message objects, so
    each message is counted once per model instance instead of once per request (which made usage
    estimates quadratic in the conversation length)."""

    _LIMIT = 4096

    def __init__(self) -> None:
        self._memo: dict[int, tuple[Message, int]] = {}

    def __call__(self, prompt: Sequence[Message], count: TextCounter) -> int:
        if not prompt:
            return 0
        memo = self._memo
        if len(memo) > self._LIMIT:
            memo.clear()
        total = REPLY_PRIMING_TOKENS
        for message in prompt:
            hit = memo.get(id(message))
            if hit is None or hit[0] is not message:
                hit = (message, message_tokens(message, count))
                memo[id(message)] = hit
            total += hit[1]
        return total


def _check_stream_script(events: StreamScript) -> None:
    """A scripted stream ends in exactly one ``ResponseCompleted``, or stops at an exception."""
    for position, event in enumerate(events):
        if isinstance(event, Exception):
            return
        if isinstance(event, ResponseCompleted):
            if position != len(events) - 1:
                raise ValueError("a scripted stream has events after its ResponseCompleted")
            return
    raise ValueError("a scripted stream must end with ResponseCompleted (or raise an exception)")


class _TestModelBase(ClosableAdapter, ABC):
    """Shared adapter plumbing: request recording, usage estimates, chat/stream symmetry."""

    provider = "test"

    def __init__(self, *, model: str = "test") -> None:
        self._model = model
        self._responses = 0
        self._prompt_tokens = _PromptTokens()
        self.requests: list[ModelRequest] = []

    @property
    def model(self) -> str:
        return self._model

    def count_tokens(self, content: str | Sequence[Message]) -> int:
        return count_message_tokens(content, model=self._model)

    def normalize_model_name(self, name: str | None = None) -> str:
        return (name or self._model).strip().lower()

    @abstractmethod
    async def _produce(self, request: ModelRequest) -> Script:
        """Decide the answer to one recorded request."""

    async def _answer(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolLike],
        settings: ModelSettings | None,
        response_schema: OutputSchema | None,
        streamed: bool,
    ) -> LLMResponse | StreamScript:
        """Record the request, produce the step, raise a scripted error, expand a shorthand."""
        request = ModelRequest(tuple(messages), tuple(tool_specs(tools)), settings, response_schema, streamed)
        self.requests.append(request)
        item = await self._produce(request)
        raw: object = item  # a FunctionLLM may return anything at run time
        if not isinstance(raw, LLMResponse | AssistantMessage | Exception | Sequence):
            raise TypeError(f"{type(self).__name__}: a step cannot be a {type(raw).__name__}")
        if isinstance(item, Exception):
            raise item
        if isinstance(item, LLMResponse):
            return item
        if isinstance(item, AssistantMessage | str):
            message = AssistantMessage(text=item) if isinstance(item, str) else item
            count = text_counter(self._model)
            usage = _usage(message, self._prompt_tokens(request.messages, count), count)
            self._responses += 1
            return replace(
                response_from(message, model=self._model, usage=usage), response_id=f"resp_{self._responses}"
            )
        _check_stream_script(item)
        return item

    async def chat(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolLike] = (),
        settings: ModelSettings | None = None,
        response_schema: OutputSchema | None = None,
    ) -> LLMResponse:
        answer = await self._answer(messages, tools, settings, response_schema, streamed=False)
        if isinstance(answer, LLMResponse):
            return answer
        for event in answer:
            if isinstance(event, Exception):
                raise event
            if isinstance(event, ResponseCompleted):
                return event.response
        raise AssertionError("unreachable: stream scripts are checked to end with ResponseCompleted")

    async def stream(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolLike] = (),
        settings: ModelSettings | None = None,
        response_schema: OutputSchema | None = None,
    ) -> AsyncIterator[StreamEvent]:
        answer = await self._answer(messages, tools, settings, response_schema, streamed=True)
        events = _iter_events(answer, 8) if isinstance(answer, LLMResponse) else answer
        for event in events:
            if isinstance(event, Exception):
                raise event
            yield event


class ScriptedLLM(_TestModelBase):
    """Answers from a fixed script, one step per request, and fails loudly when the script runs out.

    ``checks`` line up with the script (``None`` skips a step; it may be shorter than the script) and
    assert on what each request carried::

        ScriptedLLM(
            [AssistantMessage(tool_calls=(ToolCall("c1", "add", '{"a": 1, "b": 2}'),)), "3"],
            checks=[lambda req: "add" in req.tool_names, lambda req: req.tool_results[0].text == "3"],
        )

    A check that raises ``AssertionError`` or returns ``False`` fails the test at that step.
    """

    def __init__(
        self,
        script: Sequence[Script],
        *,
        checks: Sequence[RequestCheck | None] = (),
        model: str = "scripted",
    ) -> None:
        super().__init__(model=model)
        if len(checks) > len(script):
            raise ValueError(f"ScriptedLLM: {len(checks)} checks for a script of {len(script)} steps")
        for step in script:
            if not isinstance(step, LLMResponse | AssistantMessage | str | Exception):
                _check_stream_script(step)
        self._script = list(script)
        self._checks = list(checks)
        self._position = 0

    @property
    def remaining(self) -> int:
        """Steps not yet used; ``0`` once the conversation went as scripted."""
        return len(self._script) - self._position

    async def _produce(self, request: ModelRequest) -> Script:
        index = self._position
        if index >= len(self._script):
            last = request.last_message.role if request.last_message else "no"
            raise AssertionError(
                f"ScriptedLLM: request {index + 1} arrived but the script has only {len(self._script)} "
                f"step(s) (the request ends with a {last} message)"
            )
        self._position += 1
        check = self._checks[index] if index < len(self._checks) else None
        if check is not None and check(request) is False:
            raise AssertionError(f"ScriptedLLM: the check for step {index + 1} rejected the request")
        return self._script[index]


class FunctionLLM(_TestModelBase):
    """Calls ``fn(request)`` — sync or async — to decide each answer; ``fn`` may raise to simulate a
    provider fault. ``request.streamed`` tells whether ``stream`` was called."""

    def __init__(self, fn: ResponseFunction, *, model: str = "function") -> None:
        super().__init__(model=model)
        self._fn = fn

    async def _produce(self, request: ModelRequest) -> Script:
        result = self._fn(request)
        if not isinstance(result, str) and inspect.isawaitable(result):  # a text needs no ABC check
            return await result
        return result


class TestLLM(_TestModelBase):
    """A model with no script, for smoke tests and ``model="test"``.

    Per conversation it first calls every offered tool it has not called yet (all in one response,
    arguments generated to satisfy each tool's JSON schema by
    :func:`~kanawa.llm.testing.schema_values.value_for_schema`, which sends a parameter's first ``examples``
    entry when the tool declares one). Then it answers with a short text naming the tool results it
    saw — ``Done. Tool results: calculator → 403.0; read_file ✗ tool invoke error: …`` — or, when a
    response schema is sent, with JSON valid against it: generated by ``value_for_schema``, with that
    same sentence (once there are tool results) in the first top-level free-text string property — type
    ``string``, no ``enum``/``const``/``pattern``/``format``, cut to its ``maxLength`` — found after
    following a top-level ``$ref`` (:func:`~kanawa.llm.testing.answers.with_text_in_first_string_field`).
    It honours ``tool_choice`` (``"none"``, a tool name) and ``parallel_tool_calls=False`` (one call
    per turn). It keeps no state between requests: the conversation history decides, so one instance
    serves any number of runs. ``seed`` varies the generated values deterministically.
    """

    __test__ = False  # not a pytest test class

    def __init__(self, *, model: str = "test", seed: int = 0) -> None:
        super().__init__(model=model)
        self._seed = seed

    async def _produce(self, request: ModelRequest) -> Script:
        from kanawa.llm.testing.answers import tool_results_summary, with_text_in_first_string_field
        from kanawa.llm.testing.schema_values import value_for_schema  # only TestLLM needs these

        earlier = [c for m in request.messages if isinstance(m, AssistantMessage) for c in m.tool_calls]
        called = {call.name for call in earlier}
        pending = [spec for spec in request.tools if spec.name not in called]
        choice = request.settings.tool_choice if request.settings else None
        if choice == "none":
            pending = []
        elif choice not in (None, "auto", "required"):
            pending = [spec for spec in pending if spec.name == choice]
        if request.settings is not None and request.settings.parallel_tool_calls is False:
            pending = pending[:1]
        if pending:
            calls = []
            for number, spec in enumerate(pending, start=len(earlier) + 1):
                arguments = value_for_schema(spec.parameters, seed=self._seed + number)
                calls.append(ToolCall(f"call_{number}", spec.name, json.dumps(arguments, ensure_ascii=False)))
            return AssistantMessage(tool_calls=tuple(calls))
        summary = tool_results_summary(request.tool_results)
        text = f"Done. Tool results: {summary}" if summary else "Done."
        if request.response_schema is not None:
            schema = request.response_schema.schema
            value = value_for_schema(schema, seed=self._seed)
            if summary:
                value = with_text_in_first_string_field(schema, value, text)
            return AssistantMessage(text=json.dumps(value, ensure_ascii=False))
        return AssistantMessage(text=text)


__all__ = [
    "FunctionLLM",
    "ModelRequest",
    "RequestCheck",
    "ResponseFunction",
    "Script",
    "ScriptedLLM",
    "TestLLM",
    "events_for",
    "response_from",
]
