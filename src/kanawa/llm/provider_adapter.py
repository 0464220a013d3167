"""The one skeleton every provider adapter runs on (seed 002 §3-3).

A provider adapter differs from the others only in what it sends (its payload), how it reads the
answer (its parsing) and how its SDK fails (its errors). Everything around that is the same and lives
here once: merging the adapter's settings under the call's, the deadline that bounds a call — the
whole stream included —, mapping SDK exceptions only where the SDK is called, filling provider and
model into errors raised by parsing, sealing every error that leaves (:func:`seal_errors`), reading a
stream into an assembler and ending it with exactly one :class:`ResponseCompleted`, closing the SDK
stream on every exit, and closing a client the adapter built.

A provider subclasses :class:`ProviderAdapter` and fills in the hooks: ``_build`` (the request body),
``_send`` / ``_parse`` (one whole answer), ``_open`` / ``_items`` / ``_assembly`` / ``_close`` (a
stream) and ``_map_error``; a constructor that builds its own SDK client sets ``_close_owned``.
"""

from __future__ import annotations

import asyncio
import contextlib
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypedDict, TypeVar

from kanawa.llm.adapter import ToolLike, canonical_model_name, tool_specs
from kanawa.llm.errors import LLMError, seal_errors, seal_stream_errors
from kanawa.llm.lifecycle import ClosableAdapter
from kanawa.llm.settings import ModelSettings
from kanawa.llm.tokens import count_message_tokens
from kanawa.types import (
    LLMResponse,
    Message,
    OutputSchema,
    ReasoningDelta,
    ResponseCompleted,
    StreamEvent,
    TextDelta,
    ToolCallArgsDelta,
    ToolCallStarted,
    ToolSpec,
)

BodyT = TypeVar("BodyT")
HandleT = TypeVar("HandleT")
T = TypeVar("T")

_END = object()


class ConnectionOptions(TypedDict, total=False):
    """The options every provider adapter takes by keyword.

    ``api_key`` (else the provider's environment variable), ``base_url`` (another endpoint: a proxy,
    a gateway, a test server), ``settings`` (this adapter's defaults, merged under each call's) and
    ``timeout`` (seconds for one call, the whole stream included, when the settings give none).
    """

    api_key: str | None
    base_url: str | None
    settings: ModelSettings | None
    timeout: float | None


class PayloadArguments(TypedDict):
    """What every provider's payload builder takes, by keyword."""

    messages: Sequence[Message]
    tools: Sequence[ToolSpec]
    settings: ModelSettings
    response_schema: OutputSchema | None


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """One call as the loop asked for it: settings already merged over the adapter's, tools as specs,
    and the timeout that bounds the call (``None``: the SDK's own alone)."""

    messages: Sequence[Message]
    tools: list[ToolSpec]
    settings: ModelSettings
    response_schema: OutputSchema | None
    stream: bool
    timeout: float | None

    def arguments(self) -> PayloadArguments:
        return PayloadArguments(
            messages=self.messages,
            tools=self.tools,
            settings=self.settings,
            response_schema=self.response_schema,
        )


@dataclass(frozen=True, slots=True)
class Call(Generic[BodyT]):
    """One call's request: the provider's body, the merged settings and the timeout that bounds it."""

    body: BodyT
    settings: ModelSettings
    timeout: float | None


def _never_done() -> bool:
    return False


@dataclass(frozen=True, slots=True)
class Assembly:
    """How one stream's items become events: ``feed`` an item, get its events; ``done`` says the
    provider declared the answer complete (nothing after it is read); ``finish`` builds the response
    or raises for a stream that ended too soon."""

    feed: Callable[[Any], Iterable[StreamEvent]]
    finish: Callable[[], LLMResponse]
    done: Callable[[], bool] = _never_done


