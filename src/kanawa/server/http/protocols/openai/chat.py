"""OpenAI's Chat Completions API over kanawa's runs: ``POST /v1/chat/completions``.

``model`` is an agent's name (unknown: 404 ``model_not_found``). ``messages`` become the run:
``system``/``developer`` messages are added to the agent's instructions, ``user``/``assistant``
(with ``tool_calls``)/``tool`` messages its history, and the last user message — or the trailing
``tool`` messages answering the last assistant's calls — its input. Text content only (a string
or ``text`` parts). ``tools`` of type ``function`` are the client's, offered beside the agent's
own; ``response_format`` ``json_schema`` is asked of the model when the agent answers in text;
``max_completion_tokens`` (or ``max_tokens``) caps each model response. Chat Completions is
stateless: every request is a new run over the conversation the client sends.

Non-streaming: a ``chat.completion`` with one choice — the answer's text, or the client's tool
calls with ``finish_reason: "tool_calls"`` (the client runs them and sends the conversation back
with ``role: "tool"`` messages). ``stream``: ``chat.completion.chunk`` events — the first delta
carries ``role``, then ``content`` deltas, then the tool calls (whole, one delta), then a chunk
with ``finish_reason``; with ``stream_options.include_usage`` one more chunk with empty
``choices`` and ``usage``; then ``data: [DONE]``. A run that fails sends an ``error`` event (the
official clients raise it) and a non-streaming request gets an error in OpenAI's shape whose status
says whose failure it is (:func:`.errors.run_failure`: 502 for the model provider, 429 for a
spent budget, 400 for a guardrail, 500 otherwise). The
agent's own tool calls run on the server and are not in the answer (the Responses API shows them).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Annotated, Any, Final, Literal

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse
from pydantic import Field

from kanawa.server.http.dependencies import API_ERRORS, BODY_ERRORS, CallerArg
from kanawa.server.http.protocols.errors import ProtocolError
from kanawa.server.http.protocols.framing import (
    ChunkFraming,
    DoneChunk,
    ErrorChunk,
    FinalChunk,
    TextChunk,
    ToolCallChunk,
    ToolResultChunk,
    UsageChunk,
)
from kanawa.server.http.protocols.inputs import (
    Content,
    InvalidInput,
    JsonObject,
    LongText,
    OtherTool,
    ShortText,
    ToolName,
    _Open,
    add_tool_call,
    content_text,
    json_text,
    output_schema,
    run_options,
    split_turn,
    tool_answer,
    tool_spec,
)
from kanawa.server.http.protocols.openai.errors import OpenAIError, openai_response, run_failure
from kanawa.server.http.protocols.opening import opened_run, streams_of
from kanawa.server.http.protocols.run_parts import (
    JSON,
    Part,
    json_string,
    manager_of,
    part_chunks,
    part_stream,
    usage_counts,
)
from kanawa.server.http.strict_json import StrictJsonRoute
from kanawa.server.store.base import ChunksExpired, RunRecord
from kanawa.types import AssistantMessage, Message, ToolCall, UserMessage

PREFIX: Final = "chatcmpl"
SSE: Final = "text/event-stream"


class FunctionName(_Open):
    name: ToolName
    arguments: LongText = "{}"


class ChatToolCall(_Open):
    id: ShortText
    type: Literal["function"] = "function"
    function: FunctionName


class ChatMessage(_Open):
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: Content | None = None
    tool_calls: Annotated[list[ChatToolCall], Field(max_length=128)] | None = None
    tool_call_id: ShortText | None = None


class FunctionDefinition(_Open):
    name: ToolName
    description: LongText | None = None
    parameters: JsonObject | None = None
    strict: bool | None = None


class ChatFunctionTool(_Open):
    type: Literal["function"]
    function: FunctionDefinition


class StreamOptions(_Open):
    include_usage: bool | None = None


class JsonSchemaFormat(_Open):
    name: ShortText | None = None
    schema_: JsonObject | None = Field(default=None, alias="schema")
    strict: bool | None = None
    description: LongText | None = None


class ResponseFormat(_Open):
    type: Literal["text", "json_schema", "json_object"]
    json_schema: JsonSchemaFormat | None = None


class ChatRequest(_Open):
    """``POST /v1/chat/completions`` (fields kanawa does not use are accepted and ignored)."""

    model: ShortText = Field(min_length=1, examples=["echo"])
    messages: Annotated[list[ChatMessage], Field(min_length=1, max_length=1000)]
    stream: bool | None = False
    stream_options: StreamOptions | None = None
    tools: Annotated[list[ChatFunctionTool | OtherTool], Field(max_length=128)] | None = None
    max_tokens: Annotated[int, Field(ge=1, le=1_000_000)] | None = None
    max_completion_tokens: Annotated[int, Field(ge=1, le=1_000_000)] | None = None
    response_format: ResponseFormat | None = None


def _conversation(body: ChatRequest) -> tuple[list[Message], list[str]]:
    messages: list[Message] = []
    instructions: list[str] = []
    for index, message in enumerate(body.messages):
        where = f"messages[{index}]"
        text = content_text(message.content, param=where)
        if message.role in ("system", "developer"):
            instructions.append(text)
        elif message.role == "user":
            messages.append(UserMessage(text))
        elif message.role == "assistant":
            messages.append(AssistantMessage(text=text))
            for call in message.tool_calls or ():
                add_tool_call(messages, ToolCall(call.id, call.function.name, call.function.arguments))
        else:
            if message.tool_call_id is None:
                raise InvalidInput("a tool message needs its tool_call_id", param=f"{where}.tool_call_id")
            messages.append(tool_answer(messages, message.tool_call_id, text))
    return messages, instructions


def _options(body: ChatRequest, instructions: str | None) -> Any:
    specs = []
    for index, tool in enumerate(body.tools or ()):
        if not isinstance(tool, ChatFunctionTool):
            raise InvalidInput(
                f"tools of type {tool.type!r} are not supported: declare functions", param=f"tools[{index}]"
            )
        fn = tool.function
        specs.append(tool_spec(fn.name, fn.description, fn.parameters, fn.strict))
    schema = None
    fmt = body.response_format
    if fmt is not None and fmt.type == "json_schema":
        if fmt.json_schema is None or fmt.json_schema.schema_ is None:
            raise InvalidInput(
                "response_format json_schema needs a schema", param="response_format.json_schema"
            )
        given = fmt.json_schema
        schema = output_schema(
            given.name, given.schema_ or {}, strict=given.strict, description=given.description
        )
    elif fmt is not None and fmt.type == "json_object":
        schema = output_schema("response", {"type": "object"}, strict=False, description=None)
    cap = body.max_completion_tokens if body.max_completion_tokens is not None else body.max_tokens
    return run_options(instructions, specs, cap, schema)


class ContentDelta:
    """A ``content`` delta chunk, encoded (the one event a completion has thousands of): the
    translator's prefix, the text's JSON, the fixed end — the JSON the chunk written out gives."""

    __slots__ = ("frame",)

    def __init__(self, prefix: bytes, text: str) -> None:
        self.frame = prefix + JSON.encode(text).encode() + _CONTENT_END


_CONTENT_END: Final = b'},"finish_reason":null,"logprobs":null}]}\n\n'


ChatEvent = dict[str, Any] | ContentDelta
"""What :class:`ChatTranslator`'s hooks give: chunks, ``content`` deltas pre-encoded."""


