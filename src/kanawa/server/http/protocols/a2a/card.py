"""The agent card of a served agent: who it is, what it can do, where and how to call it.

``GET /a2a/{agent}/.well-known/agent-card.json`` answers it without a key, as A2A clients expect
(the card is how a client learns the endpoint and that it needs a bearer key): the agent's name, a
description (the agent's ``description`` when it has one, else the first line of its instructions),
one skill per tool (or one for the agent itself when it has none), the JSON-RPC interface at
``/a2a/{agent}`` (A2A 1.0), streaming on, push notifications off, and the ``bearer`` scheme that
every call needs.

The same endpoint answers A2A 0.3's method names, so the card lists it a second time with protocol
version 0.3. The SDK's card serialiser then adds the fields a 0.3 client reads (``url``,
``protocolVersion``, ``preferredTransport``, ``security``) to the 1.0 card, and a 1.0 client still
picks the 1.0 interface.
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
from kanawa.server.runs.servable import ServableAgent

SCHEME = "bearer"
"""The name the card gives kanawa's API-key scheme."""
MAX_DESCRIPTION = 500
"""The longest description or skill text a card carries."""


def describe(agent: object, name: str) -> str:
    """What the card says an agent does (module docstring)."""
    said = getattr(agent, "description", None)
    if isinstance(said, str) and said.strip():
        return said.strip()[:MAX_DESCRIPTION]
    instructions = getattr(agent, "instructions", None)
    if isinstance(instructions, str) and instructions.strip():
        return instructions.strip().splitlines()[0][:MAX_DESCRIPTION]
    return f"The kanawa agent {name}."


def skills(agent: ServableAgent, name: str, description: str) -> list[AgentSkill]:
    """One skill per tool of the agent, or the agent itself as its one skill."""
    made = []
    for tool in agent.tools:
        about = getattr(tool, "description", None)
        text = about.strip()[:MAX_DESCRIPTION] if isinstance(about, str) and about.strip() else tool.name
        made.append(AgentSkill(id=tool.name, name=tool.name, description=text, tags=["tool"]))
    return made or [AgentSkill(id=name, name=name, description=description, tags=["agent"])]


def agent_card(agent: ServableAgent, name: str, url: str) -> AgentCard:
    """The card of ``agent`` served under ``name`` at the JSON-RPC endpoint ``url``."""
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


__all__ = ["SCHEME", "agent_card", "describe", "skills"]
