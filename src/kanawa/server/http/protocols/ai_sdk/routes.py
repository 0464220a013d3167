"""The Vercel AI SDK's chat protocol over kanawa's runs: what ``useChat`` speaks.

- ``POST /ai-sdk/{agent}`` — ``DefaultChatTransport``'s request (:mod:`.inputs`: the chat's
  id, its UI messages, ``trigger``, ``messageId``, and the client's ``tools``), answered with the UI
  message stream (:mod:`.events`).
- ``GET /ai-sdk/{agent}/{chat id}/stream`` — the transport's ``reconnectToStream``: the answer in
  progress, replayed from its start (the client rebuilds the message in place: nothing lost, nothing
  twice), live until it ends; ``204`` when the chat has no answer in progress.

**A chat is a run.** The tenant's chat ``id`` for an agent names its run: the run id is derived
from (tenant, agent, chat id, generation), never stored, so any web process — a second worker, one
on Redis — finds a chat from its id alone, and another tenant's chat id names a run that tenant does
not own: exactly an unknown chat (a new conversation; ``204`` on reconnect). The next message of a
chat whose answer completed continues the same run (its history is the server's, as with the
Responses API's ``previous_response_id``); so does the request that carries the outputs of the
client's tools the answer ended with — the run waits for them (``awaiting_tool_output``). A chat
starts a new run (its next generation, from the messages the client sent) when there is none, when
its run failed or was cancelled or its saved state expired, when a user message comes instead of
the tool outputs the run waits for, on ``regenerate-message``, and when the client edits an earlier
message (``messageId`` with ``submit-message``). A chat whose answer is
still going answers ``409``. A request without an ``id`` is a chat of its own (nothing to resume).
"""

from __future__ import annotations

import hashlib
import uuid
from typing import Annotated, Final

from fastapi import APIRouter, HTTPException, Path, Request, Response

from kanawa.loop.approval import unanswered_calls
from kanawa.loop.options import RunOptions
from kanawa.server.http.dependencies import CallerArg
from kanawa.server.http.event_stream import RunEventStream
from kanawa.server.http.protocols.ai_sdk.events import HEADER, UIMessageFraming
from kanawa.server.http.protocols.ai_sdk.inputs import (
    ChatRequest,
    conversation,
    options_of,
    tool_outputs,
)
from kanawa.server.http.protocols.errors import ProtocolError
from kanawa.server.http.protocols.framing import DoneChunk, typed_chunk
from kanawa.server.http.protocols.inputs import split_turn
from kanawa.server.http.protocols.opening import held_stream, opened_run, streams_of
from kanawa.server.http.protocols.route_docs import stream_responses
from kanawa.server.http.protocols.run_parts import Part, manager_of, part_stream
from kanawa.server.http.strict_json import StrictJsonRoute
from kanawa.server.runs.checkpoint import Checkpoint
from kanawa.server.runs.manager import NotContinuable
from kanawa.server.store.base import ChunksExpired, RunExists, RunRecord, RunStore
from kanawa.types import Message

MAX_GENERATIONS: Final = 64
"""Runs one chat may start within the run TTL (regenerations, runs after a failure)."""
_STREAM_DOC: Final = (
    "The UI message stream (header `x-vercel-ai-ui-message-stream: v1`): "
    "`data:` UI message chunks, ending with `data: [DONE]`."
)
_CHAT_STATUSES: Final = {
    400: "Messages a run cannot take (parts other than text, tool outputs for no call)",
    404: "Unknown agent",
    409: "The chat's answer is still going, or the chat cannot go on",
    429: "Rate limit, or the tenant's runs or streams at their limit (`Retry-After`)",
}
_RESUME_STATUSES: Final = {
    204: "The chat has no answer in progress (an unknown chat, another tenant's)",
    404: "Unknown agent",
}

AgentArg = Annotated[str, Path(max_length=200, description="The agent's name.")]
ChatIdArg = Annotated[str, Path(max_length=200, description="The chat's id (useChat's `id`).")]


def chat_run_id(tenant: str, agent: str, chat_id: str, generation: int) -> str:
    """The run id of a chat's ``generation``-th run (module docstring)."""
    key = "\x00".join((tenant, agent, chat_id, str(generation)))
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]


async def chat_run(
    store: RunStore, tenant: str, agent: str, chat_id: str
) -> tuple[RunRecord | None, int | None]:
    """The chat's current run (its newest) and the next free generation (``None``: none left).
    Generations are looked up in order until one is missing: older runs expire first, and a
    generation freed by expiry is taken again, so the newest is the one created last."""
    newest: RunRecord | None = None
    for generation in range(MAX_GENERATIONS):
        record = await store.get(tenant, chat_run_id(tenant, agent, chat_id, generation))
        if record is None:
            return newest, generation
        if newest is None or record.created >= newest.created:
            newest = record
    return newest, None


router = APIRouter(tags=["ai-sdk"], route_class=StrictJsonRoute)  # one JSON rule for every door


def _ui_stream(
    request: Request, part: Part, framing: UIMessageFraming, admitted: tuple[str, str | None]
) -> RunEventStream:
    stream = part_stream(request, part, framing, admitted)
    stream.headers[HEADER[0]] = HEADER[1]
    return stream


