"""The agent card of a served agent: who it is, what it can do, where and how to call it.

A card shows only what was written for callers to read: the agent's ``description`` and ``skills``
(``Agent(description=..., skills=[AgentSkill(...)])``, :mod:`kanawa.agents.skills`; a composite may
carry the same attributes). With neither, the card names the agent and nothing more — never its
instructions (a system prompt may hold what callers must not see) nor its tools' docstrings.

Who sees which card (``GET /a2a/{agent}/.well-known/agent-card.json``, ``KANAWA_A2A_CARD_NEEDS_KEY``):
a request without a key gets :func:`anonymous_card` for any name, an agent's or not, so names cannot
be probed; with a valid key, the agent's own card (:func:`agent_card`), or 404 for a name that is no
agent; with the setting on, no key is 401 as on every route.

Every card lists the JSON-RPC interface (A2A 1.0) at the service's public address
(:mod:`kanawa.server.http.public_url`: never the request's ``Host`` on trust), streaming on, push
notifications off, and the ``bearer`` scheme that every call needs. The same endpoint answers A2A
0.3's method names, so the card lists it a second time with protocol version 0.3; the SDK's card
serialiser then adds the fields a 0.3 client reads (``url``, ``protocolVersion``,
``preferredTransport``, ``security``) to the 1.0 card, and a 1.0 client still picks the 1.0 interface.
"""

from __future__ import annotations

from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentProvider,
    AgentSkill,
    HTTPAuthSecurityScheme,
    SecurityRequirement,
    SecurityScheme,
    StringList,
)
from a2a.utils.constants import PROTOCOL_VERSION_0_3, PROTOCOL_VERSION_CURRENT

from kanawa import __version__
from kanawa.agents.skills import description_or_name
from kanawa.server.runs.servable import ServableAgent

SCHEME = "bearer"
"""The name the card gives kanawa's API-key scheme."""
MAX_DESCRIPTION = 500
"""The longest description or skill text a card carries."""


def describe(agent: object, name: str) -> str:
    """The agent's own ``description`` (module docstring), else one naming it — never its
    instructions (:func:`kanawa.agents.skills.description_or_name`, as on every door)."""
    return description_or_name(agent, name)


def skills(agent: object, name: str, description: str) -> list[AgentSkill]:
    """The agent's own ``skills`` (each with an ``id``, ``name`` and ``description``, and optional
    ``tags`` and ``examples``), else the agent itself as its one skill."""
    made = []
    for skill in getattr(agent, "skills", None) or ():
        made.append(
            AgentSkill(
                id=str(skill.id),
                name=str(skill.name),
                description=str(skill.description)[:MAX_DESCRIPTION],
                tags=[str(tag) for tag in getattr(skill, "tags", ())],
                examples=[str(example) for example in getattr(skill, "examples", ())],
            )
        )
    return made or [AgentSkill(id=name, name=name, description=description, tags=["agent"])]


def anonymous_card(name: str, url: str) -> AgentCard:
    """What a request without a key gets for ``name``, whether an agent has it or not: the name and
    how to call (module docstring)."""
    return agent_card(None, name, url)


def agent_card(agent: ServableAgent | None, name: str, url: str) -> AgentCard:
    """The card of ``agent`` served under ``name`` at the JSON-RPC endpoint ``url`` (``None``: the
    name-only card)."""
    description = describe(agent, name)
    return AgentCard(
        name=name,
        description=description,
        version=__version__,
        provider=AgentProvider(organization="kanawa", url="https://github.com/kanawa-dev/kanawa"),
        supported_interfaces=[
            AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version=PROTOCOL_VERSION_CURRENT),
            AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version=PROTOCOL_VERSION_0_3),
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        security_schemes={
            SCHEME: SecurityScheme(
                http_auth_security_scheme=HTTPAuthSecurityScheme(
                    scheme="Bearer", description="A kanawa API key (KANAWA_API_KEYS); it decides the tenant."
                )
            )
        },
        security_requirements=[SecurityRequirement(schemes={SCHEME: StringList()})],
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=skills(agent, name, description),
    )


__all__ = ["SCHEME", "agent_card", "anonymous_card", "describe", "skills"]
