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

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import ClassVar, Unpack

import httpx2
import openai
from openai import AsyncStream
from openai._types import RequestOptions

from kanawa.llm.adapter import canonical_model_name
from kanawa.llm.errors import LLMError, seal_errors
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
from kanawa.llm.provider_adapter import Assembly, Call, ChatRequest, ConnectionOptions, ProviderAdapter
from kanawa.llm.settings import ModelSettings
from kanawa.secrets import guard_credentials
from kanawa.types import JsonObject, LLMResponse, Message, ResponseCompleted, StreamEvent, Usage

__all__ = ["OpenAIResponsesAdapter"]

PROVIDER = "openai"
_DEFAULT_HOST = "api.openai.com"


def _param_of(exc: BaseException) -> str | None:
    return exc.param if isinstance(exc, openai.APIError) else None


@dataclass(frozen=True, slots=True)
class _Request:
    payload: JsonObject
    context: AuditContext


class OpenAIResponsesAdapter(ProviderAdapter[_Request, AsyncStream[object]]):
    """GPT-5 family models over ``POST /v1/responses`` (module docstring has the contract)."""

    provider = PROVIDER
    NAME_PREFIXES: ClassVar[tuple[str, ...]] = (f"{PROVIDER}:",)
    DEFAULT_TIMEOUT = DEFAULT_TIMEOUT
    SDK_ERRORS = MAPPED_EXCEPTIONS

    def __init__(
        self,
        model: str,
        *,
        organization: str | None = None,
        client: openai.AsyncOpenAI | None = None,
        **options: Unpack[ConnectionOptions],
    ) -> None:
        super().__init__(self._request_model(model), options)
        self._client = client or build_client(
            api_key=options.get("api_key"),
            base_url=normalize_base_url(options.get("base_url")),
            organization=organization,
            timeout=self._request_timeout,
        )
        if client is None:
            self._close_owned = self._client.close
        self._host = base_url_host(self.base_url)
        guard_credentials(self._client.api_key)

    def _request_model(self, model: str) -> str:
        """The ``model`` requests send: OpenAI's canonical spelling of the name given."""
        return canonical_model_name(model, prefixes=self.NAME_PREFIXES)

    @property
    def base_url(self) -> str:
        """The API root requests go to (``https://api.openai.com/v1/`` unless configured)."""
        return str(self._client.base_url)

    # ---------------------------------------------------------------- requests
    def _build(self, request: ChatRequest) -> _Request:
        check_settings(self._model, request.settings)
        payload = build_responses_payload(self._model, **request.arguments(), stream=request.stream)
        context = AuditContext(
            model=self._model,
            response_format=response_format_of(request.settings, request.response_schema),
            stream=payload.get("stream") is True,
            tool_count=len(request.tools),
            input_message_count=len(request.messages),
            base_url_host=self._host,
            use_custom_base_url=self._host != _DEFAULT_HOST,
        )
        return _Request(payload, context)

    def _streams(self, call: Call[_Request]) -> bool:
        """``settings.stream=False`` makes one non-streaming request, replayed as events."""
        return call.body.payload.get("stream") is True

    def _options(self, call: Call[_Request]) -> RequestOptions:
        audit_request(call.body.context)
        return {"timeout": call.timeout} if call.timeout is not None else {}

    async def _send(self, call: Call[_Request]) -> tuple[object, str | None]:
        options = self._options(call)
        raw = await self._client.post(
            "/responses", cast_to=httpx2.Response, body=call.body.payload, options=options
        )
        return raw.json(), raw.headers.get("x-request-id")

    def _parse(self, raw: tuple[object, str | None], call: Call[_Request]) -> LLMResponse:
        data, request_id = raw
        return completed_response(
            data, request_id=request_id, model=self._model, context=call.body.context, stop=call.settings.stop
        )

    # --------------------------------------------------------------- compaction
    @seal_errors
    async def compact_history(
        self, messages: Sequence[Message], *, settings: ModelSettings | None = None
    ) -> tuple[list[Message], Usage]:
        """OpenAI's own compaction (``responses/compact``) of ``messages``: the messages that replace
        those after the instructions (:mod:`kanawa.llm.openai.responses_compact`) and the usage billed.
        Used by :class:`~kanawa.loop.compaction.NativeCompaction`."""
        call = self._call(messages, (), settings, None, stream=False)
        audit_request(call.body.context)
        instructions, items = messages_to_responses_input(messages)
        data = await self._guarded(call, self._compact(call, instructions, items))
        output = data.get("output") if isinstance(data, dict) else None
        usage = parse_usage(data.get("usage") if isinstance(data, dict) else None)
        return compacted_messages(output if isinstance(output, list) else []), usage

    async def _compact(
        self, call: Call[_Request], instructions: str | None, items: list[JsonObject]
    ) -> object:
        raw = await self._client.responses.with_raw_response.compact(
            model=self._model,
            input=items,  # type: ignore[arg-type]  # the payload builder's items are the params
            instructions=instructions if instructions is not None else openai.omit,
            timeout=call.timeout if call.timeout is not None else openai.not_given,
        )
        return raw.http_response.json()  # as sent: user items are not an SDK output type

    # ------------------------------------------------------------------- stream
    async def _open(self, call: Call[_Request]) -> AsyncStream[object]:
        options = self._options(call)
        return await self._client.post(
            "/responses",
            cast_to=object,
            body=call.body.payload,
            options=options,
            stream=True,
            stream_cls=AsyncStream[object],
        )

    def _items(self, handle: AsyncStream[object]) -> AsyncIterator[object]:
        return handle.__aiter__()

    async def _close(self, handle: AsyncStream[object]) -> None:
        await handle.close()

    def _assembly(self, call: Call[_Request], handle: AsyncStream[object]) -> Assembly:
        context = call.body.context
        request_id = handle.response.headers.get("x-request-id")
        assembler = ResponsesStreamAssembler(
            model=self._model, stop=call.settings.stop, request_id=request_id
        )
        completed: list[LLMResponse] = []

        def feed(event: object) -> list[StreamEvent]:
            if not isinstance(event, dict):
                return []
            try:
                produced = assembler.feed(event)
            except LLMError as error:
                audit_failure(error, context, param=_event_param(event))
                raise
            for item in produced:
                if isinstance(item, ResponseCompleted):
                    completed.append(item.response)
                    audit_success(context, response_model=item.response.model or None, request_id=request_id)
            return [item for item in produced if not isinstance(item, ResponseCompleted)]

        def finish() -> LLMResponse:
            if completed:
                return completed[0]
            error = assembler.unfinished_error()
            audit_failure(error, context)
            raise error

        return Assembly(feed=feed, finish=finish, done=lambda: assembler.finished)

    def _map_error(
        self, exc: BaseException, call: Call[_Request], handle: AsyncStream[object] | None
    ) -> LLMError:
        error = map_openai_error(exc, provider=self.provider, model=self._model, streaming=handle is not None)
        if error.request_id is None and handle is not None:
            error.request_id = handle.response.headers.get("x-request-id")
        audit_failure(error, call.body.context, param=_param_of(exc))
        return error


def _event_param(event: dict[object, object]) -> str | None:
    source = event.get("error")
    if not isinstance(source, dict):
        response = event.get("response")
        source = response.get("error") if isinstance(response, dict) else event
    param = source.get("param") if isinstance(source, dict) else None
    return param if isinstance(param, str) else None
