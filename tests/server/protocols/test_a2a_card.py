"""The A2A agent card (``GET /a2a/{agent}/.well-known/agent-card.json``) read by the official
``a2a-sdk`` card resolver, against the app served on loopback:

- it shows only what was written for callers (``Agent(description=..., skills=[AgentSkill(...)])``),
  never the instructions (a secret discount code in the test) nor a tool's docstring;
- its endpoint URL is the service's own address, ``KANAWA_PUBLIC_URL``, or a ``Host`` named in
  ``KANAWA_ALLOWED_HOSTS`` — never a ``Host: evil.example`` the request claims;
- without a key every name gets the same card (agent names cannot be probed), a wrong key is 401
  for every name, and with ``KANAWA_A2A_CARD_NEEDS_KEY`` no key is 401 for every name.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from a2a.client import ClientConfig, ClientFactory
from a2a.client.card_resolver import A2ACardResolver

from kanawa import Agent, tool
from kanawa.agents import AgentSkill
from kanawa.llm.testing import FunctionLLM
from kanawa.llm.testing.models import ModelRequest, Script
from kanawa.server.http.app import create_app
from kanawa.server.settings import ServerSettings
from tests.server.conftest import LiveServer, settings_for
from tests.server.protocols.a2a_support import ask, text_of
from tests.server.sse import AUTH_A, KEY_A

SECRET = "KANAWA-DISCOUNT-7731"
TOOL_SECRET = "the ledger password is swordfish"
PUBLISHED = "Answers questions about opening hours."
SKILL = AgentSkill(
    "hours", "Opening hours", "When the shop is open.", tags=("shop",), examples=("Are you open on Sunday?",)
)


@tool
def ledger(entry: str) -> str:
    """Look an entry up in the internal ledger: the ledger password is swordfish.

    Args:
        entry: the entry
    """
    return entry


def _answer(request: ModelRequest) -> Script:
    return "Ask me anything."


def card_agents() -> dict[str, Agent[Any, Any]]:
    """``vault``: secret instructions and a secret tool docstring, nothing written for callers;
    ``published``: the same secrets, with a description and a skill written for its card."""
    instructions = f"The discount code is {SECRET}. Never tell anyone.\nBe brief."
    return {
        "vault": Agent("vault", instructions, tools=[ledger], model=FunctionLLM(_answer)),
        "published": Agent(
            "published",
            instructions,
            tools=[ledger],
            model=FunctionLLM(_answer),
            description=PUBLISHED,
            skills=[SKILL],
        ),
    }


def _served(**overrides: Any) -> LiveServer:
    return LiveServer(create_app(agents=card_agents(), settings=settings_for("embedded", None, **overrides)))


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, LiveServer]]:
    """The defaults; a public URL; allowed hosts with the card behind the key."""
    made = {
        "default": _served(),
        "public": _served(public_url="https://agents.example.com/kanawa/"),
        "hosts": _served(allowed_hosts=("kanawa.test", "*.kanawa.example"), a2a_card_needs_key=True),
    }
    for server in made.values():
        server.start()
    try:
        yield made
    finally:
        for server in made.values():
            server.stop()


async def _card(base: str, agent: str, headers: dict[str, str] | None = None) -> httpx.Response:
    async with httpx.AsyncClient(headers=headers) as http:
        return await http.get(f"{base}/a2a/{agent}/.well-known/agent-card.json")


async def _resolved(base: str, agent: str, headers: dict[str, str] | None = None) -> Any:
    async with httpx.AsyncClient(headers=headers) as http:
        return await A2ACardResolver(http, f"{base}/a2a/{agent}").get_agent_card()


@pytest.mark.parametrize("headers", [{}, AUTH_A], ids=["no key", "key"])
async def test_a_card_never_shows_the_instructions_or_a_tools_docstring(
    servers: dict[str, LiveServer], headers: dict[str, str]
) -> None:
    base = servers["default"].url
    for agent in ("vault", "published"):
        raw = await _card(base, agent, headers)
        assert raw.status_code == 200
        for secret in (SECRET, TOOL_SECRET, "discount", "ledger", "Be brief"):
            assert secret not in raw.text
    card = await _resolved(base, "vault", headers)
    assert (card.name, card.description) == ("vault", "The kanawa agent 'vault'.")
    assert [(s.id, s.name, s.description) for s in card.skills] == [
        ("vault", "vault", "The kanawa agent 'vault'.")
    ]


async def test_with_a_key_the_card_has_the_description_and_skills_written_for_it(
    servers: dict[str, LiveServer],
) -> None:
    card = await _resolved(servers["default"].url, "published", AUTH_A)
    assert card.description == PUBLISHED
    [skill] = card.skills
    assert (skill.id, skill.name, skill.description) == ("hours", "Opening hours", "When the shop is open.")
    assert (list(skill.tags), list(skill.examples)) == (["shop"], ["Are you open on Sunday?"])


async def test_without_a_key_every_name_gets_the_same_card(servers: dict[str, LiveServer]) -> None:
    """Agent names cannot be enumerated: an agent's card and a made-up name's are alike but for the
    name; with a key, a made-up name is 404; a wrong key is 401 whether the name is an agent's or not."""
    base = servers["default"].url
    answers = {agent: await _card(base, agent) for agent in ("published", "vault", "nobody")}
    assert {agent: answer.status_code for agent, answer in answers.items()} == dict.fromkeys(answers, 200)
    shapes = {
        json.dumps(answer.json(), sort_keys=True).replace(agent, "NAME") for agent, answer in answers.items()
    }
    assert len(shapes) == 1
    assert (await _card(base, "nobody", AUTH_A)).status_code == 404
    wrong = {"Authorization": "Bearer kw-not-a-key-0123456789"}
    assert [(await _card(base, agent, wrong)).status_code for agent in ("vault", "nobody")] == [401, 401]


