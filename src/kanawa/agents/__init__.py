"""Agents (seed 002 §3): :class:`Agent` (alias ``BaseAgent``) and what builds on it — handoffs,
guardrails, routers and the :class:`AgentTeam`, human approval, memory.

Nothing is imported until used: ``from kanawa.agents import Guardrail`` loads only the guardrails.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kanawa._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "Agent": "kanawa.agents.agent",
    "BaseAgent": "kanawa.agents.agent",
    "UserInput": "kanawa.agents.agent",
    "InstructionsFunc": "kanawa.agents.instructions",
    "Handoff": "kanawa.agents.handoffs",
    "Guardrail": "kanawa.agents.guardrails",
    "RuleRouter": "kanawa.agents.routing",
    "LLMRouter": "kanawa.agents.routing",
    "RouteDecision": "kanawa.agents.routing",
    "NoRoute": "kanawa.agents.routing",
    "AgentSkill": "kanawa.agents.skills",
    "AgentTeam": "kanawa.agents.team",
    "TeamResult": "kanawa.agents.team",
}

if TYPE_CHECKING:
    from kanawa.agents.agent import Agent, BaseAgent, UserInput
    from kanawa.agents.guardrails import Guardrail
    from kanawa.agents.handoffs import Handoff
    from kanawa.agents.instructions import InstructionsFunc
    from kanawa.agents.routing import LLMRouter, NoRoute, RouteDecision, RuleRouter
    from kanawa.agents.skills import AgentSkill
    from kanawa.agents.team import AgentTeam, TeamResult

__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)

__all__ = [
    "Agent",
    "AgentSkill",
    "AgentTeam",
    "BaseAgent",
    "Guardrail",
    "Handoff",
    "InstructionsFunc",
    "LLMRouter",
    "NoRoute",
    "RouteDecision",
    "RuleRouter",
    "TeamResult",
    "UserInput",
]
