"""AG-UI over kanawa's runs: ``POST /ag-ui/{agent}`` and the resume of its streams.

Routes (behind the Bearer key, like every API route; errors before a stream are
``{"detail": ...}`` with the status):

- ``POST /ag-ui/{agent}`` — a ``RunAgentInput`` (:mod:`.inputs`); the answer is the run's AG-UI
  events as server-sent events (:mod:`.events`). The ``threadId`` is a kanawa run kept per
  tenant: the first input starts it, and each next one continues it — with the frontend's tool
  results after a run that ended with calls of its tools, or with a next question after one that
  finished — from the history the server keeps (the input's earlier messages are not needed, so a
  reloaded page goes on with its thread). 404 for an unknown agent; 400 for input a run cannot take
  (content other than text, tool results for calls that are not waiting); 409 while the thread's run
  still works, waits for a person's approval, or after it failed or was cancelled; 429 for the
  tenant's runs or streams going.
- ``GET /ag-ui/{agent}/threads/{threadId}/runs/{runId}`` with ``Last-Event-ID`` (or
  ``?last_event_id=``) — the rest of that run's events after the one named: what a client whose
  connection dropped gets to go on without a gap or a duplicate. 404 for an unknown (or another
  tenant's) thread; 400 for an id that is not one of the stream's.
- ``GET /ag-ui/{agent}/page`` — a minimal AG-UI chat page (:mod:`kanawa.server.http.page`).

Another tenant's ``threadId`` names a different run (:func:`~.inputs.thread_run_id`): it behaves
exactly like an unknown one.
"""

from __future__ import annotations

from typing import Annotated, Final

from fastapi import APIRouter, Header, HTTPException, Path, Query, Request, Response
from fastapi.responses import HTMLResponse

from kanawa.server.http.dependencies import CallerArg
from kanawa.server.http.page import AGUI_PAGE_HTML, page_response
from kanawa.server.http.protocols.agui.events import AguiTranslator, parse_event_id
from kanawa.server.http.protocols.agui.inputs import AguiInput, run_request, state_of, thread_run_id
from kanawa.server.http.protocols.errors import ProtocolError
from kanawa.server.http.protocols.opening import held_stream, opened_run, streams_of
from kanawa.server.http.protocols.route_docs import stream_responses
from kanawa.server.http.protocols.run_parts import Part, manager_of, owned_part, part_stream
from kanawa.server.http.strict_json import StrictJsonRoute
from kanawa.server.runs.manager import CONTINUABLE

_STREAM_DOC: Final = (
    "AG-UI events as server-sent events: `id:` is `<part>:<seq>:<k>` (send it "
    "back as `Last-Event-ID` to resume), `data:` the event."
)
_RUN_STATUSES: Final = {
    400: "Input a run cannot take",
    404: "Unknown agent",
    409: "The thread's run cannot take an input now",
}
_RESUME_STATUSES: Final = {
    400: "No resume point, or one that is not an event id of the stream",
    404: "No such thread (another tenant's included)",
}
AgentArg = Annotated[str, Path(min_length=1, max_length=200, description="An agent's name.")]
ThreadArg = Annotated[str, Path(min_length=1, max_length=200, description="The AG-UI threadId.")]

router = APIRouter(tags=["ag-ui"], route_class=StrictJsonRoute)  # one JSON rule for every door


def _agent(request: Request, agent: str) -> None:
    if agent not in manager_of(request).agents:
        raise HTTPException(404, f"no agent named {agent!r}")


async def _begin(request: Request, tenant: str, agent: str, body: AguiInput) -> Part:
    """Start the thread's run, or continue it: the part of the run that answers ``body``. kanawa's
    refusals are left to the opening's table (:mod:`.errors`)."""
    manager = manager_of(request)
    run_id = thread_run_id(tenant, agent, body.thread_id)
    turn, options = run_request(body)
    record = await manager.store.get(tenant, run_id)
    if record is None:
        await manager.start(
            tenant, agent, list(turn.turn), history=turn.history, options=options, run_id=run_id
        )
        return Part(run_id)
    if record.status not in CONTINUABLE:
        raise ProtocolError(409, f"the thread's run is {record.status}: it cannot take an input now")
    return Part(run_id, await manager.go_on(record, list(turn.turn), options=options))


@router.post(
    "/ag-ui/{agent}",
    response_class=Response,
    responses=stream_responses(_STREAM_DOC, _RUN_STATUSES, body=True),
    summary="Run an agent (AG-UI RunAgentInput in, AG-UI events out)",
)
async def run_agent(agent: AgentArg, body: AguiInput, request: Request, who: CallerArg) -> Response:
    """Run ``agent`` on the thread (module docstring of ``kanawa.server.http.protocols.agui.routes``)."""
    _agent(request, agent)

    async def begin() -> Part:
        return await _begin(request, who.tenant, agent, body)

    async with opened_run(
        streams_of(request), manager_of(request), who.tenant, begin, run_of=_run_id
    ) as opened:
        part = opened.value
        translator = AguiTranslator(
            thread_id=body.thread_id,
            run_id=body.run_id,
            run=part.run_id,
            after=part.after,
            state=state_of(body),
        )
        return opened.hand_over(lambda admitted: part_stream(request, part, translator, admitted))


def _run_id(part: Part) -> str:
    return part.run_id


@router.get(
    "/ag-ui/{agent}/threads/{thread_id}/runs/{run_id}",
    response_class=Response,
    responses=stream_responses(_STREAM_DOC, _RESUME_STATUSES),
    summary="Resume an AG-UI run's event stream after Last-Event-ID",
)
async def resume_run(
    agent: AgentArg,
    thread_id: ThreadArg,
    run_id: Annotated[str, Path(min_length=1, max_length=200, description="The AG-UI runId.")],
    request: Request,
    who: CallerArg,
    last_event_id: Annotated[str | None, Header(max_length=64)] = None,
    resume_after: Annotated[str | None, Query(alias="last_event_id", max_length=64)] = None,
) -> Response:
    """The run's events after ``Last-Event-ID`` (``?last_event_id=`` for a client that cannot set
    headers): no gap, no duplicate."""
    _agent(request, agent)
    given = last_event_id if last_event_id is not None and last_event_id.strip() else resume_after
    point = parse_event_id(given) if given else None
    if point is None:
        raise HTTPException(400, "send the last event id you got (Last-Event-ID: <part>:<seq>:<k>)")
    run = thread_run_id(who.tenant, agent, thread_id)
    record, part = await owned_part(request, who.tenant, Part(run, point[0]), kind="thread run")
    if point[1] < part.after:
        raise HTTPException(400, "that event id is not one of this run's")
    translator = AguiTranslator(
        thread_id=thread_id, run_id=run_id, run=record.run_id, after=part.after, resume=point
    )
    with held_stream(streams_of(request), who.tenant, record.run_id) as held:
        return held.hand_over(lambda admitted: part_stream(request, part, translator, admitted))


@router.get("/ag-ui/{agent}/page", response_class=HTMLResponse, include_in_schema=False)
async def agui_page(agent: AgentArg) -> HTMLResponse:
    """The minimal AG-UI chat page for ``agent`` (the page checks the agent exists when it posts)."""
    return page_response(AGUI_PAGE_HTML)


__all__ = ["router"]