class ProviderAdapter(ClosableAdapter, ABC, Generic[BodyT, HandleT]):
    """The :class:`~kanawa.llm.LLMAdapter` skeleton; subclasses supply payload, parsing and errors.

    ``SDK_ERRORS`` are what the provider's SDK and transport raise for provider faults; they are
    caught only around SDK calls and handed to ``_map_error`` — anything else is a bug and propagates.
    ``DEFAULT_TIMEOUT`` applies when neither the call's settings nor the constructor give one (``None``:
    no deadline of kanawa's own, the SDK's timeout alone).
    """

    provider: ClassVar[str]
    NAME_PREFIXES: ClassVar[tuple[str, ...]] = ()
    DEFAULT_TIMEOUT: ClassVar[float | None] = None
    SDK_ERRORS: ClassVar[tuple[type[BaseException], ...]] = ()

    def __init__(self, model: str, options: ConnectionOptions) -> None:
        self._model = model
        self._settings = options.get("settings") or ModelSettings()
        self._request_timeout = options.get("timeout")
        self._close_owned: Callable[[], Awaitable[object]] | None = None
        """The ``close`` of a client this adapter built; a client the caller passed is theirs to close."""

    @property
    def model(self) -> str:
        return self._model

    async def aclose(self) -> None:
        """Close the HTTP connections of a client this adapter built (a given ``client=`` is left open)."""
        if self._close_owned is not None:
            await self._close_owned()

    def count_tokens(self, content: str | Sequence[Message]) -> int:
        """An offline estimate of the prompt size (never a provider's counting endpoint)."""
        return count_message_tokens(content, model=self._model)

    def normalize_model_name(self, name: str | None = None) -> str:
        """Seed 002 §3-3: lower-case, spaces/underscores → hyphens, no provider prefix
        (``"Anthropic:Claude_3_Opus"`` → ``"claude-3-opus"``). Requests send the model as given."""
        return canonical_model_name(self._model if name is None else name, prefixes=self.NAME_PREFIXES)

    # ------------------------------------------------------------------------------ the skeleton

    def _call(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolLike],
        settings: ModelSettings | None,
        response_schema: OutputSchema | None,
        *,
        stream: bool,
    ) -> Call[BodyT]:
        merged = self._settings.merged(settings)
        timeout = next(
            (t for t in (merged.timeout, self._request_timeout) if t is not None), self.DEFAULT_TIMEOUT
        )
        request = ChatRequest(messages, tool_specs(tools), merged, response_schema, stream, timeout)
        return Call(self._build(request), merged, timeout)

    @seal_errors
    async def chat(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolLike] = (),
        settings: ModelSettings | None = None,
        response_schema: OutputSchema | None = None,
    ) -> LLMResponse:
        """One request, the whole answer back."""
        return await self._whole(self._call(messages, tools, settings, response_schema, stream=False))

    async def _whole(self, call: Call[BodyT]) -> LLMResponse:
        raw = await self._guarded(call, self._send(call))
        try:
            return self._parse(raw, call)
        except LLMError as error:
            raise self._filled(error) from None

    async def _guarded(self, call: Call[BodyT], request: Awaitable[T]) -> T:
        """The error path of every whole request (``chat``, and an adapter's own endpoints such as
        OpenAI's ``responses/compact``): the call's timeout bounds it, the SDK's errors are mapped by
        ``_map_error`` and every :class:`LLMError` names the model."""
        try:
            try:
                async with asyncio.timeout(call.timeout):
                    return await request
            except self.SDK_ERRORS as exc:
                raise self._map_error(exc, call, None) from None
        except LLMError as error:
            raise self._filled(error) from None

    @seal_stream_errors
    async def stream(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolLike] = (),
        settings: ModelSettings | None = None,
        response_schema: OutputSchema | None = None,
    ) -> AsyncIterator[StreamEvent]:
        """Deltas as they arrive, then exactly one ``ResponseCompleted``; the timeout bounds it all.
        A call the provider answers whole (``_streams`` false) is replayed as the events of a stream."""
        call = self._call(messages, tools, settings, response_schema, stream=True)
        if not self._streams(call):
            for event in replayed(await self._whole(call)):
                yield event
            return
        deadline = None if call.timeout is None else asyncio.get_running_loop().time() + call.timeout
        handle: HandleT | None = None
        try:
            try:
                async with asyncio.timeout_at(deadline):
                    handle = await self._open(call)
            except self.SDK_ERRORS as exc:
                raise self._map_error(exc, call, None) from None
            assembly = self._assembly(call, handle)
            items = self._items(handle)
            while not assembly.done():
                item = await self._next(items, deadline, call, handle)
                if item is _END:
                    break
                for event in assembly.feed(item):
                    yield event
            response = assembly.finish()
        except LLMError as error:
            raise self._filled(error) from None
        finally:
            if handle is not None:
                with contextlib.suppress(*self.SDK_ERRORS):
                    await self._close(handle)
        yield ResponseCompleted(response)

    async def _next(
        self, items: AsyncIterator[Any], deadline: float | None, call: Call[BodyT], handle: HandleT
    ) -> Any:
        try:
            async with asyncio.timeout_at(deadline):
                return await anext(items, _END)
        except self.SDK_ERRORS as exc:
            raise self._map_error(exc, call, handle) from None

    def _filled(self, error: LLMError) -> LLMError:
        """Errors raised by parsing know their provider at most; the adapter adds what it knows."""
        error.provider = error.provider or self.provider
        error.model = error.model or self._model
        return error

    # -------------------------------------------------------------------------- provider hooks

    @abstractmethod
    def _build(self, request: ChatRequest) -> BodyT:
        """The provider's request body."""

    @abstractmethod
    async def _send(self, call: Call[BodyT]) -> Any:
        """Send a non-streaming request; return the raw answer for :meth:`_parse`."""

    @abstractmethod
    def _parse(self, raw: Any, call: Call[BodyT]) -> LLMResponse:
        """The raw answer of :meth:`_send` as an :class:`LLMResponse`."""

    @abstractmethod
    async def _open(self, call: Call[BodyT]) -> HandleT:
        """Send a streaming request; return the SDK's stream."""

    @abstractmethod
    def _items(self, handle: HandleT) -> AsyncIterator[Any]:
        """The stream's items (events, chunks), in order."""

    @abstractmethod
    def _assembly(self, call: Call[BodyT], handle: HandleT) -> Assembly:
        """A fresh assembler for one stream."""

    @abstractmethod
    async def _close(self, handle: HandleT) -> None:
        """Close the SDK's stream (runs on every exit, errors suppressed)."""

    @abstractmethod
    def _map_error(self, exc: BaseException, call: Call[BodyT], handle: HandleT | None) -> LLMError:
        """An SDK exception → :class:`LLMError`; ``handle`` is the open stream, ``None`` before one."""

    def _streams(self, call: Call[BodyT]) -> bool:
        """Whether this call streams (a provider may answer some streaming calls whole)."""
        return True


def replayed(response: LLMResponse) -> list[StreamEvent]:
    """A whole response as the events a stream would have produced."""
    message = response.message
    events: list[StreamEvent] = [ReasoningDelta(p.text) for p in message.reasoning if p.text]
    if message.text:
        events.append(TextDelta(message.text))
    for index, call in enumerate(message.tool_calls):
        events.append(ToolCallStarted(index, call.id, call.name))
        if call.arguments:
            events.append(ToolCallArgsDelta(index, call.id, call.arguments))
    events.append(ResponseCompleted(response))
    return events


__all__ = [
    "Assembly",
    "Call",
    "ChatRequest",
    "ConnectionOptions",
    "PayloadArguments",
    "ProviderAdapter",
    "replayed",
]
