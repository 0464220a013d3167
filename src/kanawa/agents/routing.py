"""Routers (seed 002 §3-5): which agents should answer a request.

- :class:`RuleRouter` — ``rules: list[(pattern, agents)]``, first match wins. A pattern is a regular
  expression searched in the input text, or a function ``(text, context) -> bool`` when the decision
  needs the request's context (the user's plan, the page they are on).
- :class:`LLMRouter` — a small, fast model returns ``{"question": <user_text>, "agents": [...]}``. Any
  failure — the model call fails, the answer is not that JSON, it names no agent or one that does not
  exist — falls back to a :class:`RuleRouter` ("JSON parse 失敗時は RuleRouter fallback"), and the
  decision says so (``source="fallback"`` with the reason) in the result and in a ``route`` trace event.

Both return a :class:`RouteDecision`; :class:`~kanawa.agents.team.AgentTeam` runs it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass
from typing import Any, Literal, TypeAlias

from pydantic import BaseModel, Field

from kanawa.llm.adapter import LLMAdapter
from kanawa.loop.config import AgentConfiguration
from kanawa.loop.errors import AgentError
from kanawa.trace.events import TraceEvent, Tracer

RouteCondition: TypeAlias = "str | re.Pattern[str] | Callable[[str, Any], bool]"
RouteRule: TypeAlias = "tuple[RouteCondition, Sequence[str]]"

ROUTER_INSTRUCTIONS = """You route a user's request to the agents best suited to answer it.
Agents (name: what it does):
{agents}

Reply with JSON only: {{"question": "<the user's request, restated briefly>", "agents": ["<name>", ...]}}.
Choose one or more agent names from the list above, most relevant first. Never invent a name."""


@dataclass(frozen=True, slots=True)
class RouteDecision:
    """Where a request goes. ``source``: ``"rules"`` (a :class:`RuleRouter` decided), ``"llm"`` (the
    model's answer was used) or ``"fallback"`` (the model's answer was unusable; the rules decided,
    ``reason`` says why). ``rule`` is the index of the matching rule (``None``: the default)."""

    agents: tuple[str, ...]
    question: str
    source: Literal["rules", "llm", "fallback"]
    reason: str
    _: KW_ONLY
    rule: int | None = None
    kind: Literal["route"] = "route"


class NoRoute(AgentError):  # noqa: N818 - names the situation, like the loop's errors
    """No rule matched and the router has no default agents."""


class RuleRouter:
    """Ordered rules; the first whose condition holds names the agents (seed 002 §3-5 ``RuleRouter``).

    ``default`` names the agents for a request no rule matches; without one such a request raises
    :class:`NoRoute`. String patterns are searched case-insensitively (``flags``).
    """

    def __init__(
        self, rules: Sequence[RouteRule], *, default: Sequence[str] = (), flags: int = re.IGNORECASE
    ) -> None:
        compiled: list[tuple[Callable[[str, Any], bool], tuple[str, ...]]] = []
        for index, rule in enumerate(rules):
            try:
                condition, agents = rule
            except (TypeError, ValueError):
                raise TypeError(f"rule {index} must be a (pattern, agents) pair") from None
            names = (agents,) if isinstance(agents, str) else tuple(agents)
            if not names or not all(isinstance(n, str) and n for n in names):
                raise ValueError(f"rule {index} must name at least one agent")
            compiled.append((_condition(condition, flags, index), names))
        self._rules = tuple(compiled)
        self.default = tuple(default)

    @property
    def agent_names(self) -> frozenset[str]:
        """Every agent some rule (or the default) can route to."""
        return frozenset(name for _, names in self._rules for name in names) | frozenset(self.default)

    def route(self, text: str, context: Any = None) -> RouteDecision:
        """The first matching rule's agents, else the default; raises :class:`NoRoute` without one."""
        for index, (condition, names) in enumerate(self._rules):
            if condition(text, context):
                return RouteDecision(names, text, "rules", f"rule {index} matched", rule=index)
        if self.default:
            return RouteDecision(self.default, text, "rules", "no rule matched: the default agents")
        raise NoRoute("no routing rule matched the request and the router has no default agents")

    async def aroute(self, text: str, context: Any = None) -> RouteDecision:
        """:meth:`route`, awaited like :meth:`LLMRouter.aroute`, so either router fits one call."""
        return self.route(text, context)


