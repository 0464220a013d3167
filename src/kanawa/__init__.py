"""kanawa — production LLM agents: any provider, a tool loop that cannot run away, honest streaming.

``import kanawa`` is cheap: the public names below are loaded on first use, so a script that only
needs the types never pays for pydantic, the loop or any provider SDK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kanawa._lazy import lazy_exports

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    "Agent": "kanawa.agents.agent",
    "BaseAgent": "kanawa.agents.agent",
    "Approvals": "kanawa.loop.approval",
    "AgentTeam": "kanawa.agents.team",
    "Guardrail": "kanawa.agents.guardrails",
    "TokenGuard": "kanawa.agents.budget",
    "Handoff": "kanawa.agents.handoffs",
    "LLMRouter": "kanawa.agents.routing",
    "RuleRouter": "kanawa.agents.routing",
    "AgentError": "kanawa.loop.errors",
    "BudgetExceeded": "kanawa.loop.errors",
    "GuardrailViolation": "kanawa.loop.errors",
    "HandoffDepthExceeded": "kanawa.loop.errors",
    "ToolValidationError": "kanawa.tools.errors",
    "RunResult": "kanawa.loop.result",
    "RunContext": "kanawa.context",
    "AgentConfiguration": "kanawa.loop.config",
    "Compaction": "kanawa.loop.compaction",
    "Tool": "kanawa.tools.base",
    "ToolResult": "kanawa.tools.base",
    "tool": "kanawa.tools.decorator",
    "ToolRegistry": "kanawa.tools.registry",
    "ToolInvoker": "kanawa.tools.invoker",
    "ModelSettings": "kanawa.llm.settings",
    "resolve_model": "kanawa.llm.models",
    "ScriptedLLM": "kanawa.llm.testing.models",
    "FunctionLLM": "kanawa.llm.testing.models",
    "TestLLM": "kanawa.llm.testing.models",
}

if TYPE_CHECKING:
    from kanawa.agents.agent import Agent, BaseAgent
    from kanawa.agents.budget import TokenGuard
    from kanawa.agents.guardrails import Guardrail
    from kanawa.agents.handoffs import Handoff
    from kanawa.agents.routing import LLMRouter, RuleRouter
    from kanawa.agents.team import AgentTeam
    from kanawa.context import RunContext
    from kanawa.llm.models import resolve_model
    from kanawa.llm.settings import ModelSettings
    from kanawa.llm.testing import FunctionLLM, ScriptedLLM, TestLLM
    from kanawa.loop.approval import Approvals
    from kanawa.loop.compaction import Compaction
    from kanawa.loop.config import AgentConfiguration
    from kanawa.loop.errors import AgentError, BudgetExceeded, GuardrailViolation, HandoffDepthExceeded
    from kanawa.loop.result import RunResult
    from kanawa.tools.base import Tool, ToolResult
    from kanawa.tools.decorator import tool
    from kanawa.tools.errors import ToolValidationError
    from kanawa.tools.invoker import ToolInvoker
    from kanawa.tools.registry import ToolRegistry


__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)


__all__ = [
    "Agent",
    "AgentConfiguration",
    "AgentError",
    "AgentTeam",
    "Approvals",
    "BaseAgent",
    "BudgetExceeded",
    "Compaction",
    "FunctionLLM",
    "Guardrail",
    "GuardrailViolation",
    "Handoff",
    "HandoffDepthExceeded",
    "LLMRouter",
    "ModelSettings",
    "RuleRouter",
    "RunContext",
    "RunResult",
    "ScriptedLLM",
    "TestLLM",
    "TokenGuard",
    "Tool",
    "ToolInvoker",
    "ToolRegistry",
    "ToolResult",
    "ToolValidationError",
    "resolve_model",
    "tool",
]
