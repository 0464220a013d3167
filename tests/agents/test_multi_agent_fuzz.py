"""Fuzzed model output through the multi-agent paths: handoffs (with nested handoffs past the depth
limit), guardrails at every stage, human approval and a coordinator — whatever the models send, a run
ends in a result or an ``AgentError``, never another exception, and no tool past its approval runs."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kanawa import Agent, AgentConfiguration, Approvals, Guardrail, tool
from kanawa.agents.routing import RuleRouter
from kanawa.agents.team import AgentTeam
from kanawa.llm.testing import FunctionLLM, ModelRequest
from kanawa.loop.errors import AgentError
from kanawa.types import LLMResponse
from tests.loop.helpers import text_response
from tests.loop.test_loop_safety import calls as fuzz_calls
from tests.loop.test_loop_safety import responses

transfer_calls = st.builds(
    lambda base, target: type(base)(base.id, f"transfer_to_{target}", base.arguments),
    fuzz_calls,
    st.sampled_from(["helper", "deeper", "nobody"]),
)


def strange(text: object) -> object:
    """A custom check that misbehaves on some inputs (it must fail closed, never crash a run)."""
    value = str(text)
    if "x" in value:
        raise RuntimeError("broken check")
    if "y" in value:
        return 42  # not a verdict
    return None if len(value) % 3 else "length is a multiple of three"


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(
    script=st.lists(
        st.one_of(
            responses,
            st.builds(
                lambda r, c: LLMResponse(
                    type(r.message)(text=r.message.text, tool_calls=(c,)), r.stop_reason
                ),
                responses,
                transfer_calls,
            ),
        ),
        min_size=1,
        max_size=8,
    ),
    streaming=st.booleans(),
    block=st.booleans(),
    coordinate=st.booleans(),
)
def test_fuzzed_output_through_handoffs_guardrails_and_approval_ends_in_a_result_or_an_agent_error(
    script: Sequence[LLMResponse], streaming: bool, block: bool, coordinate: bool
) -> None:
    remaining = list(script)
    approved_runs: list[str] = []

    def respond(request: ModelRequest) -> LLMResponse:
        return remaining.pop(0) if remaining else text_response("end")

    @tool(requires_approval=True)
    def wipe(target: str = "all") -> str:
        """Delete everything.

        Args:
            target: what to delete
        """
        approved_runs.append(target)
        return f"wiped {target}"

    guard = Guardrail(
        regex_blocks={"nul": "\x00"},
        custom_funcs=[strange],
        action="block" if block else "warn",
        stages=("input", "output", "tool_call", "tool_result"),
    )
    config = AgentConfiguration(max_steps=4)
    deeper = Agent("deeper", model=FunctionLLM(respond), tools=[wipe], guardrails=[guard], config=config)
    helper = Agent(
        "helper", model=FunctionLLM(respond), handoffs=[deeper], config=config, max_handoff_depth=1
    )
    main = Agent(
        "main", model=FunctionLLM(respond), tools=[wipe], handoffs=[helper], guardrails=[guard], config=config
    )

    async def go() -> None:
        try:
            if coordinate:
                coordinator = AgentTeam("c", router=RuleRouter([], default=["main"]), agents=[main])
                async for event in coordinator.stream("go"):
                    assert event is not None
                return
            if streaming:
                async for event in main.stream("go"):
                    assert event is not None
            else:
                result = await main.arun("go")
                if result.termination_reason == "approval_required":
                    rejected = {c.id: "no" for c in result.pending_approvals}
                    await main.arun(Approvals(rejected=rejected), history=result.messages)
        except AgentError:
            pass

    asyncio.run(go())
    assert approved_runs == [], "a tool that needs approval never runs without one"