async def _tool_answers(store: RunStore, record: RunRecord, body: ChatRequest) -> list[Message]:
    """The outputs in the last message for the calls the run waits for (the agent's own calls in the
    same message were answered on the server)."""
    text = await store.load_checkpoint(record.run_id)
    if text is None:
        raise NotContinuable("the run's saved state has expired")
    waiting = {call.id for call in unanswered_calls(Checkpoint.loads(text).messages)}
    return [answer for answer in tool_outputs(body.messages[-1]) if answer.tool_call_id in waiting]


async def _answer(request: Request, tenant: str, agent: str, body: ChatRequest) -> tuple[Part, bool]:
    """Start or continue the chat's run (module docstring): the part that answers, and whether it
    is a new assistant message (else it goes on with the client's last one)."""
    manager = manager_of(request)
    messages, instructions = conversation(body.messages)
    options: RunOptions | None = options_of(body, instructions)
    chat_id = body.id if body.id is not None else uuid.uuid4().hex  # no id: a chat of its own
    current, free = await chat_run(manager.store, tenant, agent, chat_id)
    with_tools = body.messages[-1].role == "assistant"
    if current is not None and current.status in ("running", "awaiting_approval"):
        what = "is still going" if current.status == "running" else "waits for a person's approval"
        raise ProtocolError(409, f"this chat's answer {what}", code="conflict")
    edits = body.trigger == "regenerate-message" or body.messageId is not None
    if current is not None and not edits:
        if with_tools and current.status == "awaiting_tool_output":
            answers = await _tool_answers(manager.store, current, body)
            return Part(current.run_id, await manager.go_on(current, answers, options=options)), False
        if not with_tools and current.status == "completed":
            asked = split_turn(messages, instructions).turn
            return Part(current.run_id, await manager.go_on(current, list(asked), options=options)), True
    if free is None:
        raise ProtocolError(
            409, f"this chat has started {MAX_GENERATIONS} runs: start a new chat", code="conflict"
        )
    turn = split_turn(messages, instructions)
    run_id = chat_run_id(tenant, agent, chat_id, free)
    record = await manager.start(
        tenant, agent, list(turn.turn), history=turn.history, options=options, run_id=run_id
    )
    return Part(record.run_id), not with_tools


@router.post(
    "/ai-sdk/{agent}",
    response_class=Response,
    responses=stream_responses(_STREAM_DOC, _CHAT_STATUSES, body=True),
    summary="Chat with an agent (the Vercel AI SDK's useChat / DefaultChatTransport)",
)
async def chat(agent: AgentArg, body: ChatRequest, request: Request, who: CallerArg) -> Response:
    """Answer the chat's last message as a UI message stream (module docstring of
    ``kanawa.server.http.protocols.ai_sdk.routes``)."""
    if agent not in manager_of(request).agents:
        raise HTTPException(404, f"no agent named {agent!r}")

    async def begin() -> tuple[Part, bool]:
        try:
            return await _answer(request, who.tenant, agent, body)
        except NotContinuable as exc:
            raise ProtocolError(409, f"the chat cannot go on: {exc}", code="conflict") from None
        except RunExists:
            raise ProtocolError(409, "this chat's answer is still going", code="conflict") from None

    async with opened_run(
        streams_of(request), manager_of(request), who.tenant, begin, run_of=_run_of
    ) as opened:
        part, new_message = opened.value
        framing = UIMessageFraming(part, new_message=new_message)
        return opened.hand_over(lambda admitted: _ui_stream(request, part, framing, admitted))


def _run_of(begun: tuple[Part, bool]) -> str:
    return begun[0].run_id


async def _current_part(store: RunStore, record: RunRecord) -> tuple[int, bool]:
    """Where the run's answer in progress starts (the seq of the ``done`` chunk before it, 0 for
    the first) and whether it goes on with the message that asked for the client's tools."""
    start, continued = 0, False
    if record.last_seq == 0:
        return start, continued
    try:
        async for batch in store.read_batches(record.run_id, after=0):
            for entry in batch:
                if entry.terminal:  # a part that ended: the one in progress comes after it
                    start = entry.seq
                    done = typed_chunk(entry)
                    continued = isinstance(done, DoneChunk) and done.status == "awaiting_tool_output"
            if batch and batch[-1].seq >= record.last_seq:
                break
    except ChunksExpired:  # the answer's start is gone: its stream says so (the framing's error)
        return 0, False
    return start, continued


@router.get(
    "/ai-sdk/{agent}/{chat_id}/stream",
    response_class=Response,
    responses=stream_responses(_STREAM_DOC, _RESUME_STATUSES),
    summary="Resume the chat's answer in progress (DefaultChatTransport's reconnectToStream)",
)
async def resume(agent: AgentArg, chat_id: ChatIdArg, request: Request, who: CallerArg) -> Response:
    """The answer in progress from its start, live until it ends; 204 without one."""
    manager = manager_of(request)
    if agent not in manager.agents:
        raise HTTPException(404, f"no agent named {agent!r}")
    current, _ = await chat_run(manager.store, who.tenant, agent, chat_id)
    if current is None or current.status != "running":
        return Response(status_code=204)
    start, continued = await _current_part(manager.store, current)
    part = Part(current.run_id, start)
    framing = UIMessageFraming(part, new_message=not continued)
    with held_stream(streams_of(request), who.tenant, current.run_id) as held:
        return held.hand_over(lambda admitted: _ui_stream(request, part, framing, admitted))


__all__ = ["chat_run", "chat_run_id", "router"]
