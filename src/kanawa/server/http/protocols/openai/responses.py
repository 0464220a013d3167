"""OpenAI's Responses API over kanawa's runs: any registered agent is a "model".

Routes (all behind the Bearer key; errors in OpenAI's shape, :mod:`.errors`):

- ``POST /v1/responses`` — ``model`` (an agent's name; unknown: 404 ``model_not_found``),
  ``input`` (a string, or input items: ``message`` with role ``user``/``assistant``/``system``/
  ``developer`` and text content, ``function_call``, ``function_call_output``, and
  ``item_reference`` to an item of an earlier response — which continues that response's run with
  the items after the last reference, as ``previous_response_id`` does; other item types such as
  ``reasoning`` are skipped), ``instructions`` (added to the agent's;
  system/developer messages too), ``tools`` (``function`` only: the client's tools, offered beside
  the agent's own), ``text.format`` (``json_schema``: asked of the model when the agent answers in
  text; an agent with an output type answers in its own schema, as JSON), ``max_output_tokens``,
  ``metadata`` (kept with the response: in its stream's events, ``GET`` and the cancel's answer),
  ``previous_response_id`` (continues *the same run*: with ``function_call_output`` items when the
  previous response ended with the client's calls — exactly those calls must be answered — or
  with a next question after one that completed; 409 while its run still works or after it failed
  or was cancelled), ``stream``, ``store`` (``false``: the response is answered — streamed or
  not — but cannot be retrieved afterwards, ``GET`` answers 404, nor continued,
  ``previous_response_id`` naming it is a 400 ``previous_response_not_found``; its run stays a run,
  ``GET /v1/runs/{id}``, for ``KANAWA_RUN_TTL`` like any). Non-streaming: the Response object, or
  when the run failed an error whose status says whose failure it is
  (:func:`.errors.run_failure`); streaming: server-sent events (below).
- ``GET /v1/responses/{id}`` — the response as it stands (``in_progress`` while the run works);
  ``?stream=true&starting_after=N`` — its events after sequence number ``N`` (from the start
  without it), live until it ends: no gap, no duplicate.
- ``POST /v1/responses/{id}/cancel`` — stops the run; the response ends ``cancelled``.

Another tenant's response id is a 404 exactly like a missing one. Ids: ``resp_<run id>`` for a
run's first response, ``resp_<run id>_<seq>`` for a later one (:mod:`..run_parts`).

What a run's chunks become — output items and events — is :mod:`.response_events`.
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, Final, Literal

from fastapi import APIRouter, Path, Query, Request, Response
from fastapi.responses import JSONResponse
from pydantic import Field

from kanawa.server.http.dependencies import API_ERRORS, BODY_ERRORS, CallerArg
from kanawa.server.http.protocols.errors import ProtocolError
from kanawa.server.http.protocols.inputs import (
    Content,
    FunctionTool,
    InvalidInput,
    JsonData,
    JsonObject,
    LongText,
    OtherTool,
    ShortText,
    ToolName,
    _Open,
    add_tool_call,
    content_text,
    output_schema,
    run_options,
    split_turn,
    tool_answer,
    tool_spec,
)
from kanawa.server.http.protocols.openai.errors import OpenAIError, openai_response, run_failure
from kanawa.server.http.protocols.openai.response_events import PREFIX, ResponseTranslator
from kanawa.server.http.protocols.opening import held_stream, opened_run, streams_of
from kanawa.server.http.protocols.run_parts import (
    Part,
    manager_of,
    owned_part,
    part_chunks,
    part_stream,
)
from kanawa.server.http.strict_json import StrictJsonRoute
from kanawa.server.runs.manager import InvalidContinuation, NotContinuable
from kanawa.server.store.base import RunRecord
from kanawa.types import AssistantMessage, Message, ToolCall, UserMessage

SSE: Final = "text/event-stream"


# ------------------------------------------------------------------------------------------ request


class InputMessage(_Open):
    type: Literal["message"] | None = None
    role: Literal["user", "assistant", "system", "developer"]
    content: Content


class FunctionCallItem(_Open):
    type: Literal["function_call"]
    call_id: ShortText
    name: ToolName
    arguments: LongText


class FunctionCallOutputItem(_Open):
    type: Literal["function_call_output"]
    call_id: ShortText
    output: Content


class OtherItem(_Open):
    """An input item kanawa keeps no state for (``item_reference``, ``reasoning``, ``mcp_call`` …):
    skipped — the run's own history holds what they stood for."""

    type: ShortText


