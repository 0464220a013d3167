"""What ``/a2a/{agent}`` does (its routes are :mod:`.routes`, which import this on first use): each
served agent is an A2A agent (1.0 and 0.3).

``GET /a2a/{agent}/.well-known/agent-card.json`` is its card (:mod:`.card`); ``POST /a2a/{agent}``
its JSON-RPC endpoint. The Bearer key decides the tenant before anything else (401 without one, the
rate limit as everywhere); then

- ``SendStreamingMessage`` and ``SubscribeToTask`` are streamed here: the run's chunks framed as
  A2A events (:mod:`.frames`) by a :class:`~kanawa.server.http.event_stream.RunEventStream`, so the
  run's writer sends them while the client keeps up, and the stream caps, keep-alives, write timeout
  and shutdown are every protocol's. ``SubscribeToTask`` is kanawa's lossless resume: its first
  event is the task as the stored chunks make it (answer so far included), then the events after
  the last of those chunks — or, with ``Last-Event-ID`` (an event's ``id:``), only the events after
  it. A task that has ended is not resubscribed to (A2A's rule): ``GetTask`` has it;
- every other method goes through the SDK's JSON-RPC dispatcher to :class:`.handler.RunTaskHandler`.

A2A 0.3's names are served on the same endpoint with the same guarantees: ``message/stream`` and
``tasks/resubscribe`` stream here like their 1.0 twins, in 0.3's shapes (:mod:`.compat03`);
``message/send``, ``tasks/get`` and ``tasks/cancel`` go through the dispatcher's own 0.3 adapter.

Another tenant's task id is a missing one (``TaskNotFoundError``), byte for byte. Bad JSON-RPC
is answered in JSON-RPC's error shape with status 200, as the SDK does.
"""

from __future__ import annotations

import json
from typing import Any, Final

from a2a.server.jsonrpc_models import JSONParseError
from a2a.server.request_handlers.response_helpers import agent_card_to_dict, build_error_response
from a2a.server.routes.jsonrpc_dispatcher import JsonRpcDispatcher
from a2a.types.a2a_pb2 import SendMessageRequest, SubscribeToTaskRequest, Task, TaskState, TaskStatus
from a2a.utils.constants import PROTOCOL_VERSION_0_3, PROTOCOL_VERSION_CURRENT, VERSION_HEADER
from a2a.utils.errors import (
    A2AError,
    InvalidParamsError,
    TaskNotFoundError,
    UnsupportedOperationError,
    VersionNotSupportedError,
)
from fastapi import HTTPException, Request, Response
from fastapi.responses import JSONResponse
from google.protobuf.json_format import ParseDict
from google.protobuf.message import Message as ProtoMessage

from kanawa.server.http.dependencies import Caller, manager_of, optional_caller
from kanawa.server.http.protocols.a2a import compat03
from kanawa.server.http.protocols.a2a.card import agent_card, anonymous_card
from kanawa.server.http.protocols.a2a.errors import a2a_error, quiet_sdk_refusals
from kanawa.server.http.protocols.a2a.frames import CURRENT, Dialect, RpcId, TaskFraming
from kanawa.server.http.protocols.a2a.handler import CallContext, RunTaskHandler
from kanawa.server.http.protocols.a2a.tasks import STATE, TERMINAL, context_of, owned_task, snapshot
from kanawa.server.http.protocols.a2a.turns import Turn, take_message
from kanawa.server.http.protocols.a2a.validation import refusal, unreadable
from kanawa.server.http.protocols.errors import ProtocolError
from kanawa.server.http.protocols.openai_runs import Part, part_stream
from kanawa.server.http.protocols.opening import held_stream, opened_run, streams_of
from kanawa.server.http.public_url import public_url
from kanawa.server.http.resume import MAX_SEQ, resume_point
from kanawa.server.runs.servable import ServableAgent
from kanawa.server.settings import ServerSettings

STREAMING: Final[dict[str, type[ProtoMessage]]] = {
    "SendStreamingMessage": SendMessageRequest,
    "SubscribeToTask": SubscribeToTaskRequest,
}
"""The 1.0 methods this route streams itself, with their request types."""
STREAMING_METHODS: Final = frozenset(STREAMING) | frozenset(compat03.STREAMING)
"""Every method this route streams itself (1.0's and 0.3's)."""
SSE_MEDIA: Final = "text/event-stream"
quiet_sdk_refusals()


