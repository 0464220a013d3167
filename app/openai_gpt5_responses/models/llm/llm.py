"""The ``llm`` model of ``openai_gpt5``: Dify's LargeLanguageModel over kanawa's Responses pieces.

One ``invoke_llm``: parameters → :func:`internal.payloads.settings_from_parameters`; messages →
:func:`internal.messages.to_kanawa_messages` (reasoning restored from ``opaque_body``); the request is
built, sent and parsed by :class:`kanawa.llm.openai.responses_sync.OpenAIResponsesSyncClient`; its
events become Dify chunks: reasoning summary deltas inside one ``<think>`` block, text deltas, and a
last chunk with the tool calls, usage, finish reason and the ``opaque_body`` to replay next round.
Seed 001 §3.4–§3.8.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping, Sequence

from dify_plugin import LargeLanguageModel
from dify_plugin.entities import I18nObject
from dify_plugin.entities.model import AIModelEntity, FetchFrom, ModelType
from dify_plugin.entities.model.llm import LLMResult, LLMResultChunk, LLMResultChunkDelta, LLMUsage
from dify_plugin.entities.model.message import AssistantPromptMessage, PromptMessage, PromptMessageTool
from dify_plugin.errors.model import CredentialsValidateFailedError, InvokeError
from internal.credentials import client_for, normalize_credentials
from internal.errors import INVOKE_ERROR_MAPPING, to_invoke_error
from internal.messages import assistant_from_response, to_kanawa_messages
from internal.payloads import settings_from_parameters, tool_specs_from_dify

from kanawa.llm.errors import LLMError
from kanawa.llm.openai.responses_sync import OpenAIResponsesSyncClient
from kanawa.llm.settings import ModelSettings
from kanawa.llm.tokens import count_message_tokens
from kanawa.types import (
    LLMResponse,
    ReasoningDelta,
    ResponseCompleted,
    StopReason,
    StreamEvent,
    TextDelta,
    UserMessage,
)

_TEMPLATE_MODEL = "gpt-5"
_FINISH_REASONS = {
    StopReason.END_TURN: "stop",
    StopReason.STOP_SEQUENCE: "stop",
    StopReason.TOOL_USE: "tool_calls",
    StopReason.MAX_TOKENS: "length",
}
"""kanawa's stop reasons as the OpenAI-style finish reasons Dify shows."""


class OpenAIGPT5LargeLanguageModel(LargeLanguageModel):
    """GPT-5 family models over ``POST /v1/responses`` (module docstring has the flow)."""

    def _invoke(
        self,
        model: str,
        credentials: dict,  # type: ignore[type-arg]
        prompt_messages: list[PromptMessage],
        model_parameters: dict,  # type: ignore[type-arg]
        tools: list[PromptMessageTool] | None = None,
        stop: list[str] | None = None,
        stream: bool = True,
        user: str | None = None,
    ) -> LLMResult | Generator[LLMResultChunk, None, None]:
        creds = normalize_credentials(credentials)
        settings = settings_from_parameters(model_parameters, stop)
        messages = to_kanawa_messages(prompt_messages)
        specs = tool_specs_from_dify(tools)
        events = client_for(creds).stream(model, messages, tools=specs, settings=settings, stream=stream)
        if not stream:
            response = _completed(events)
            return LLMResult(
                model=model,
                prompt_messages=prompt_messages,
                message=assistant_from_response(response, thought=_thought_of(response)),
                usage=self._usage(model, credentials, response),
            )
        return self._chunks(model, credentials, prompt_messages, events)

    def _usage(self, model: str, credentials: dict, response: LLMResponse) -> LLMUsage:  # type: ignore[type-arg]
        usage = response.usage
        return self._calc_response_usage(model, credentials, usage.input_tokens, usage.output_tokens)

    def _chunks(
        self,
        model: str,
        credentials: dict,  # type: ignore[type-arg]
        prompt_messages: list[PromptMessage],
        events: Generator[StreamEvent, None, None] | Sequence[StreamEvent],
    ) -> Generator[LLMResultChunk, None, None]:
        def chunk(text: str = "", **delta: object) -> LLMResultChunk:
            message = delta.pop("message", None) or AssistantPromptMessage(content=text)
            return LLMResultChunk(
                model=model,
                prompt_messages=prompt_messages,
                delta=LLMResultChunkDelta(index=0, message=message, **delta),  # type: ignore[arg-type]
            )

        thinking = False
        streamed = False
        try:
            for event in events:
                if isinstance(event, ReasoningDelta):
                    if not event.text:
                        continue
                    yield chunk(("" if thinking else "<think>\n") + event.text)
                    thinking = streamed = True
                    continue
                if thinking:
                    yield chunk("\n</think>")
                    thinking = False
                if isinstance(event, TextDelta) and event.text:
                    yield chunk(event.text)
                    streamed = True
                elif isinstance(event, ResponseCompleted):
                    response = event.response
                    # a non-streamed answer (enable_stream=false) arrives whole, in this one chunk
                    final = assistant_from_response(response, thought=_thought_of(response))
                    if streamed:
                        final.content = ""
                    yield chunk(
                        message=final,
                        usage=self._usage(model, credentials, response),
                        finish_reason=_FINISH_REASONS.get(response.stop_reason)
                        if response.stop_reason
                        else None,
                    )
        except LLMError as exc:
            raise to_invoke_error(exc) from None

    def get_num_tokens(
        self,
        model: str,
        credentials: dict,  # type: ignore[type-arg]
        prompt_messages: list[PromptMessage],
        tools: list[PromptMessageTool] | None = None,
    ) -> int:
        """Offline count (kanawa's tokenizer or estimator; never a download), tool schemas included."""
        messages = to_kanawa_messages(prompt_messages)
        count = count_message_tokens(messages, model=model)
        for spec in tool_specs_from_dify(tools):
            count += count_message_tokens([UserMessage(f"{spec.name} {spec.description} {spec.parameters}")])
        return count

    def validate_credentials(self, model: str, credentials: Mapping) -> None:  # type: ignore[type-arg]
        """Seed 001 §3.8: a tiny ``responses.create`` ("ping") with the model's credentials."""
        creds = normalize_credentials(credentials)
        try:
            with OpenAIResponsesSyncClient(creds) as client:
                _completed(
                    client.stream(
                        model,
                        [UserMessage("ping")],
                        settings=ModelSettings(max_output_tokens=16, stream=False),
                        stream=False,
                    )
                )
        except LLMError as exc:
            raise CredentialsValidateFailedError(str(exc)) from None

    def get_customizable_model_schema(self, model: str, credentials: Mapping) -> AIModelEntity | None:  # type: ignore[type-arg]
        """A customizable model gets the predefined ``gpt-5`` schema (features and every §3.5 rule)."""
        template = next((m for m in self.predefined_models() if m.model == _TEMPLATE_MODEL), None)
        if template is None:
            return None
        return template.model_copy(
            update={
                "model": model,
                "label": I18nObject(en_US=model),
                "fetch_from": FetchFrom.CUSTOMIZABLE_MODEL,
                "model_type": ModelType.LLM,
            },
            deep=True,
        )

    @property
    def _invoke_error_mapping(self) -> dict[type[InvokeError], list[type[Exception]]]:
        return INVOKE_ERROR_MAPPING


def _completed(events: Generator[StreamEvent, None, None]) -> LLMResponse:
    for event in events:
        if isinstance(event, ResponseCompleted):
            return event.response
    raise LLMError("the response ended without completing", provider="openai")


def _thought_of(response: LLMResponse) -> str:
    return "\n\n".join(p.text for p in response.message.reasoning if p.text)
