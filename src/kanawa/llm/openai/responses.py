"""``OpenAIResponsesAdapter``: the OpenAI Responses API (GPT-5 family) behind an
:class:`~kanawa.llm.LLMAdapter`.

The ``openai:`` provider of :func:`kanawa.llm.resolve_model` (seed 001 §3, seed 002 §3-3). Request
bodies come from :mod:`kanawa.llm.openai.responses_payload`, answers are read by
:mod:`kanawa.llm.openai.responses_output`; this module owns the client, timeouts, the model catalogue
check, error mapping and the audit log.

Contract:

* The key comes from ``api_key`` or ``OPENAI_API_KEY``; without one the constructor raises
  :class:`~kanawa.llm.LLMAuthError` ("OPENAI_API_KEY is not set: …"). ``base_url`` is normalised as
  seed 001 §3.3 says (trailing ``/v1`` added). Pass ``client=`` to use a preconfigured ``AsyncOpenAI``.
* The SDK never retries (``max_retries=0``): :mod:`kanawa.llm.retry` decides.
* ``settings.timeout`` (else the adapter's ``timeout``, else 600 s) bounds the whole call, the stream
  included; it is also given to the SDK so a stalled read fails on its own.
* :func:`~kanawa.llm.openai.catalogue.check_settings` refuses settings the model does not accept
  before anything is sent.
* The SDK is used for transport only (``POST /responses`` with raw JSON in and out), so new
  response item and event types never break parsing.
* Only :class:`LLMError` subclasses escape (mapping in :mod:`kanawa.llm.openai.common`), sealed by
  :func:`~kanawa.llm.errors.seal_errors` (keys masked, no SDK exception in the chain); a stream
  that ends before ``response.completed`` is an :class:`~kanawa.llm.LLMConnectionError`.
* With ``OPENAI_GPT5_AUDIT_LOG=true`` each call logs ``responses_api_request`` and then
  ``responses_api_success`` or ``responses_api_error`` (:mod:`kanawa.llm.openai.audit`).
* When ``settings.stream`` is false, :meth:`stream` makes one non-streaming request and replays the
  whole answer as events (seed 001 §3.6: ``enable_stream`` AND the call's stream flag).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence

import httpx2
import openai
from openai import AsyncStream

from kanawa.llm.base import ToolLike, canonical_model_name
from kanawa.llm.errors import LLMError, seal_errors, seal_stream_errors
from kanawa.llm.lifecycle import ClosableAdapter
from kanawa.llm.openai.audit import AuditContext, audit_failure, audit_request, audit_success
from kanawa.llm.openai.catalogue import check_settings
from kanawa.llm.openai.common import DEFAULT_TIMEOUT, MAPPED_EXCEPTIONS, build_client, map_openai_error
from kanawa.llm.openai.credentials import base_url_host, normalize_base_url
from kanawa.llm.openai.responses_compact import compacted_messages
from kanawa.llm.openai.responses_output import ResponsesStreamAssembler, completed_response, parse_usage
from kanawa.llm.openai.responses_payload import (
    build_responses_payload,
    messages_to_responses_input,
    response_format_of,
)
from kanawa.llm.settings import ModelSettings
from kanawa.llm.tokens import count_message_tokens
from kanawa.secrets import guard_credentials
from kanawa.types import (
    JsonObject,
    LLMResponse,
    Message,
    OutputSchema,
    ReasoningDelta,
    ResponseCompleted,
    StreamEvent,
    TextDelta,
    ToolCallArgsDelta,
    ToolCallStarted,
    Usage,
)

__all__ = ["OpenAIResponsesAdapter"]

PROVIDER = "openai"
_DEFAULT_HOST = "api.openai.com"


def _param_of(exc: BaseException) -> str | None:
    return exc.param if isinstance(exc, openai.APIError) else None


class OpenAIResponsesAdapter(ClosableAdapter):
    """GPT-5 family models over ``POST /v1/responses`` (module docstring has the contract)."""

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        organization: str | None = None,
        settings: ModelSettings | None = None,
        timeout: float | None = None,
        client: openai.AsyncOpenAI | None = None,
    ) -> None:
        self._model = self.normalize_model_name(model)
        self._settings = settings or ModelSettings()
        self._timeout = timeout
        self._owns_client = client is None
        self._client = client or build_client(
            api_key=api_key,
            base_url=normalize_base_url(base_url),
            organization=organization,
            timeout=timeout,
        )
        self._host = base_url_host(self.base_url)
        guard_credentials(self._client.api_key)

    # ---------------------------------------------------------------- identity

    async def aclose(self) -> None:
        """Close the HTTP connections of a client this adapter built (a given ``client=`` is left open)."""
        if self._owns_client:
            await self._client.close()

    @property
    def provider(self) -> str:
        return PROVIDER

    @property
    def model(self) -> str:
        return self._model

    @property
    def base_url(self) -> str:
        """The API root requests go to (``https://api.openai.com/v1/`` unless configured)."""
        return str(self._client.base_url)

    def normalize_model_name(self, name: str | None = None) -> str:
        """Lower-case, no ``openai:`` prefix, blanks/underscores as hyphens (``GPT_5`` → ``gpt-5``)."""
        return canonical_model_name(self._model if name is None else name, prefixes=(f"{PROVIDER}:",))

    def count_tokens(self, content: str | Sequence[Message]) -> int:
        """Offline estimate of the prompt size (:func:`kanawa.llm.tokens.count_message_tokens`)."""
        return count_message_tokens(content, model=self._model)

    # ------------------------------------------------------------------ helpers
    def _prepare(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolLike],
        settings: ModelSettings | None,
        response_schema: OutputSchema | None,
        *,
        stream: bool,
    ) -> tuple[ModelSettings, JsonObject, AuditContext]:
        merged = self._settings.merged(settings)
        check_settings(self._model, merged)
        payload = build_responses_payload(
            self._model,
            messages,
            tools=tools,
            settings=merged,
            response_schema=response_schema,
            stream=stream,
        )
        context = AuditContext(
            model=self._model,
            response_format=response_format_of(merged, response_schema),
            stream=payload.get("stream") is True,
            tool_count=len(tools),
            input_message_count=len(messages),
            base_url_host=self._host,
            use_custom_base_url=self._host != _DEFAULT_HOST,
        )
        return merged, payload, context

    def _timeout_for(self, settings: ModelSettings) -> float:
        for value in (settings.timeout, self._timeout):
            if value is not None:
                return value
        return DEFAULT_TIMEOUT

    def _failed(
        self,
        exc: BaseException,
        context: AuditContext,
        *,
        streaming: bool = False,
        request_id: str | None = None,
    ) -> LLMError:
        error = map_openai_error(exc, provider=PROVIDER, model=self._model, streaming=streaming)
        if error.request_id is None:
            error.request_id = request_id
        audit_failure(error, context, param=_param_of(exc))
        return error

    # --------------------------------------------------------------------- chat
    @seal_errors
    async def chat(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolLike] = (),
        settings: ModelSettings | None = None,
        response_schema: OutputSchema | None = None,
    ) -> LLMResponse:
        """Send one non-streaming request and return the whole answer."""
        merged, payload, context = self._prepare(messages, tools, settings, response_schema, stream=False)
        return await self._send(payload, context, merged)

    async def _send(self, payload: JsonObject, context: AuditContext, settings: ModelSettings) -> LLMResponse:
        timeout = self._timeout_for(settings)
        audit_request(context)
        try:
            async with asyncio.timeout(timeout):
                raw = await self._client.post(
                    "/responses", cast_to=httpx2.Response, body=payload, options={"timeout": timeout}
                )
                data = raw.json()
        except MAPPED_EXCEPTIONS as exc:
            raise self._failed(exc, context) from None
        request_id = raw.headers.get("x-request-id")
        return completed_response(
            data, request_id=request_id, model=self._model, context=context, stop=settings.stop
        )

    # --------------------------------------------------------------- compaction
    @seal_errors
    async def compact_history(
        self, messages: Sequence[Message], *, settings: ModelSettings | None = None
    ) -> tuple[list[Message], Usage]:
        """OpenAI's own compaction (``responses/compact``) of ``messages``: the messages that replace
        those after the instructions (:mod:`kanawa.llm.openai.responses_compact`) and the usage billed.
        Used by :class:`~kanawa.loop.compaction.NativeCompaction`."""
        merged = self._settings.merged(settings)
        instructions, items = messages_to_responses_input(messages)
        timeout = self._timeout_for(merged)
        context = AuditContext(
            model=self._model,
            response_format="text",
            stream=False,
            tool_count=0,
            input_message_count=len(messages),
            base_url_host=self._host,
            use_custom_base_url=self._host != _DEFAULT_HOST,
        )
        try:
            async with asyncio.timeout(timeout):
                raw = await self._client.responses.with_raw_response.compact(
                    model=self._model,
                    input=items,  # type: ignore[arg-type]  # the payload builder's items are the params
                    instructions=instructions if instructions is not None else openai.omit,
                    timeout=timeout,
                )
                data = raw.http_response.json()  # as sent: user items are not an SDK output type
        except MAPPED_EXCEPTIONS as exc:
            raise self._failed(exc, context) from None
        output = data.get("output") if isinstance(data, dict) else None
        usage = parse_usage(data.get("usage") if isinstance(data, dict) else None)
        return compacted_messages(output if isinstance(output, list) else []), usage

    # ------------------------------------------------------------------- stream
    @seal_stream_errors
    async def stream(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolLike] = (),
        settings: ModelSettings | None = None,
        response_schema: OutputSchema | None = None,
    ) -> AsyncIterator[StreamEvent]:
        """Yield reasoning/text/tool-call deltas as they arrive, then exactly one ``ResponseCompleted``."""
        merged, payload, context = self._prepare(messages, tools, settings, response_schema, stream=True)
        if payload.get("stream") is not True:
            response = await self._send(payload, context, merged)
            for event in _replay(response):
                yield event
            return
        async for event in self._stream(payload, context, merged):
            yield event

    async def _stream(
        self, payload: JsonObject, context: AuditContext, settings: ModelSettings
    ) -> AsyncIterator[StreamEvent]:
        timeout = self._timeout_for(settings)
        deadline = asyncio.get_running_loop().time() + timeout
        audit_request(context)
        try:
            async with asyncio.timeout_at(deadline):
                sdk_stream = await self._client.post(
                    "/responses",
                    cast_to=object,
                    body=payload,
                    options={"timeout": timeout},
                    stream=True,
                    stream_cls=AsyncStream[object],
                )
        except MAPPED_EXCEPTIONS as exc:
            raise self._failed(exc, context) from None
        request_id = sdk_stream.response.headers.get("x-request-id")
        assembler = ResponsesStreamAssembler(model=self._model, stop=settings.stop, request_id=request_id)
        try:
            while not assembler.finished:
                try:
                    async with asyncio.timeout_at(deadline):
                        event = await anext(sdk_stream)
                except StopAsyncIteration:
                    error = assembler.unfinished_error()
                    audit_failure(error, context)
                    raise error from None
                except MAPPED_EXCEPTIONS as exc:
                    raise self._failed(exc, context, streaming=True, request_id=request_id) from None
                if not isinstance(event, dict):
                    continue
                try:
                    produced = assembler.feed(event)
                except LLMError as error:
                    audit_failure(error, context, param=_event_param(event))
                    raise
                for item in produced:
                    if isinstance(item, ResponseCompleted):
                        model = item.response.model or None
                        audit_success(context, response_model=model, request_id=request_id)
                    yield item
        finally:
            await sdk_stream.close()


def _event_param(event: dict[object, object]) -> str | None:
    source = event.get("error")
    if not isinstance(source, dict):
        response = event.get("response")
        source = response.get("error") if isinstance(response, dict) else event
    param = source.get("param") if isinstance(source, dict) else None
    return param if isinstance(param, str) else None


def _replay(response: LLMResponse) -> list[StreamEvent]:
    """A whole response as the events a stream would have produced (for ``settings.stream=False``)."""
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
