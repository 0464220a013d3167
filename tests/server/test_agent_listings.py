"""Every door that lists or describes the served agents, read with its official client where it has
one, against the app on loopback: none shows an agent's instructions or a tool's docstring (issue 30
#7, the card's rule, on every door).

An agent is described by what was written for its callers (``Agent(description=...)``, a composite's
``description``), else by its name — on MCP's ``tools/list`` (the ``mcp`` client), the A2A card (the
``a2a-sdk`` resolver), OpenAI's ``/v1/models`` (the ``openai`` client) and kanawa's ``/v1/agents``.
AG-UI and the AI SDK have no listing: an agent is named in their URL."""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass

import httpx
import openai
import pytest
from a2a.client.card_resolver import A2ACardResolver
from google.protobuf.json_format import MessageToDict
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from kanawa.server.http.app import create_app
from kanawa.server.runs.servable import ServableAgent
from tests.server.composite_agents import Relay
from tests.server.conftest import LiveServer, settings_for
from tests.server.protocols.test_a2a_card import PUBLISHED, SECRET, card_agents
from tests.server.sse import AUTH_A, KEY_A

COMPOSITE_DESCRIPTION = "Passes the question to a helper and answers with its reply."
PRIVATE = (SECRET, "Never tell anyone", "Be brief", "swordfish", "internal ledger")
"""What the agents' instructions and their tool's docstring say, none of it for callers."""


@dataclass
class DescribedRelay(Relay):
    """A composite carrying a description written for its callers."""

    name: str = "described-relay"
    description: str = COMPOSITE_DESCRIPTION


def listed_agents() -> dict[str, ServableAgent]:
    """``vault`` (secret instructions and tool docstring, no description), ``published`` (the same
    secrets, a description), and two composites, with and without one."""
    return {**card_agents(), "relay": Relay(), "described-relay": DescribedRelay()}


EXPECTED = {"vault": None, "published": PUBLISHED, "relay": None, "described-relay": COMPOSITE_DESCRIPTION}
"""Each agent's description as a door shows it (None: a sentence naming the agent)."""


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    live = LiveServer(create_app(agents=listed_agents(), settings=settings_for("embedded", None))).start()
    try:
        yield live
    finally:
        live.stop()


Listing = tuple[dict[str, str | None], str]
"""A door's answer: each agent's description (None: the door carries none) and the raw text."""


async def _mcp(url: str) -> Listing:
    async with (
        create_mcp_http_client(headers=AUTH_A) as http,
        streamable_http_client(f"{url}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        listed = await session.list_tools()
    tools = {tool.title or tool.name: tool.description for tool in listed.tools}
    return tools, listed.model_dump_json()


async def _a2a_card(url: str) -> Listing:
    described: dict[str, str | None] = {}
    raw: list[str] = []
    async with httpx.AsyncClient(headers=AUTH_A, timeout=30) as http:
        for name in EXPECTED:
            card = await A2ACardResolver(http, f"{url}/a2a/{name}").get_agent_card()
            described[name] = card.description
            raw.append(json.dumps(MessageToDict(card)))
    return described, "\n".join(raw)


async def _openai_models(url: str) -> Listing:
    client = openai.AsyncOpenAI(base_url=f"{url}/v1", api_key=KEY_A)
    try:
        listed = await client.models.list()
        one = [await client.models.retrieve(model.id) for model in listed.data]
    finally:
        await client.close()
    raw = "\n".join(model.model_dump_json() for model in [*listed.data, *one])
    return {model.id: None for model in listed.data}, raw


async def _kanawa_agents(url: str) -> Listing:
    async with httpx.AsyncClient(headers=AUTH_A, timeout=30) as http:
        answer = await http.get(f"{url}/v1/agents")
    assert answer.status_code == 200, answer.text
    return {agent["name"]: None for agent in answer.json()["agents"]}, answer.text


DOORS: dict[str, Callable[[str], Awaitable[Listing]]] = {
    "mcp tools/list": _mcp,
    "a2a card": _a2a_card,
    "openai /v1/models": _openai_models,
    "kanawa /v1/agents": _kanawa_agents,
}


@pytest.mark.parametrize("door", list(DOORS))
async def test_no_door_shows_an_agents_instructions_or_a_tools_docstring(
    server: LiveServer, door: str
) -> None:
    described, raw = await DOORS[door](server.url)
    assert set(described) == set(EXPECTED), described
    for private in PRIVATE:
        assert private not in raw, (door, private)
    for name, expected in EXPECTED.items():
        said = described[name]
        if said is None and door in ("openai /v1/models", "kanawa /v1/agents"):
            continue  # a door without descriptions
        assert said is not None, (door, name)
        if expected is None:  # nothing written for callers: the agent's name, and nothing more
            assert name in said, (door, name, said)
            assert said.startswith("The kanawa agent"), (door, name, said)
        else:
            assert said == expected, (door, name, said)


LISTINGS = {"/v1/models", "/v1/models/{model}", "/v1/agents", "/a2a/{agent}/.well-known/agent-card.json"}
"""The GET routes that describe agents (with MCP's ``tools/list``, a method of ``/mcp``): :data:`DOORS`."""
NOT_LISTINGS = {
    "/ag-ui/{agent}/page",
    "/ag-ui/{agent}/threads/{thread_id}/runs/{run_id}",
    "/ai-sdk/{agent}/{chat_id}/stream",
}
"""GET routes with an agent in their path that describe none: a page, and two streams' resumes."""


def test_every_get_route_about_agents_is_a_tested_door(server: LiveServer) -> None:
    """A new GET route about agents fails here until it is one of :data:`DOORS` (or says why not)."""
    about_agents = {
        route.path
        for route in server.app.routes
        if "GET" in (getattr(route, "methods", None) or ()) and re.search(r"agent|model", route.path)
    }
    assert about_agents == LISTINGS | NOT_LISTINGS
