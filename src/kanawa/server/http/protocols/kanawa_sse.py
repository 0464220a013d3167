"""kanawa's own wire protocol: a run's chunks as server-sent events (seed 002 §5-1).

``POST /v1/runs`` starts a run and streams it; ``GET /v1/runs/{id}/events`` resumes it after
``Last-Event-ID``. A chunk goes out as ``id: <seq>`` (what a client sends back to resume) and
``data: <chunk JSON>``, the JSON ``{time, agent, type, data, seq}`` as the run layer encoded it
(:mod:`kanawa.server.runs.chunks`) — the store keeps that text, so a chunk is framed here and never
re-encoded. The chunks a run made together go out as one ``bytes`` (one send, one socket write), from
the run's writer while the client keeps up (:mod:`kanawa.server.http.direct`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Annotated, Any, Final

from fastapi import APIRouter, Header, HTTPException, Query, Request, Response
from pydantic import BaseModel, Field

from kanawa.server.http.dependencies import (
    API_ERRORS,
    BODY_ERRORS,
    CallerArg,
    RunIdArg,
    manager_of,
    owned,
)
from kanawa.server.http.event_stream import OpenStreams, RunEventStream
from kanawa.server.http.protocols.opening import held_stream, opened_run, streams_of
from kanawa.server.http.resume import resume_point
from kanawa.server.http.validation import Text
from kanawa.server.runs.chunks import Chunk
from kanawa.server.runs.servable import ServableAgent
from kanawa.server.settings import ServerSettings
from kanawa.server.store.base import ChunksExpired, Entry, RunRecord

_FRAME: Final = b"id: %d\r\ndata: %b\r\n\r\n"


def sse_frame(seq: int, text: str) -> bytes:
    """One chunk as a server-sent event: its ``seq`` as the event id, its JSON as the data line."""
    return _FRAME % (seq, text.encode())


def sse_frames(entries: Sequence[Entry]) -> bytes:
    """Several chunks' events as one ``bytes``."""
    if len(entries) == 1:
        entry = entries[0]
        return _FRAME % (entry.seq, entry.text.encode())
    return "".join(f"id: {entry.seq}\r\ndata: {entry.text}\r\n\r\n" for entry in entries).encode()


def expired_frame(exc: ChunksExpired) -> bytes:
    """What a resume asking for chunks no longer kept gets instead of a stream with a gap: an
    ``error`` chunk with code ``chunks_expired`` (no ``id:``: it is not one of the run's chunks)."""
    chunk = Chunk("", "error", {"code": "chunks_expired", "message": str(exc)}, time.time())
    return f"data: {chunk.encode(0)}\r\n\r\n".encode()


SSE_MEDIA = "text/event-stream"
_SSE_DOC: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "Server-sent events: `id:` is the chunk's seq, `data:` the chunk JSON "
        "`{time, agent, type, data, seq}`; the last chunk has type `done`.",
        "content": {SSE_MEDIA: {"schema": {"type": "string"}}},
    }
}


class RunRequest(BaseModel):
    """``POST /v1/runs``: which agent, what to ask, an optional session id."""

    agent: Text = Field(min_length=1, max_length=200)
    input: Text = Field(min_length=1, max_length=200_000)
    session_id: Text | None = Field(default=None, max_length=200)


def event_stream(
    request: Request, run_id: str, after: int, admitted: tuple[str, str | None]
) -> RunEventStream:
    """The run's chunks after ``after`` as kanawa's server-sent events."""
    settings: ServerSettings = request.app.state.settings
    streams: OpenStreams = request.app.state.streams
    return RunEventStream(
        manager_of(request).store,
        run_id,
        after,
        encode=sse_frames,
        expired=expired_frame,
        ping=settings.sse_ping,
        streams=streams,
        write_timeout=settings.sse_write_timeout,
        admitted=admitted,
    )


router = APIRouter(tags=["runs"])


@router.post(
    "/v1/runs",
    responses={
        **_SSE_DOC,
        **BODY_ERRORS,
        404: {"description": "Unknown agent"},
        **API_ERRORS,
        429: {"description": "Rate limit of the API key, or the tenant's runs going (`Retry-After`)"},
    },
    response_class=Response,
)
async def start_run(body: RunRequest, request: Request, who: CallerArg) -> Response:
    """Start a run and stream its chunks. The run id is in the ``X-Run-Id`` header; the run goes on
    if the client disconnects (resume with ``GET /v1/runs/{id}/events``)."""
    agents: dict[str, ServableAgent] = request.app.state.agents
    if body.agent not in agents:
        raise HTTPException(404, f"no agent named {body.agent!r}")
    manager = manager_of(request)

    async def begin() -> RunRecord:
        return await manager.start(who.tenant, body.agent, body.input, session_id=body.session_id)

    async with opened_run(streams_of(request), manager, who.tenant, begin, run_of=_run_id) as opened:
        return opened.hand_over(lambda admitted: event_stream(request, opened.run_id, 0, admitted))


def _run_id(record: RunRecord) -> str:
    return record.run_id


@router.get(
    "/v1/runs/{run_id}/events",
    responses={
        **_SSE_DOC,
        204: {"description": "The run has ended and the resume point is its last chunk"},
        400: {"description": "A resume point that is not a seq of the run"},
        404: {"description": "No such run"},
        **API_ERRORS,
    },
    response_class=Response,
)
async def run_events(
    run_id: RunIdArg,
    request: Request,
    who: CallerArg,
    last_event_id: Annotated[str | None, Header(max_length=20)] = None,
    after: Annotated[int | None, Query(ge=0)] = None,
) -> Response:
    """The run's chunks after ``Last-Event-ID`` (or ``?after=``; from the start without either):
    no gap, no duplicate."""
    record = await owned(request, who, run_id)
    start = after or 0
    if last_event_id is not None and last_event_id.strip():
        try:
            start = int(last_event_id.strip())
        except ValueError:
            raise HTTPException(400, "Last-Event-ID must be a chunk seq (an integer)") from None
        if start < 0:
            raise HTTPException(400, "Last-Event-ID must not be negative")
    match await resume_point(manager_of(request).store, record, start):
        case "stream":
            with held_stream(streams_of(request), who.tenant, record.run_id) as held:
                return held.hand_over(lambda admitted: event_stream(request, record.run_id, start, admitted))
        case "ended":
            return Response(status_code=204, headers={"X-Run-Id": record.run_id})
        case "past_end":
            raise HTTPException(
                400, f"resume point {start} is past the run's last chunk (seq {record.last_seq})"
            )


__all__ = ["RunRequest", "event_stream", "expired_frame", "router", "sse_frame", "sse_frames"]