def _agent(request: Request, name: str) -> ServableAgent:
    agents: dict[str, ServableAgent] = request.app.state.agents
    agent = agents.get(name)
    if agent is None:
        raise HTTPException(404, f"no agent named {name!r}")
    return agent


def endpoint_url(request: Request, name: str) -> str:
    """Where the agent's JSON-RPC endpoint is: at the service's public address, never at the one a
    request's ``Host`` claims (:mod:`kanawa.server.http.public_url`)."""
    return public_url(request, request.app.state.settings, "a2a", name)


async def card_response(agent: str, request: Request) -> JSONResponse:
    """The agent's A2A card; without a key, the same name-only card for every name (:mod:`.card`)."""
    settings: ServerSettings = request.app.state.settings
    who = await optional_caller(request, required=settings.a2a_card_needs_key)
    url = endpoint_url(request, agent)
    card = anonymous_card(agent, url) if who is None else agent_card(_agent(request, agent), agent, url)
    return JSONResponse(agent_card_to_dict(card), headers={"Vary": "Authorization"})


async def call(agent: str, request: Request, who: Caller, last_event_id: str | None) -> Response:
    """One JSON-RPC call to the agent (module docstring)."""
    _agent(request, agent)
    request.state.a2a_tenant = who.tenant
    request.state.a2a_agent = agent
    request.state.a2a_refused = None
    try:
        payload = json.loads(await request.body())
    except (ValueError, RecursionError) as exc:
        return JSONResponse(build_error_response(None, JSONParseError(message=unreadable(exc))))
    method = payload.get("method") if isinstance(payload, dict) else None
    legacy = isinstance(method, str) and method in compat03.METHODS
    request.state.a2a_version = PROTOCOL_VERSION_0_3 if legacy else PROTOCOL_VERSION_CURRENT
    unfit = refusal(payload)  # values A2A cannot carry: refused before anything reads them
    if unfit is not None:
        error, echo = unfit
        echoed: RpcId = payload.get("id") if echo and _well_formed(payload) else None
        return JSONResponse(
            compat03.error_body(echoed, error) if legacy else build_error_response(echoed, error)
        )
    if isinstance(method, str) and method in STREAMING_METHODS and _well_formed(payload):
        rpc_id: RpcId = payload.get("id")
        try:
            return await _stream(request, who.tenant, agent, rpc_id, method, payload, last_event_id)
        except A2AError as exc:
            return JSONResponse(
                compat03.error_body(rpc_id, exc) if legacy else build_error_response(rpc_id, exc)
            )
    answer = await _dispatcher(request).handle_requests(request)
    refused: HTTPException | None = request.state.a2a_refused
    if refused is not None:  # a limit the handler hit: its HTTP answer, whichever adapter caught it
        raise refused
    return answer


def _valid_id(rpc_id: object) -> bool:
    return rpc_id is None or (isinstance(rpc_id, str | int) and not isinstance(rpc_id, bool))


def _well_formed(payload: dict[str, Any]) -> bool:
    """A JSON-RPC 2.0 request this route may stream (anything else: the dispatcher's errors)."""
    valid_id = _valid_id(payload.get("id"))
    return payload.get("jsonrpc") == "2.0" and valid_id and isinstance(payload.get("params", {}), dict)


def _dispatcher(request: Request) -> JsonRpcDispatcher:
    """The SDK's JSON-RPC dispatcher over :class:`RunTaskHandler` (with its 0.3 adapter), one per app."""
    made: JsonRpcDispatcher | None = getattr(request.app.state, "a2a_dispatcher", None)
    if made is None:
        made = JsonRpcDispatcher(RunTaskHandler(), context_builder=CallContext(), enable_v0_3_compat=True)
        request.app.state.a2a_dispatcher = made
    return made


def _parse(payload: dict[str, Any], model: type[ProtoMessage]) -> Any:
    try:
        return ParseDict(payload.get("params", {}), model(), ignore_unknown_fields=True)
    except Exception as exc:  # the SDK answers any parse failure so: protobuf's errors vary
        raise InvalidParamsError(message=f"invalid params: {exc}"[:500]) from None