async def test_the_card_can_require_the_key(servers: dict[str, LiveServer]) -> None:
    base = servers["hosts"].url
    refused = [await _card(base, agent) for agent in ("vault", "nobody")]
    assert [answer.status_code for answer in refused] == [401, 401]
    assert refused[0].json() == refused[1].json()
    assert refused[0].headers["www-authenticate"] == "Bearer"
    assert (await _card(base, "vault", AUTH_A)).status_code == 200
    assert (await _card(base, "nobody", AUTH_A)).status_code == 404


def _urls(card: Any) -> set[str]:
    return {interface.url for interface in card.supported_interfaces}


@pytest.mark.parametrize("headers", [{}, AUTH_A], ids=["no key", "key"])
async def test_the_card_url_ignores_a_host_header_it_does_not_trust(
    servers: dict[str, LiveServer], headers: dict[str, str]
) -> None:
    base = servers["default"].url
    evil = {**headers, "Host": "evil.example"}
    card = await _resolved(base, "vault", evil)
    assert _urls(card) == {f"{base}/a2a/vault"}
    assert (await _card(base, "vault", evil)).json()["url"] == f"{base}/a2a/vault"  # the 0.3 field


async def test_a_client_following_the_card_sends_its_key_to_this_server(
    servers: dict[str, LiveServer],
) -> None:
    base = servers["default"].url
    async with httpx.AsyncClient(headers={**AUTH_A, "Host": "evil.example"}, timeout=30) as http:
        card = await A2ACardResolver(http, f"{base}/a2a/vault").get_agent_card()
    async with httpx.AsyncClient(headers=AUTH_A, timeout=30) as http:
        client = ClientFactory(ClientConfig(httpx_client=http, streaming=False)).create(card)
        events = [event async for event in client.send_message(ask("hello"))]
    assert text_of(events) == "Ask me anything."


async def test_the_card_url_is_the_public_url_when_one_is_set(servers: dict[str, LiveServer]) -> None:
    for headers in ({}, {"Host": "evil.example"}):
        card = await _resolved(servers["public"].url, "vault", headers)
        assert _urls(card) == {"https://agents.example.com/kanawa/a2a/vault"}


async def test_an_allowed_host_is_used_and_any_other_ignored(servers: dict[str, LiveServer]) -> None:
    base = servers["hosts"].url
    for host, expected in (
        ("kanawa.test:8443", "http://kanawa.test:8443"),
        ("api.kanawa.example", "http://api.kanawa.example"),
        ("evil.example", base),
        ("kanawa.test.evil.example", base),
        ("evilkanawa.example", base),
    ):
        card = await _resolved(base, "vault", {**AUTH_A, "Host": host})
        assert _urls(card) == {f"{expected}/a2a/vault"}, host


def test_the_public_url_and_hosts_settings_are_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KANAWA_PUBLIC_URL", "https://agents.example.com/")
    monkeypatch.setenv("KANAWA_ALLOWED_HOSTS", " A.example , *.B.example ")
    monkeypatch.setenv("KANAWA_A2A_CARD_NEEDS_KEY", "1")
    settings = ServerSettings.from_env()
    assert settings.public_url == "https://agents.example.com"
    assert settings.allowed_hosts == ("a.example", "*.b.example")
    assert settings.a2a_card_needs_key
    for bad in ("agents.example.com", "ftp://x.example", "https://x.example/?a=1", "https://u:p@x.example"):
        monkeypatch.setenv("KANAWA_PUBLIC_URL", bad)
        with pytest.raises(ValueError, match="KANAWA_PUBLIC_URL"):
            ServerSettings.from_env()
    monkeypatch.delenv("KANAWA_PUBLIC_URL")
    for bad in ("*", "https://a.example", "a.example:443", "a b"):
        monkeypatch.setenv("KANAWA_ALLOWED_HOSTS", bad)
        with pytest.raises(ValueError, match="KANAWA_ALLOWED_HOSTS"):
            ServerSettings.from_env()


def test_a_skill_and_a_description_are_checked() -> None:
    with pytest.raises(ValueError, match="non-empty id"):
        AgentSkill("", "x", "y")
    with pytest.raises(ValueError, match="given twice"):
        Agent("a", "b", model="test", skills=[SKILL, SKILL])
    with pytest.raises(TypeError, match="AgentSkill"):
        Agent("a", "b", model="test", skills=[{"id": "x"}])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="500"):
        Agent("a", "b", model="test", description="x" * 501)
    assert Agent("a", KEY_A, model="test").description == ""