class ItemReference(_Open):
    """An earlier item by id — what a client that keeps its history by reference (the Vercel AI SDK
    with ``store`` on) sends in place of the items a response gave it. One of kanawa's own items
    (``msg_``/``rs_``/``mcp_``/``fc_<run id>_…``) names its run: the request continues that run,
    which holds those items, with what follows the last reference."""

    type: Literal["item_reference"]
    id: ShortText


InputItem = InputMessage | FunctionCallItem | FunctionCallOutputItem | ItemReference | OtherItem
_OWN_ITEM: Final = re.compile(r"^(?:msg|rs|mcp|fc)_(?P<run>[0-9a-f]{32})_[0-9]")


class TextFormat(_Open):
    type: Literal["text", "json_schema", "json_object"]
    name: ShortText | None = None
    schema_: JsonObject | None = Field(default=None, alias="schema")
    strict: bool | None = None
    description: LongText | None = None


class TextConfig(_Open):
    format: TextFormat | None = None


class ResponsesRequest(_Open):
    """``POST /v1/responses`` (fields kanawa does not use are accepted and ignored)."""

    model: ShortText = Field(min_length=1, examples=["echo"])
    input: LongText | Annotated[list[InputItem], Field(max_length=1000)]
    instructions: LongText | None = None
    stream: bool | None = False
    previous_response_id: ShortText | None = None
    store: bool | None = None
    metadata: (
        Annotated[dict[ShortText, Annotated[str, Field(max_length=512)]], Field(max_length=16)] | None
    ) = None
    max_output_tokens: Annotated[int, Field(ge=1, le=1_000_000)] | None = None
    text: TextConfig | None = None
    tools: Annotated[list[FunctionTool | OtherTool], Field(max_length=128)] | None = None
    tool_choice: JsonData = None


def _messages(body: ResponsesRequest, *, start: int = 0) -> tuple[list[Message], list[str]]:
    """The input (its items from ``start``) as messages, and the instructions: the request's, then
    every system/developer turn's."""
    instructions = [body.instructions] if body.instructions else []
    if isinstance(body.input, str):
        return [UserMessage(body.input)], instructions
    messages: list[Message] = []
    for index, item in enumerate(body.input):
        where = f"input[{index}]"
        if isinstance(item, InputMessage):
            text = content_text(item.content, param=where)
            if item.role in ("system", "developer"):
                instructions.append(text)
            elif index < start:
                continue
            elif item.role == "user":
                messages.append(UserMessage(text))
            else:
                messages.append(AssistantMessage(text=text))
        elif index < start:
            continue
        elif isinstance(item, FunctionCallItem):
            add_tool_call(messages, ToolCall(item.call_id, item.name, item.arguments))
        elif isinstance(item, FunctionCallOutputItem):
            messages.append(tool_answer(messages, item.call_id, content_text(item.output, param=where)))
    return messages, instructions


def _last_reference(body: ResponsesRequest) -> tuple[str, int] | None:
    """The run named by the input's last reference to one of kanawa's items, and its index."""
    if isinstance(body.input, str):
        return None
    for index in range(len(body.input) - 1, -1, -1):
        item = body.input[index]
        if isinstance(item, ItemReference):
            match = _OWN_ITEM.match(item.id)
            if match is not None:
                return match["run"], index
    return None


def _options(body: ResponsesRequest, instructions: list[str]) -> Any:
    specs = []
    for index, tool in enumerate(body.tools or ()):
        if not isinstance(tool, FunctionTool):
            raise InvalidInput(
                f"tools of type {tool.type!r} are not supported: declare functions", param=f"tools[{index}]"
            )
        specs.append(tool_spec(tool.name, tool.description, tool.parameters, tool.strict))
    schema = None
    fmt = body.text.format if body.text is not None else None
    if fmt is not None and fmt.type == "json_schema":
        if fmt.schema_ is None:
            raise InvalidInput("text.format json_schema needs a schema", param="text.format.schema")
        schema = output_schema(fmt.name, fmt.schema_, strict=fmt.strict, description=fmt.description)
    elif fmt is not None and fmt.type == "json_object":
        schema = output_schema("response", {"type": "object"}, strict=False, description=None)
    joined = "\n\n".join(text for text in instructions if text) or None
    return run_options(joined, specs, body.max_output_tokens, schema)


# --------------------------------------------------------------------- what is kept of a request

_NOTE: Final = "openai.response"


def _note_name(part: Part) -> str:
    return f"{_NOTE}.{part.after}"


