"""Model rounds, tool-call extraction and what the user sees (seed 000 §3, §5; 001 §4.5, §4.6).

:class:`DifyModelAdapter` is a kanawa ``LLMAdapter`` over Dify's backwards ``llm`` invocation: kanawa
messages become Dify prompt messages (:func:`to_prompt_messages`), the streamed chunks become kanawa
stream events, and tool calls are assembled from the chunks (a call with a new id starts a call; a
chunk without id continues the last one). Chunks without a message are skipped. The assistant message
kanawa keeps for the next round carries the chunk's ``opaque_body`` in ``provider_details``, and
:func:`to_prompt_messages` puts it back on the ``AssistantPromptMessage`` — so the model plugin can
replay GPT-5 reasoning (Dify's own function-calling strategy rebuilds the message without it).

No ``stop`` words are ever sent: GPT-5 rejects them (both strategies).

Display: ``should_emit_response_text`` and ``visible_text`` are kanawa's (seed 000 §5 table); a round
with tool calls and no ``<think>`` block gets kanawa's fallback thought.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from typing import Any

from dify_plugin.core.entities.invocation import InvokeType
from dify_plugin.entities.model.message import (
    AssistantPromptMessage,
    PromptMessage,
    PromptMessageTool,
    SystemPromptMessage,
    ToolPromptMessage,
    UserPromptMessage,
)
from pydantic import JsonValue

from kanawa.llm.adapter import ToolLike, tool_specs
from kanawa.llm.errors import LLMError
from kanawa.llm.settings import ModelSettings
from kanawa.llm.tokens import count_message_tokens
from kanawa.prompts.display import should_emit_response_text, visible_text
from kanawa.prompts.think import fallback_thought, split_think
from kanawa.types import (
    AssistantMessage,
    LLMResponse,
    Message,
    OutputSchema,
    ResponseCompleted,
    StopReason,
    StreamEvent,
    SystemMessage,
    TextDelta,
    ToolCall,
    ToolCallArgsDelta,
    ToolCallStarted,
    ToolMessage,
    Usage,
    UserMessage,
)

__all__ = [
    "OPAQUE_DETAIL",
    "DifyModelAdapter",
    "round_thought",
    "should_emit_response_text",
    "to_kanawa_messages",
    "to_prompt_messages",
    "visible_text",
]

OPAQUE_DETAIL = "dify_opaque_body"
"""``AssistantMessage.provider_details`` key holding the model plugin's ``opaque_body``."""

Invoke = Callable[[Mapping[str, Any]], Iterable[Mapping[str, Any]]]


def to_prompt_messages(messages: Sequence[Message]) -> list[PromptMessage]:
    """kanawa messages as Dify prompt messages; an assistant message keeps its ``opaque_body``."""
    result: list[PromptMessage] = []
    for message in messages:
        if isinstance(message, SystemMessage):
            result.append(SystemPromptMessage(content=message.content))
        elif isinstance(message, UserMessage):
            result.append(UserPromptMessage(content=message.text))
        elif isinstance(message, AssistantMessage):
            details = message.provider_details or {}
            result.append(
                AssistantPromptMessage(
                    content=message.text,
                    tool_calls=[
                        AssistantPromptMessage.ToolCall(
                            id=c.id,
                            type="function",
                            function=AssistantPromptMessage.ToolCall.ToolCallFunction(
                                name=c.name, arguments=c.arguments
                            ),
                        )
                        for c in message.tool_calls
                    ],
                    opaque_body=details.get(OPAQUE_DETAIL),
                )
            )
        else:
            result.append(
                ToolPromptMessage(content=message.text, tool_call_id=message.tool_call_id, name=message.name)
            )
    return result


def to_kanawa_messages(messages: Sequence[PromptMessage]) -> list[Message]:
    """Dify history as kanawa messages (the reverse of :func:`to_prompt_messages`)."""
    result: list[Message] = []
    for message in messages:
        text = message.get_text_content()
        if isinstance(message, AssistantPromptMessage):
            details = {OPAQUE_DETAIL: message.opaque_body} if message.opaque_body is not None else None
            calls = tuple(ToolCall(c.id, c.function.name, c.function.arguments) for c in message.tool_calls)
            result.append(AssistantMessage(text=text, tool_calls=calls, provider_details=details))
        elif isinstance(message, ToolPromptMessage):
            result.append(ToolMessage(message.tool_call_id, text, name=message.name or ""))
        elif message.role.value in ("system", "developer"):
            result.append(SystemMessage(text))
        else:
            result.append(UserMessage(text))
    return result


def round_thought(text: str, tool_names: Sequence[str]) -> str:
    """What a round with tool calls shows as its thought: its ``<think>`` block, else the fallback."""
    _visible, thought = split_think(text)
    return "" if thought.strip() or not tool_names else fallback_thought(tool_names)


