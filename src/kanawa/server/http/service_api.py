"""What the service says about itself and the caller: the tenant of a key, the agents it runs, its
liveness."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from kanawa.server.http.dependencies import API_ERRORS, CallerArg
from kanawa.server.runs.servable import ServableAgent


class AgentInfo(BaseModel):
    name: str
    tools: list[str]
    model: str


class AgentList(BaseModel):
    agents: list[AgentInfo]


class WhoAmI(BaseModel):
    """The tenant an API key belongs to: the pages show it, so a user sees whose runs they start."""

    tenant: str


router = APIRouter()


@router.get("/v1/whoami", response_model=WhoAmI, responses=API_ERRORS, tags=["service"])
async def whoami(who: CallerArg) -> WhoAmI:
    """The tenant of the API key sent: what a page shows as the active tenant, so a key slipped
    into its address (``#key=``) cannot run the user's work in another tenant unseen."""
    return WhoAmI(tenant=who.tenant)


@router.get("/v1/agents", response_model=AgentList, responses=API_ERRORS, tags=["agents"])
async def list_agents(request: Request, who: CallerArg) -> AgentList:
    """The agents this server runs."""
    agents: dict[str, ServableAgent] = request.app.state.agents
    return AgentList(
        agents=[
            AgentInfo(name=name, tools=[t.name for t in agent.tools], model=agent.model.model)
            for name, agent in agents.items()
        ]
    )


@router.get("/healthz", tags=["service"])
async def healthz() -> JSONResponse:
    """Liveness (no authentication)."""
    return JSONResponse({"status": "ok"})


__all__ = ["AgentInfo", "AgentList", "WhoAmI", "router"]
