"""The A2A routes: ``GET /a2a/{agent}/.well-known/agent-card.json`` and ``POST /a2a/{agent}``.

What they do is :mod:`.rpc`'s. It is imported by the first A2A request, not with the app: the A2A
SDK and the protobuf runtime under it add about 19 MiB to a server process and a third of a second
to its start, which a server whose clients never speak A2A should not pay.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Header, Path, Request, Response

from kanawa.server.http.dependencies import CallerArg

router = APIRouter(tags=["a2a"])


@router.get("/a2a/{agent}/.well-known/agent-card.json", include_in_schema=False)
async def a2a_agent_card(
    agent: Annotated[str, Path(min_length=1, max_length=200)], request: Request
) -> Response:
    """The agent's A2A card (a key shows the agent's own; without one, the same card for any name)."""
    from kanawa.server.http.protocols.a2a import rpc

    return await rpc.card_response(agent, request)


@router.post("/a2a/{agent}", include_in_schema=False, name="a2a_endpoint")
async def a2a_endpoint(
    agent: str,
    request: Request,
    who: CallerArg,
    last_event_id: Annotated[str | None, Header(max_length=20)] = None,
) -> Response:
    """One JSON-RPC call to the agent (:mod:`.rpc`)."""
    from kanawa.server.http.protocols.a2a import rpc

    return await rpc.call(agent, request, who, last_event_id)


__all__ = ["router"]
