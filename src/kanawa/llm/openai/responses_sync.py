"""A blocking Responses API caller for hosts that cannot run asyncio (seed 001 §3.6, §3.8, §3.9).

The Dify plugin runtime patches the whole process with gevent: every request runs in a greenlet and
``asyncio.run`` fails there ("cannot be called from a running event loop" as soon as two requests
overlap). :class:`OpenAIResponsesSyncClient` is the synchronous twin of
:class:`~kanawa.llm.openai.responses.OpenAIResponsesAdapter` for such hosts: the same request body
(:func:`~kanawa.llm.openai.responses_payload.build_responses_payload`), the same settings check
(:func:`~kanawa.llm.openai.catalogue.check_settings`), the same answer parsing
(:func:`~kanawa.llm.openai.responses_output.parse_response`,
:class:`~kanawa.llm.openai.responses_output.ResponsesStreamAssembler`), the same error mapping
(:func:`~kanawa.llm.openai.common.map_openai_error`) and the same audit records — only the transport
is the SDK's blocking ``OpenAI`` client, which gevent makes cooperative.

One request: :meth:`stream` builds the body, logs ``responses_api_request``, posts it (streaming when
``settings.stream`` and the caller agree), feeds every SSE event to the assembler and yields the
kanawa stream events, ending with exactly one ``ResponseCompleted`` and ``responses_api_success``.
Failures come out as :class:`~kanawa.llm.errors.LLMError` subclasses after ``responses_api_error``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import httpx2
import openai

from kanawa.llm.adapter import ToolLike
from kanawa.llm.errors import LLMError
from kanawa.llm.openai.audit import AuditContext, audit_failure, audit_request, audit_success
from kanawa.llm.openai.catalogue import check_settings
from kanawa.llm.openai.common import MAPPED_EXCEPTIONS, map_openai_error
from kanawa.llm.openai.credentials import OpenAICredentials
from kanawa.llm.openai.responses_output import ResponsesStreamAssembler, completed_response
from kanawa.llm.openai.responses_payload import build_responses_payload, response_format_of
from kanawa.llm.settings import ModelSettings
from kanawa.secrets import guard_credentials
from kanawa.types import JsonObject, LLMResponse, Message, ResponseCompleted, StreamEvent

__all__ = ["OpenAIResponsesSyncClient"]

PROVIDER = "openai"
_DEFAULT_HOST = "api.openai.com"


class OpenAIResponsesSyncClient:
    """Blocking ``POST /responses`` calls for one set of credentials (module docstring has the story).

    ``credentials.max_retries`` is given to the SDK: in a plugin there is no kanawa retry layer
    around the call, and the seed's ``max_retries`` credential is meant for exactly this client.
    """

    def __init__(self, credentials: OpenAICredentials, *, client: openai.OpenAI | None = None) -> None:
        self._credentials = credentials
        self._client = client or openai.OpenAI(
            api_key=credentials.api_key,
            organization=credentials.organization,
            base_url=credentials.base_url,
            timeout=float(credentials.timeout),
            max_retries=credentials.max_retries,
        )
        guard_credentials(credentials.api_key)

    def close(self) -> None:
        """Close the HTTP connections."""
        self._client.close()

    def __enter__(self) -> OpenAIResponsesSyncClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def list_models(self) -> list[str]:
        """``GET /models`` (provider credential validation, seed 001 §3.8); errors are ``LLMError``."""
        context = self._context("models.list", ModelSettings(), (), 0, stream=False)
        try:
            return [model.id for model in self._client.models.list()]
        except MAPPED_EXCEPTIONS as exc:
            raise self._failed(exc, context) from None

    def _context(
        self, model: str, settings: ModelSettings, tools: Sequence[ToolLike], count: int, *, stream: bool
    ) -> AuditContext:
        host = self._credentials.base_url_host or _DEFAULT_HOST
        return AuditContext(
            model=model,
            response_format=response_format_of(settings, None),
            stream=stream,
            tool_count=len(tools),
            input_message_count=count,
            base_url_host=host,
            use_custom_base_url=host != _DEFAULT_HOST,
        )

    def _failed(
        self,
        exc: BaseException,
        context: AuditContext,
        *,
        streaming: bool = False,
        request_id: str | None = None,
    ) -> LLMError:
        error = map_openai_error(exc, provider=PROVIDER, model=context.model, streaming=streaming)
        if error.request_id is None:
            error.request_id = request_id
        param = exc.param if isinstance(exc, openai.APIError) else None
        audit_failure(error, context, param=param)
        return error

    def build(
        self,
        model: str,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolLike] = (),
        settings: ModelSettings | None = None,
        stream: bool = True,
    ) -> JsonObject:
        """The exact request body :meth:`stream` would send (after the model's settings check)."""
        merged = settings or ModelSettings()
        check_settings(model, merged)
        return build_responses_payload(model, messages, tools=tools, settings=merged, stream=stream)

    def stream(
        self,
        model: str,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolLike] = (),
        settings: ModelSettings | None = None,
        stream: bool = True,
    ) -> Iterator[StreamEvent]:
        """Yield the answer's events, ending with one ``ResponseCompleted`` (non-streaming calls replay
        the whole answer as that single event)."""
        merged = settings or ModelSettings()
        payload = self.build(model, messages, tools=tools, settings=merged, stream=stream)
        streaming = payload.get("stream") is True
        context = self._context(model, merged, tools, len(messages), stream=streaming)
        audit_request(context)
        if not streaming:
            yield ResponseCompleted(self._send(payload, context, merged))
            return
        yield from self._stream(payload, context, merged)

    def _send(self, payload: JsonObject, context: AuditContext, settings: ModelSettings) -> LLMResponse:
        try:
            raw = self._client.post("/responses", cast_to=httpx2.Response, body=payload)
            data = raw.json()
        except MAPPED_EXCEPTIONS as exc:
            raise self._failed(exc, context) from None
        request_id = raw.headers.get("x-request-id")
        return completed_response(
            data, request_id=request_id, model=context.model, context=context, stop=settings.stop
        )

    def _stream(
        self, payload: JsonObject, context: AuditContext, settings: ModelSettings
    ) -> Iterator[StreamEvent]:
        try:
            sdk_stream = self._client.post(
                "/responses", cast_to=object, body=payload, stream=True, stream_cls=openai.Stream[object]
            )
        except MAPPED_EXCEPTIONS as exc:
            raise self._failed(exc, context) from None
        request_id = sdk_stream.response.headers.get("x-request-id")
        assembler = ResponsesStreamAssembler(model=context.model, stop=settings.stop, request_id=request_id)
        try:
            while not assembler.finished:
                try:
                    event = next(sdk_stream)
                except StopIteration:
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
                    audit_failure(error, context)
                    raise
                for item in produced:
                    if isinstance(item, ResponseCompleted):
                        audit_success(
                            context, response_model=item.response.model or None, request_id=request_id
                        )
                    yield item
        finally:
            sdk_stream.close()