def _condition(condition: Any, flags: int, index: int) -> Callable[[str, Any], bool]:
    if isinstance(condition, str):
        try:
            condition = re.compile(condition, flags)
        except re.error as exc:
            raise ValueError(f"rule {index}'s pattern does not compile: {exc}") from None
    if isinstance(condition, re.Pattern):
        pattern = condition
        return lambda text, context: pattern.search(text) is not None
    if callable(condition):
        return lambda text, context: bool(condition(text, context))
    raise TypeError(f"rule {index}'s condition must be a regex or a function (text, context) -> bool")


class _RouteAnswer(BaseModel):
    question: str
    agents: list[str] = Field(min_length=1)


class LLMRouter:
    """A small model routes (seed 002 §3-5 ``LLMRouter``); its failures fall back to ``fallback``.

    Args:
        model: a model string or adapter (a small one: the seed names ``o3-mini``).
        agents: name → what the agent does, shown to the model.
        fallback: the :class:`RuleRouter` used whenever the model's answer cannot be used.
        tracer: where the ``route`` event goes (it records the decision and, on fallback, why).
    """

    def __init__(
        self,
        model: str | LLMAdapter,
        agents: Mapping[str, str],
        *,
        fallback: RuleRouter,
        tracer: Tracer | None = None,
        instructions: str = ROUTER_INSTRUCTIONS,
    ) -> None:
        if not agents:
            raise ValueError("an LLMRouter needs the agents it may route to")
        from kanawa.agents.agent import Agent

        listing = "\n".join(f"- {name}: {about}" for name, about in agents.items())
        self.agents = dict(agents)
        self.fallback = fallback
        self.tracer = tracer
        self._agent: Agent[_RouteAnswer] = Agent(
            "router",
            instructions=instructions.format(agents=listing),
            model=model,
            output_type=_RouteAnswer,
            config=AgentConfiguration(max_steps=1, max_decode_retries=0),
        )

    async def aroute(self, text: str, context: Any = None) -> RouteDecision:
        """Ask the model; on any failure use the rules and say why."""
        try:
            answer = (await self._agent.arun(text)).output
            if answer is None:
                raise ValueError("the model gave no answer")
            names = tuple(dict.fromkeys(name.strip() for name in answer.agents))
            unknown = [name for name in names if name not in self.agents]
            if unknown:
                raise ValueError(f"the model named unknown agents {unknown}")
            decision = RouteDecision(names, answer.question or text, "llm", "the model chose")
        except (AgentError, ValueError) as exc:
            why = _failure(exc)
            ruled = self.fallback.route(text, context)
            decision = RouteDecision(
                ruled.agents,
                text,
                "fallback",
                f"{why}; fell back to the rules ({ruled.reason})",
                rule=ruled.rule,
            )
        _trace(self.tracer, decision)
        return decision

    async def aclose(self) -> None:
        await self._agent.aclose()


def _failure(exc: Exception) -> str:
    from kanawa.loop.errors import LLMCallFailed, OutputDecodingFailed

    if isinstance(exc, OutputDecodingFailed):
        return "the model's answer was not the routing JSON"
    if isinstance(exc, LLMCallFailed):
        return f"the model call failed ({type(exc.error).__name__})"
    if isinstance(exc, ValueError):
        return str(exc)
    return f"routing failed ({type(exc).__name__})"


def _trace(tracer: Tracer | None, decision: RouteDecision) -> None:
    if tracer is None or not tracer.enabled:
        return
    tracer.emit(
        TraceEvent(
            "route",
            tracer.session,
            "router",
            data={"agents": list(decision.agents), "source": decision.source, "reason": decision.reason},
        )
    )


__all__ = [
    "ROUTER_INSTRUCTIONS",
    "LLMRouter",
    "NoRoute",
    "RouteCondition",
    "RouteDecision",
    "RouteRule",
    "RuleRouter",
]
