"""What an agent says about itself to those who call it: :class:`AgentSkill`.

An agent's instructions are its system prompt — often private: a discount code, the shape of an
internal process, the words a guardrail looks for. Whatever describes an agent to the outside (an
A2A agent card, :mod:`kanawa.server.http.protocols.a2a.card`) therefore shows only what was written
for that purpose: ``Agent(description=..., skills=[AgentSkill(...)])`` (:func:`public_description`;
an MCP tool's description, :mod:`kanawa.mcp_server.schemas`, follows the same rule). Nothing is
derived from the instructions or from the tools' docstrings.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import KW_ONLY, dataclass
from typing import cast

MAX_TEXT = 500
"""The longest description an :class:`AgentSkill` (or an agent's ``description``) may have."""


@dataclass(frozen=True, slots=True)
class AgentSkill:
    """One thing the agent offers, as its callers see it (A2A's ``AgentSkill``).

    ``id`` and ``name`` must not be empty; ``description`` is at most :data:`MAX_TEXT` characters;
    ``tags`` and ``examples`` are short keywords and example requests. Raises ``ValueError``
    otherwise."""

    id: str
    name: str
    description: str
    _: KW_ONLY
    tags: tuple[str, ...] = ()
    examples: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for label, value in (("id", self.id), ("name", self.name)):
            if not isinstance(value, str) or not value.strip():
                raise ValueError(f"an AgentSkill needs a non-empty {label}")
        if not isinstance(self.description, str) or len(self.description) > MAX_TEXT:
            raise ValueError(f"an AgentSkill's description is text of at most {MAX_TEXT} characters")
        object.__setattr__(self, "tags", tuple(self.tags))
        object.__setattr__(self, "examples", tuple(self.examples))


def published_description(description: str) -> str:
    """``description`` checked as an agent's public description (``ValueError`` beyond
    :data:`MAX_TEXT` characters), stripped."""
    if not isinstance(description, str):
        raise TypeError(f"description must be text, not {type(description).__name__}")
    if len(description) > MAX_TEXT:
        raise ValueError(f"an agent's description is at most {MAX_TEXT} characters")
    return description.strip()


def public_description(agent: object) -> str:
    """What ``agent`` says of itself to its callers: its ``description`` (an :class:`Agent`'s, or the
    attribute a composite carries), stripped and at most :data:`MAX_TEXT` characters; ``""`` when it
    has none. Never its instructions (module docstring): every door that describes an agent — an
    A2A card, an MCP tool — uses this, and names the agent when it is empty."""
    said = getattr(agent, "description", None)
    return said.strip()[:MAX_TEXT] if isinstance(said, str) else ""


def description_or_name(agent: object, name: str) -> str:
    """:func:`public_description`, else a sentence naming the agent: what every door that lists an
    agent (an A2A card, an MCP tool) says of it, worded the same everywhere."""
    return public_description(agent) or f"The kanawa agent {name!r}."


def published_skills(skills: Iterable[AgentSkill]) -> tuple[AgentSkill, ...]:
    """``skills`` checked as an agent's public skills: :class:`AgentSkill` objects with distinct ids."""
    made: tuple[object, ...] = tuple(skills)
    for skill in made:
        if not isinstance(skill, AgentSkill):
            raise TypeError(f"skills must be AgentSkill objects, not {type(skill).__name__}")
    checked = cast("tuple[AgentSkill, ...]", made)
    ids = [skill.id for skill in checked]
    twice = sorted({one for one in ids if ids.count(one) > 1})
    if twice:
        raise ValueError(f"skill id {twice[0]!r} is given twice")
    return checked


__all__ = ["MAX_TEXT", "AgentSkill", "public_description", "published_description", "published_skills"]