class ChatTranslator(ChunkFraming[ChatEvent]):
    """A run's chunks → one chat completion, and as a stream's framing (:class:`~..framing.ChunkFraming`)
    its ``chat.completion.chunk`` events; after the run's part ends, the usage chunk (when asked
    for, ``usage``) and ``data: [DONE]``."""

    def __init__(self, part: Part, *, model: str, created: float, usage: bool = False) -> None:
        super().__init__()
        self.id = part.id(PREFIX)
        self.model = model
        self.created = int(created)
        self.include_usage = usage
        self.text: list[str] = []
        self.calls: dict[str, dict[str, str]] = {}
        self.usage: dict[str, Any] | None = None
        self.error: dict[str, Any] | None = None
        self.failure: dict[str, Any] | None = None
        """The run's ``error`` chunk data, as it came (what :func:`.errors.run_failure` reads)."""
        self.status = "running"
        """How the run's part ended (its ``done`` chunk's status)."""
        self.finish: str | None = None
        self._started = False
        head = {"id": self.id, "object": "chat.completion.chunk", "created": self.created, "model": model}
        self._prefix = (
            b"data: " + JSON.encode(head)[:-1].encode() + b',"choices":[{"index":0,"delta":{"content":'
        )

    def _chunk(self, delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        if not self._started:
            self._started = True
            delta = {"role": "assistant", **delta}
        return {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
        }

    # the hooks ------------------------------------------------------------------------------------

    def on_text(self, chunk: TextChunk) -> list[ChatEvent]:
        self.text.append(chunk.text)
        if self._started:
            return [ContentDelta(self._prefix, chunk.text)]
        return [self._chunk({"content": chunk.text})]

    def on_tool_call(self, chunk: ToolCallChunk) -> list[ChatEvent]:
        self.calls[chunk.id] = {"name": chunk.name, "arguments": chunk.arguments}
        return []

    def on_tool_result(self, chunk: ToolResultChunk) -> list[ChatEvent]:
        self.calls.pop(chunk.call_id, None)
        return []

    def on_final(self, chunk: FinalChunk) -> list[ChatEvent]:
        if self.text:
            return []
        text = chunk.answer_text(json_text)
        self.text.append(text)
        return [self._chunk({"content": text})]

    def on_usage(self, chunk: UsageChunk) -> list[ChatEvent]:
        self.usage = chunk.usage
        return []

    def on_error(self, chunk: ErrorChunk) -> list[ChatEvent]:
        self.failure = chunk.data
        message = chunk.summary
        self.error = {"message": message, "type": "server_error", "code": "server_error", "param": None}
        return []

    def on_done(self, chunk: DoneChunk) -> list[ChatEvent]:
        return [*self._done(chunk.status)]

    # the stream -----------------------------------------------------------------------------------

    def more_text(self, text: str, seq: int) -> bytes | None:
        """The frame of a text delta after the first (the bytes the hook gives it); ``None``
        before the first, which also carries the role."""
        if not self._started:
            return None
        self.text.append(text)
        return self._prefix + json_string(text).encode() + _CONTENT_END

    def frames(self, seq: int, events: Sequence[ChatEvent]) -> bytes:
        return b"".join(_data(event) for event in events)

    def closing(self) -> bytes:
        usage = _data(self.usage_chunk()) if self.include_usage and self.error is None else b""
        return usage + b"data: [DONE]\n\n"

    def expired(self, exc: ChunksExpired) -> bytes:
        message = "this response's events are no longer kept"
        return _data(
            {"error": {"message": message, "type": "server_error", "code": "not_found", "param": None}}
        )

    def _tool_calls(self) -> list[dict[str, Any]]:
        return [
            {"index": i, "id": call_id, "type": "function", "function": dict(call)}
            for i, (call_id, call) in enumerate(self.calls.items())
        ]

    def _done(self, status: str) -> list[dict[str, Any]]:
        self.status = status
        if status == "awaiting_tool_output":
            self.finish = "tool_calls"
            return [self._chunk({"tool_calls": self._tool_calls()}), self._chunk({}, "tool_calls")]
        if status == "completed":
            self.finish = "stop"
            return [self._chunk({}, "stop")]
        if self.error is None:
            reason = {
                "cancelled": "the run was cancelled",
                "awaiting_approval": "the run waits for a person's approval (POST /v1/runs/{id}/approvals)",
            }.get(status, "the run failed")
            self.error = {"message": reason, "type": "server_error", "code": "server_error", "param": None}
        return [{"error": self.error}]

    def usage_body(self) -> dict[str, Any]:
        tokens_in, tokens_out, reasoning, cached = usage_counts(self.usage)
        return {
            "prompt_tokens": tokens_in,
            "completion_tokens": tokens_out,
            "total_tokens": tokens_in + tokens_out,
            "prompt_tokens_details": {"cached_tokens": cached},
            "completion_tokens_details": {"reasoning_tokens": reasoning},
        }

    def usage_chunk(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [],
            "usage": self.usage_body(),
        }

    def completion(self) -> dict[str, Any]:
        calls = self._tool_calls() if self.finish == "tool_calls" else []
        message: dict[str, Any] = {
            "role": "assistant",
            "content": "".join(self.text) or None,
            "refusal": None,
        }
        if calls:
            message["tool_calls"] = [{k: v for k, v in call.items() if k != "index"} for call in calls]
        return {
            "id": self.id,
            "object": "chat.completion",
            "created": self.created,
            "model": self.model,
            "choices": [
                {"index": 0, "message": message, "finish_reason": self.finish or "stop", "logprobs": None}
            ],
            "usage": self.usage_body(),
        }


def _data(body: dict[str, Any] | ContentDelta) -> bytes:
    if isinstance(body, ContentDelta):
        return body.frame
    return b"data: " + JSON.encode(body).encode() + b"\n\n"


router = APIRouter(tags=["openai"], route_class=StrictJsonRoute)  # one JSON rule for every door


@router.post(
    "/v1/chat/completions",
    response_class=Response,
    responses={
        200: {
            "description": "A ``chat.completion``, or with ``stream`` ``chat.completion.chunk`` events "
            "ending with ``data: [DONE]``.",
            "content": {
                "application/json": {"schema": {"type": "object"}},
                SSE: {"schema": {"type": "string"}},
            },
        },
        400: {"description": "Messages a run cannot take, or a guardrail stopped the run (OpenAI shape)"},
        404: {"description": "Unknown model"},
        409: {"description": "The run was cancelled, or waits for a person's approval (non-streaming)"},
        500: {"description": "The run failed (a non-streaming request; OpenAI error shape)"},
        502: {"description": "The model provider failed (a non-streaming request; OpenAI error shape)"},
        **BODY_ERRORS,
        **API_ERRORS,
    },
    summary="Create a chat completion (OpenAI Chat Completions API)",
)
async def create_chat_completion(body: ChatRequest, request: Request, who: CallerArg) -> Response:
    """Run the agent named by ``model`` on the conversation (module docstring of
    ``kanawa.server.http.protocols.openai.chat``)."""
    manager = manager_of(request)
    try:
        if body.model not in manager.agents:
            raise OpenAIError(
                404,
                f"the model {body.model!r} does not exist (no agent of that name)",
                code="model_not_found",
                param="model",
            )
        try:
            messages, instructions = _conversation(body)
            conversation = split_turn(messages, instructions)
            options = _options(body, conversation.instructions)
        except InvalidInput as exc:
            raise OpenAIError(400, str(exc), param=exc.param or "messages") from None

        async def begin() -> RunRecord:
            return await manager.start(
                who.tenant, body.model, list(conversation.turn), history=conversation.history, options=options
            )

        async with opened_run(streams_of(request), manager, who.tenant, begin, run_of=_run_id) as opened:
            record = opened.value
            part = Part(record.run_id)
            include = bool(body.stream_options and body.stream_options.include_usage)
            created = record.created or time.time()
            translator = ChatTranslator(part, model=body.model, created=created, usage=include)
            if body.stream:
                return opened.hand_over(lambda admitted: part_stream(request, part, translator, admitted))
            async for chunk in part_chunks(manager.store, part):
                translator.feed(chunk)
        if translator.error is not None:  # the run ended without an answer: whose failure it is
            return run_failure(translator.status, translator.failure, run_id=part.run_id)
        return JSONResponse(translator.completion(), headers={"X-Run-Id": part.run_id})
    except ProtocolError as exc:
        return openai_response(exc)


def _run_id(record: RunRecord) -> str:
    return record.run_id


__all__ = ["ChatEvent", "ChatRequest", "ChatTranslator", "ContentDelta", "router"]