def _check_version(request: Request) -> None:
    """A2A 1.x only (no header: the current version), as the dispatcher checks the unary methods."""
    asked = request.headers.get(VERSION_HEADER)
    if asked and asked.strip().split(".")[0] != "1":
        raise VersionNotSupportedError(message=f"A2A version {asked[:20]!r} is not supported; use 1.0")


async def _stream(
    request: Request,
    tenant: str,
    agent: str,
    rpc_id: RpcId,
    method: str,
    payload: dict[str, Any],
    last_event_id: str | None,
) -> Response:
    dialect: Dialect
    if method in compat03.STREAMING:
        compat03.check_version(request.headers.get(VERSION_HEADER))
        parsed, dialect = compat03.parse(payload), compat03.V03
    else:
        _check_version(request)
        parsed, dialect = _parse(payload, STREAMING[method]), CURRENT
    if isinstance(parsed, SendMessageRequest):
        return await _send_streaming(request, tenant, agent, rpc_id, parsed, dialect)
    return await _subscribe(request, tenant, agent, rpc_id, parsed, last_event_id, dialect)


async def _send_streaming(
    request: Request, tenant: str, agent: str, rpc_id: RpcId, parsed: SendMessageRequest, dialect: Dialect
) -> Response:
    manager = manager_of(request)

    async def begin() -> Turn:
        return await take_message(manager, tenant, agent, parsed)

    try:
        async with opened_run(streams_of(request), manager, tenant, begin, run_of=_run_of) as opened:
            turn = opened.value
            record = turn.record
            context_id = context_of(record)
            status = TaskStatus(state=TaskState.TASK_STATE_WORKING)
            status.timestamp.FromSeconds(int(record.updated))
            opening = Task(id=record.run_id, context_id=context_id, status=status)
            message = opening.history.add()
            message.CopyFrom(parsed.message)
            message.task_id, message.context_id = record.run_id, context_id
            framing = TaskFraming(
                rpc_id, record.run_id, context_id, opening=opening, answered=turn.after > 0, dialect=dialect
            )
            part = Part(record.run_id, turn.after)
            return opened.hand_over(lambda admitted: part_stream(request, part, framing, admitted))
    except ProtocolError as exc:
        raise a2a_error(exc) from None


def _run_of(turn: Turn) -> str:
    return turn.record.run_id


async def _subscribe(
    request: Request,
    tenant: str,
    agent: str,
    rpc_id: RpcId,
    parsed: SubscribeToTaskRequest,
    last_event_id: str | None,
    dialect: Dialect,
) -> Response:
    store = manager_of(request).store
    record = await owned_task(store, tenant, agent, parsed.id)
    if record is None:
        raise TaskNotFoundError
    if STATE[record.status] in TERMINAL:
        raise UnsupportedOperationError(message=f"task {parsed.id} has ended ({record.status}): use GetTask")
    context_id = context_of(record)
    if last_event_id is not None and last_event_id.strip():
        try:
            after = int(last_event_id.strip())
        except ValueError:
            raise InvalidParamsError(message="Last-Event-ID must be an event id (an integer)") from None
        if not 0 <= after <= MAX_SEQ or await resume_point(store, record, after) == "past_end":
            raise InvalidParamsError(message=f"Last-Event-ID {after} is not an event of this task")
        framing = TaskFraming(
            rpc_id, record.run_id, context_id, opening=None, answered=after > 0, dialect=dialect
        )
    else:
        after = record.last_seq
        task = await snapshot(store, record)
        framing = TaskFraming(
            rpc_id, record.run_id, context_id, opening=task, answered=bool(task.artifacts), dialect=dialect
        )
        if task.status.state in TERMINAL:  # it ended while the snapshot was read: nothing follows
            return Response(framing.opening(), media_type=SSE_MEDIA)
    try:
        with held_stream(streams_of(request), tenant, record.run_id) as held:
            return held.hand_over(
                lambda admitted: part_stream(request, Part(record.run_id, after), framing, admitted)
            )
    except ProtocolError as exc:
        raise a2a_error(exc) from None


__all__ = ["STREAMING", "STREAMING_METHODS", "call", "card_response", "endpoint_url"]