class _Calls:
    """Tool calls assembled from streamed chunks (``stream-tool-call``)."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.names: dict[str, str] = {}
        self.args: dict[str, str] = {}

    def feed(self, raw: Sequence[Mapping[str, Any]]) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        for call in raw:
            function = call.get("function") or {}
            call_id = str(call.get("id") or "")
            if not call_id or call_id in self.names:
                if not self.ids:
                    continue
                call_id = call_id or self.ids[-1]
            else:
                self.ids.append(call_id)
                self.names[call_id] = str(function.get("name") or "")
                self.args[call_id] = ""
                events.append(ToolCallStarted(len(self.ids) - 1, call_id, self.names[call_id]))
            piece = function.get("arguments") or ""
            if not isinstance(piece, str):
                piece = str(piece)
            if piece:
                self.args[call_id] += piece
                events.append(ToolCallArgsDelta(self.ids.index(call_id), call_id, piece))
        return events

    def calls(self) -> tuple[ToolCall, ...]:
        return tuple(ToolCall(i, self.names[i], self.args[i]) for i in self.ids)


class DifyModelAdapter:
    """The strategy's selected model as a kanawa ``LLMAdapter`` (module docstring)."""

    def __init__(
        self,
        provider: str,
        model: str,
        model_config: Mapping[str, Any],
        invoke: Invoke,
        *,
        on_missing_opaque_body: Callable[[], None] | None = None,
    ) -> None:
        self._provider = provider
        self._model = model
        self._config = dict(model_config)
        self._invoke = invoke
        self._on_missing = on_missing_opaque_body
        self.requests = 0

    @property
    def provider(self) -> str:
        return self._provider

    @property
    def model(self) -> str:
        return self._model

    def count_tokens(self, content: str | Sequence[Message]) -> int:
        return count_message_tokens(content, model=self._model)

    def normalize_model_name(self, name: str | None = None) -> str:
        return name or self._model

    async def chat(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolLike] = (),
        settings: ModelSettings | None = None,
        response_schema: OutputSchema | None = None,
    ) -> LLMResponse:
        async for event in self.stream(
            messages, tools=tools, settings=settings, response_schema=response_schema
        ):
            if isinstance(event, ResponseCompleted):
                return event.response
        raise LLMError(
            "the model stream ended without a response", provider=self._provider, model=self._model
        )

    async def stream(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolLike] = (),
        settings: ModelSettings | None = None,
        response_schema: OutputSchema | None = None,
    ) -> AsyncIterator[StreamEvent]:
        prompt_tools = [
            PromptMessageTool(name=s.name, description=s.description, parameters=dict(s.parameters))
            for s in tool_specs(tools)
        ]
        request: dict[str, Any] = {
            **self._config,
            "prompt_messages": [m.model_dump(mode="json") for m in to_prompt_messages(messages)],
            "tools": [t.model_dump(mode="json") for t in prompt_tools] or None,
            "stop": None,
            "stream": True,
        }
        self.requests += 1
        text: list[str] = []
        calls = _Calls()
        usage = Usage(requests=1)
        opaque: JsonValue | None = None
        try:
            for chunk in self._invoke(request):
                delta = chunk.get("delta") if isinstance(chunk, Mapping) else None
                message = delta.get("message") if isinstance(delta, Mapping) else None
                if not isinstance(message, Mapping):
                    continue  # a chunk without a message (seed 001 §4.6): nothing to show or keep
                content = message.get("content")
                piece = content if isinstance(content, str) else _text_of(content)
                if piece:
                    text.append(piece)
                    yield TextDelta(piece)
                for event in calls.feed(message.get("tool_calls") or []):
                    yield event
                if message.get("opaque_body") is not None:
                    opaque = message["opaque_body"]
                reported = delta.get("usage") if isinstance(delta, Mapping) else None
                if isinstance(reported, Mapping):
                    usage = Usage(
                        input_tokens=int(reported.get("prompt_tokens") or 0),
                        output_tokens=int(reported.get("completion_tokens") or 0),
                        requests=1,
                    )
        except LLMError:
            raise
        except Exception as exc:
            raise LLMError(
                f"model invocation failed: {exc}", provider=self._provider, model=self._model
            ) from None
        found = calls.calls()
        if found and opaque is None and self._on_missing is not None:
            # a round that calls tools needs its reasoning next round; our model plugin always sends it
            self._on_missing()
        details = {OPAQUE_DETAIL: opaque} if opaque is not None else None
        answer = AssistantMessage(text="".join(text), tool_calls=found, provider_details=details)
        reason = StopReason.TOOL_USE if found else StopReason.END_TURN
        yield ResponseCompleted(
            LLMResponse(message=answer, stop_reason=reason, usage=usage, model=self._model)
        )


def _text_of(content: object) -> str:
    if not isinstance(content, list):
        return ""
    return "".join(
        str(p.get("data") or "") for p in content if isinstance(p, Mapping) and p.get("type") == "text"
    )


LLM_INVOKE_TYPE = InvokeType.LLM
"""The backwards invocation type the strategy uses for model rounds."""
