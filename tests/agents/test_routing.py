"""Seed 002 §3-5 routers and the AgentTeam: ``RuleRouter`` (ordered rules, first match wins),
``LLMRouter`` (``{"question", "agents"}`` JSON; any failure falls back to the rules and says so in the
trace), and an AgentTeam that runs the chosen agents sequentially or in parallel and merges them."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

import pytest

from kanawa import Agent
from kanawa.agents.routing import LLMRouter, NoRoute, RouteDecision, RuleRouter
from kanawa.agents.team import AgentTeam
from kanawa.llm.errors import LLMRateLimitError
from kanawa.llm.testing import FunctionLLM, ModelRequest
from kanawa.loop.errors import HandoffDepthExceeded
from kanawa.loop.events import FinalResponse, NestedEvent
from kanawa.loop.result import RunResult
from kanawa.trace.events import Tracer
from kanawa.trace.memory import InMemoryTraceSink
from kanawa.types import TextDelta

RULES = RuleRouter(
    [
        (r"参考文献|reference", ["Ref"]),
        (r"文体|style|grammar", ["Style"]),
        (lambda text, ctx: bool(ctx) and ctx.get("plan") == "pro", ["Draft", "Style"]),
    ],
    default=["Draft"],
)


def test_rule_router_first_match_wins_in_order() -> None:
    assert RULES.route("check the grammar and references").agents == ("Ref",)
    decision = RULES.route("文体を直して")
    assert (decision.agents, decision.source, decision.rule) == (("Style",), "rules", 1)


def test_rule_router_conditions_can_read_the_context_and_the_default_applies() -> None:
    assert RULES.route("improve my essay", {"plan": "pro"}).agents == ("Draft", "Style")
    default = RULES.route("improve my essay", {"plan": "free"})
    assert (default.agents, default.rule) == (("Draft",), None)
    with pytest.raises(NoRoute):
        RuleRouter([("x", ["A"])]).route("nothing")


def test_rule_router_rejects_bad_rules() -> None:
    with pytest.raises(ValueError, match="does not compile"):
        RuleRouter([("(", ["A"])])
    with pytest.raises(ValueError, match="at least one agent"):
        RuleRouter([("x", [])])
    with pytest.raises(TypeError, match="pair"):
        RuleRouter([("x",)])  # type: ignore[list-item]


AGENTS = {"Draft": "deepens the essay", "Style": "fixes style", "Ref": "finds references"}


def router_answering(answer: Any, tracer: Tracer | None = None) -> LLMRouter:
    def respond(request: ModelRequest) -> Any:
        assert request.response_schema is not None, "the routing JSON is asked for as structured output"
        if isinstance(answer, Exception):
            raise answer
        return answer if isinstance(answer, str) else json.dumps(answer)

    return LLMRouter(FunctionLLM(respond), AGENTS, fallback=RULES, tracer=tracer)


async def test_llm_router_uses_the_models_json() -> None:
    decision = await router_answering({"question": "deepen it", "agents": ["Draft", "Ref", "Draft"]}).aroute(
        "x"
    )
    assert decision == RouteDecision(("Draft", "Ref"), "deepen it", "llm", "the model chose")


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ("not json at all", "was not the routing JSON"),
        ({"question": "q"}, "was not the routing JSON"),
        ({"question": "q", "agents": []}, "was not the routing JSON"),
        ({"question": "q", "agents": ["Eval"]}, "unknown agents ['Eval']"),
        (
            LLMRateLimitError("slow down", provider="test", model="m"),
            "the model call failed (LLMRateLimitError)",
        ),
    ],
)
async def test_any_llm_router_failure_falls_back_to_the_rules_and_the_trace_says_so(
    answer: Any, why: str
) -> None:
    sink = InMemoryTraceSink()
    decision = await router_answering(answer, Tracer(sinks=[sink])).aroute("check my references")
    assert decision.agents == ("Ref",)
    assert decision.source == "fallback"
    assert why in decision.reason
    (event,) = sink.named("route")
    assert event.data["source"] == "fallback"
    assert why in str(event.data["reason"])


def specialist(name: str, delay: float = 0.0, log: list[str] | None = None) -> Agent[str]:
    async def respond(request: ModelRequest) -> str:
        if log is not None:
            log.append(f"start {name}")
        await asyncio.sleep(delay)
        if log is not None:
            log.append(f"end {name}")
        return f"{name} says: {request.last_user_text}"

    return Agent(name, model=FunctionLLM(respond))


async def test_agent_team_runs_routed_agents_in_order_and_merges_with_the_users_function() -> None:
    log: list[str] = []

    def merge(results: Mapping[str, RunResult[Any]]) -> dict[str, str]:
        return {name: str(result.output) for name, result in results.items()}

    coordinator = AgentTeam(
        "Coordinator",
        router=RULES,
        agents=[specialist("Draft", 0.01, log), specialist("Style", 0.0, log), specialist("Ref")],
        merge=merge,
    )
    result = await coordinator.arun("essay", deps={"plan": "pro"})
    assert result.output == {"Draft": "Draft says: essay", "Style": "Style says: essay"}
    assert log == ["start Draft", "end Draft", "start Style", "end Style"]
    assert result.route.agents == ("Draft", "Style")
    assert result.usage.requests == 2


async def test_agent_team_parallel_mode_overlaps_agents_and_keeps_their_names() -> None:
    log: list[str] = []
    coordinator = AgentTeam(
        "Coordinator",
        router=RULES,
        agents=[specialist("Draft", 0.05, log), specialist("Style", 0.0, log), specialist("Ref")],
        mode="parallel",
    )
    running = coordinator.stream("essay", deps={"plan": "pro"})
    events = [event async for event in running]
    assert isinstance(events[0], RouteDecision)
    assert isinstance(events[-1], FinalResponse)
    assert log.index("start Style") < log.index("end Draft"), "the agents ran at the same time"
    nested = [e for e in events if isinstance(e, NestedEvent)]
    assert {e.agent for e in nested} == {"Draft", "Style"}
    assert any(isinstance(e.event, TextDelta) for e in nested)
    assert running.result.output == "## Draft\nDraft says: essay\n\n## Style\nStyle says: essay"


async def test_agent_team_with_an_llm_router_and_async_merge() -> None:
    async def merge(results: Mapping[str, RunResult[Any]]) -> str:
        return " | ".join(str(r.output) for r in results.values())

    coordinator = AgentTeam(
        "Coordinator",
        router=router_answering({"question": "q", "agents": ["Ref", "Style"]}),
        agents=[specialist("Draft"), specialist("Style"), specialist("Ref")],
        merge=merge,
    )
    result = await coordinator.arun("essay")
    assert result.output == "Ref says: essay | Style says: essay"


async def test_routed_agents_count_handoff_depth_from_the_team() -> None:
    # coordinator -> a -> b -> c -> d: the coordinator's route is the first level, so a's third nested
    # handoff (to d) is the fourth level and aborts the whole request.
    def hands_to(target: str) -> FunctionLLM:
        from kanawa.types import AssistantMessage, ToolCall

        return FunctionLLM(
            lambda r: (
                r.tool_results[-1].text
                if r.tool_results
                else AssistantMessage(tool_calls=(ToolCall("h", f"transfer_to_{target}", "{}"),))
            )
        )

    d = specialist("d")
    c = Agent("c", model=hands_to("d"), handoffs=[d])
    b = Agent("b", model=hands_to("c"), handoffs=[c])
    a = Agent("a", model=hands_to("b"), handoffs=[b])
    coordinator = AgentTeam("Coordinator", router=RuleRouter([], default=["a"]), agents=[a])
    with pytest.raises(HandoffDepthExceeded) as caught:
        await coordinator.arun("go")
    assert caught.value.chain == ("Coordinator", "a", "b", "c", "d")


def test_agent_team_checks_its_router_against_its_agents() -> None:
    with pytest.raises(ValueError, match="does not have"):
        AgentTeam("c", router=RULES, agents=[specialist("Draft")])
    with pytest.raises(ValueError, match="two agents"):
        AgentTeam(
            "c", router=RuleRouter([], default=["Draft"]), agents=[specialist("Draft"), specialist("Draft")]
        )
    with pytest.raises(ValueError, match="mode"):
        AgentTeam("c", router=RuleRouter([], default=["Draft"]), agents=[specialist("Draft")], mode="both")  # type: ignore[arg-type]
