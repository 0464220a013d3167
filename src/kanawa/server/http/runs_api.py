"""The runs of the caller's tenant, whatever protocol started them: list, look up, cancel, approve.

Every route looks the run up by ``(tenant, id)`` first (:func:`~.dependencies.owned`), so another
tenant's run is a 404 exactly like a missing one."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, HTTPException, Request
from pydantic import BaseModel, Field

from kanawa.server.http.dependencies import API_ERRORS, BODY_ERRORS, CallerArg, RunIdArg, manager_of, owned
from kanawa.server.http.validation import Text
from kanawa.server.runs.manager import WAITING, InvalidDecisions, NotAwaitingApproval
from kanawa.server.store.base import RunRecord


class ApprovalRequest(BaseModel):
    """``POST /v1/runs/{id}/approvals``: the tool calls a human approved or rejected (with a reason)."""

    approved: list[Annotated[Text, Field(max_length=200)]] = Field(default_factory=list, max_length=1000)
    rejected: dict[Annotated[Text, Field(max_length=200)], Annotated[Text, Field(max_length=2000)]] = Field(
        default_factory=dict
    )


class RunInfo(BaseModel):
    id: str
    agent: str
    status: str
    created: float
    updated: float
    last_seq: int
    termination_reason: str | None
    session_id: str | None


class RunList(BaseModel):
    runs: list[RunInfo]


def run_info(record: RunRecord) -> RunInfo:
    return RunInfo(
        id=record.run_id,
        agent=record.agent,
        status=record.status,
        created=record.created,
        updated=record.updated,
        last_seq=record.last_seq,
        termination_reason=record.termination_reason,
        session_id=record.session_id,
    )


router = APIRouter(tags=["runs"])


@router.get("/v1/runs", response_model=RunList, responses=API_ERRORS)
async def list_runs(request: Request, who: CallerArg) -> RunList:
    """This tenant's runs, newest first."""
    records = await manager_of(request).store.list(who.tenant, limit=100)
    return RunList(runs=[run_info(r) for r in records])


@router.get(
    "/v1/runs/{run_id}",
    response_model=RunInfo,
    responses={404: {"description": "No such run"}, **API_ERRORS},
)
async def get_run(run_id: RunIdArg, request: Request, who: CallerArg) -> RunInfo:
    """A run's status and its last ``seq``."""
    return run_info(await owned(request, who, run_id))


@router.post(
    "/v1/runs/{run_id}/cancel",
    response_model=RunInfo,
    status_code=202,
    responses={404: {"description": "No such run"}, **API_ERRORS},
)
async def cancel_run(run_id: RunIdArg, request: Request, who: CallerArg) -> RunInfo:
    """Ask a run to stop; its stream ends with a ``done`` chunk of status ``cancelled``."""
    record = await owned(request, who, run_id)
    if record.status == "running" or record.status in WAITING:
        await manager_of(request).cancel(record)
        record = await owned(request, who, run_id)
    return run_info(record)


@router.post(
    "/v1/runs/{run_id}/approvals",
    response_model=RunInfo,
    status_code=202,
    responses={
        404: {"description": "No such run"},
        409: {"description": "Not awaiting approval"},
        422: {"description": "Decisions that do not fit the calls waiting"},
        **BODY_ERRORS,
        **API_ERRORS,
    },
)
async def approve_run(run_id: RunIdArg, body: ApprovalRequest, request: Request, who: CallerArg) -> RunInfo:
    """Answer a run waiting for human approval; the run continues in the same stream (resume
    after the ``done`` chunk of status ``awaiting_approval``)."""
    record = await owned(request, who, run_id)
    try:
        await manager_of(request).approve(record, approved=body.approved, rejected=body.rejected)
    except NotAwaitingApproval as exc:
        raise HTTPException(409, str(exc)) from None
    except InvalidDecisions as exc:
        raise HTTPException(422, str(exc)) from None
    return run_info(await owned(request, who, run_id))


__all__ = ["ApprovalRequest", "RunInfo", "RunList", "router", "run_info"]