async def _keep(request: Request, part: Part, body: ResponsesRequest) -> None:
    """Keep with the run what the chunks do not say of this response: its ``metadata`` and a
    ``store: false`` (nothing when the request has neither, the usual case)."""
    kept: dict[str, Any] = {}
    if body.metadata:
        kept["metadata"] = body.metadata
    if body.store is False:
        kept["store"] = False
    if kept:  # as ASCII: a lone surrogate a client escaped in its JSON must not fail the store's encoding
        await manager_of(request).store.save_note(part.run_id, _note_name(part), json.dumps(kept))


async def _kept(request: Request, part: Part) -> dict[str, Any]:
    """What :func:`_keep` kept of the response ``part`` (``{}``: nothing)."""
    text = await manager_of(request).store.load_note(part.run_id, _note_name(part))
    kept: dict[str, Any] = json.loads(text) if text else {}
    return kept


async def _stored(request: Request, part: Part) -> dict[str, Any]:
    """What was kept of a response a client asks for by id; 404 for one created with ``store:
    false`` (it was answered, and is not kept for retrieval)."""
    kept = await _kept(request, part)
    if kept.get("store") is False:
        raise OpenAIError(
            404, "this response was created with store: false: it is not kept for retrieval", code="not_found"
        )
    return kept


# ----------------------------------------------------------------------------------------- the routes


async def _finished(
    request: Request, translator: ResponseTranslator, *, until: int | None = None
) -> dict[str, Any]:
    """The Response object after the part's chunks (up to ``until``, or to its end)."""
    async for chunk in part_chunks(manager_of(request).store, translator.part, until=until):
        translator.feed(chunk)
    return translator.snapshot()


def _stream_response(
    request: Request,
    translator: ResponseTranslator,
    admitted: tuple[str, str | None],
    *,
    starting_after: int = -1,
) -> Response:
    """The response's events (after ``starting_after``) until its part of the run ends."""
    translator.starting_after = starting_after
    return part_stream(request, translator.part, translator, admitted)


_RESPONSE_DOC: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "The Response object (``application/json``), or with ``stream`` its events "
        "as server-sent events (``event:`` the type, ``data:`` the event with its ``sequence_number``).",
        "content": {"application/json": {"schema": {"type": "object"}}, SSE: {"schema": {"type": "string"}}},
    },
    400: {"description": "Input a run cannot take (OpenAI error shape)"},
    404: {"description": "Unknown model, or no such response (another tenant's included)"},
    409: {
        "description": "The previous response's run cannot be continued (still running, failed, cancelled)"
    },
}

_FAILURES_DOC: dict[int | str, dict[str, Any]] = {
    500: {"description": "The run failed (a non-streaming request; OpenAI error shape)"},
    502: {"description": "The model provider failed (a non-streaming request; OpenAI error shape)"},
}

router = APIRouter(tags=["openai"], route_class=StrictJsonRoute)  # one JSON rule for every door


def _echo(body: ResponsesRequest, options: Any) -> dict[str, Any]:
    fmt = body.text.format if body.text is not None and body.text.format is not None else None
    return {
        "instructions": body.instructions,
        "max_output_tokens": body.max_output_tokens,
        "metadata": body.metadata,
        "previous_response_id": body.previous_response_id,
        "store": body.store is not False,
        "tools": [
            {**tool.model_dump(exclude_none=True), "strict": bool(tool.strict)}
            for tool in body.tools or ()
            if isinstance(tool, FunctionTool)
        ],
        "format": None if fmt is None else fmt.model_dump(by_alias=True, exclude_none=True),
    }


async def _go_on(
    request: Request, record: RunRecord, messages: list[Message], options: Any, *, param: str
) -> Part:
    """Continue ``record``'s run with the request's messages: the part that answers."""
    try:
        after = await manager_of(request).go_on(record, messages, options=options)
    except NotContinuable as exc:
        raise OpenAIError(409, f"the run cannot be continued: {exc}", param=param) from None
    return Part(record.run_id, after)


async def _begin(request: Request, tenant: str, body: ResponsesRequest) -> tuple[Part, RunRecord | None]:
    """Start the run (or continue the previous response's) and say which part answers."""
    manager = manager_of(request)
    if body.model not in manager.agents:
        raise OpenAIError(
            404,
            f"the model {body.model!r} does not exist (no agent of that name)",
            code="model_not_found",
            param="model",
        )
    try:
        reference = _last_reference(body) if body.previous_response_id is None else None
        messages, instructions = _messages(body, start=0 if reference is None else reference[1] + 1)
        options = _options(body, instructions)
        if body.previous_response_id is not None:
            named = Part.parse(body.previous_response_id, PREFIX)
            record, previous = await owned_part(request, tenant, named)
            if (await _kept(request, previous)).get("store") is False:
                raise OpenAIError(
                    400,
                    "the previous response was created with store: false, so it is not kept and cannot "
                    "be continued: send the conversation's items in input instead",
                    code="previous_response_not_found",
                    param="previous_response_id",
                )
            return await _go_on(request, record, messages, options, param="previous_response_id"), record
        if reference is not None:
            run_id, index = reference
            found = await manager.store.get(tenant, run_id)
            if found is None:  # another tenant's item exactly like a missing one
                raise OpenAIError(404, "no item with that id", code="not_found", param=f"input[{index}]")
            return await _go_on(request, found, messages, options, param=f"input[{index}]"), found
        conversation = split_turn(messages, instructions)
        record = await manager.start(
            tenant, body.model, list(conversation.turn), history=conversation.history, options=options
        )
    except (InvalidInput, InvalidContinuation) as exc:
        raise OpenAIError(400, str(exc), param=getattr(exc, "param", None) or "input") from None
    return Part(record.run_id), record


@router.post(
    "/v1/responses",
    response_class=Response,
    responses={**_RESPONSE_DOC, **_FAILURES_DOC, **BODY_ERRORS, **API_ERRORS},
    summary="Create a model response (OpenAI Responses API)",
)
async def create_response(body: ResponsesRequest, request: Request, who: CallerArg) -> Response:
    """Run the agent named by ``model`` on the input (module docstring of
    ``kanawa.server.http.protocols.openai.responses``)."""
    manager = manager_of(request)

    async def begin() -> tuple[Part, RunRecord | None]:
        return await _begin(request, who.tenant, body)

    try:
        async with opened_run(streams_of(request), manager, who.tenant, begin, run_of=_run_of) as opened:
            part, record = opened.value
            await _keep(request, part, body)
            created = record.created if record is not None else 0.0
            translator = ResponseTranslator(part, model=body.model, created=created, echo=_echo(body, None))
            if body.stream:
                return opened.hand_over(lambda admitted: _stream_response(request, translator, admitted))
            answer = await _finished(request, translator)
        if translator.status == "failed":  # no answer: an error whose status says whose failure it is
            return run_failure("failed", translator.failure, run_id=part.run_id)
        return JSONResponse(answer)
    except ProtocolError as exc:
        return openai_response(exc)


def _run_of(begun: tuple[Part, RunRecord | None]) -> str:
    return begun[0].run_id


ResponseIdArg = Annotated[str, Path(max_length=120, description="A response id (``resp_…``).")]


@router.get(
    "/v1/responses/{response_id}",
    response_class=Response,
    responses={**_RESPONSE_DOC, **API_ERRORS},
    summary="Retrieve a response, or resume its event stream",
)
async def retrieve_response(
    response_id: ResponseIdArg,
    request: Request,
    who: CallerArg,
    stream: bool = False,
    starting_after: Annotated[int | None, Query(ge=0, le=2**53)] = None,
) -> Response:
    """The response as it stands; with ``stream=true`` its events after ``starting_after``."""
    try:
        record, part = await owned_part(request, who.tenant, Part.parse(response_id, PREFIX))
        kept = await _stored(request, part)
        translator = ResponseTranslator(part, model=record.agent, created=record.created, echo=kept)
        if stream:
            after = -1 if starting_after is None else starting_after
            with held_stream(streams_of(request), who.tenant, record.run_id) as held:
                return held.hand_over(
                    lambda admitted: _stream_response(request, translator, admitted, starting_after=after)
                )
        return JSONResponse(await _finished(request, translator, until=record.last_seq))
    except ProtocolError as exc:
        return openai_response(exc)


@router.post(
    "/v1/responses/{response_id}/cancel",
    response_class=Response,
    responses={**_RESPONSE_DOC, **API_ERRORS},
    summary="Cancel a response (stops its run)",
)
async def cancel_response(response_id: ResponseIdArg, request: Request, who: CallerArg) -> Response:
    """Stop the run; the Response answered is ``cancelled`` once the run has stopped (or as it
    ended, when it had ended already)."""
    try:
        record, part = await owned_part(request, who.tenant, Part.parse(response_id, PREFIX))
        manager = manager_of(request)
        if record.status in ("running", "awaiting_approval", "awaiting_tool_output"):
            await manager.cancel(record)
        kept = await _kept(request, part)
        translator = ResponseTranslator(part, model=record.agent, created=record.created, echo=kept)
        with held_stream(streams_of(request), who.tenant, record.run_id):
            return JSONResponse(await _finished(request, translator))
    except ProtocolError as exc:
        return openai_response(exc)


__all__ = ["ResponsesRequest", "router"]
