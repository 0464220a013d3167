"""Human approval: ``@tool(requires_approval=True)`` or an ``approval_policy`` stops the run before the
call runs; the caller approves or rejects each call and continues from ``result.messages`` without
repeating anything."""

from __future__ import annotations

import pytest

from kanawa import Agent, tool
from kanawa.llm.testing import ModelRequest, ScriptedLLM
from kanawa.loop.approval import Approvals
from kanawa.loop.events import ApprovalRequired
from kanawa.tools.base import ToolErrorKind
from kanawa.types import AssistantMessage, ToolCall, ToolMessage


def tools_turn(*calls: tuple[str, str, str]) -> AssistantMessage:
    return AssistantMessage(tool_calls=tuple(ToolCall(i, n, a) for i, n, a in calls))


def shop() -> tuple[dict[str, list[str]], list[object]]:
    ran: dict[str, list[str]] = {"refund": [], "lookup": []}

    @tool(requires_approval=True)
    def refund(order_id: str) -> str:
        """Refund an order.

        Args:
            order_id: the order
        """
        ran["refund"].append(order_id)
        return f"refunded {order_id}"

    @tool
    def lookup(order_id: str) -> str:
        """Look an order up.

        Args:
            order_id: the order
        """
        ran["lookup"].append(order_id)
        return f"order {order_id}: paid"

    return ran, [refund, lookup]


async def test_a_call_that_needs_approval_stops_the_run_before_anything_of_its_turn_runs() -> None:
    ran, tools = shop()
    turn = tools_turn(("c1", "lookup", '{"order_id": "A"}'), ("c2", "refund", '{"order_id": "A"}'))
    events = [
        event async for event in Agent("support", model=ScriptedLLM([turn]), tools=tools).stream("refund A")
    ]
    result = await Agent("support", model=ScriptedLLM([turn]), tools=tools).arun("refund order A")
    assert isinstance(events[-1], ApprovalRequired)
    assert [c.id for c in events[-1].calls] == ["c2"]
    assert result.termination_reason == "approval_required"
    assert [c.name for c in result.pending_approvals] == ["refund"]
    assert ran == {"refund": [], "lookup": []}, "no call of that turn ran"
    assert isinstance(result.messages[-1], AssistantMessage)


async def test_approving_runs_the_waiting_calls_once_and_the_model_continues() -> None:
    ran, tools = shop()
    turn = tools_turn(("c1", "lookup", '{"order_id": "A"}'), ("c2", "refund", '{"order_id": "A"}'))
    first = await Agent("support", model=ScriptedLLM([turn]), tools=tools).arun("refund order A")

    def sees_both_results(request: ModelRequest) -> bool:
        return [(m.tool_call_id, m.text) for m in request.tool_results] == [
            ("c1", "order A: paid"),
            ("c2", "refunded A"),
        ]

    model = ScriptedLLM(["Refunded order A."], checks=[sees_both_results])
    second = await Agent("support", model=model, tools=tools).arun(
        Approvals(approved=["c2"]), history=first.messages
    )
    assert second.output == "Refunded order A."
    assert ran == {"refund": ["A"], "lookup": ["A"]}, "each call ran exactly once"
    assert len(model.requests) == 1, "the model was not asked its tool turn again"
    assert [s.kind for s in second.steps] == [
        "tool_call",
        "tool_result",
        "tool_call",
        "tool_result",
        "final_response",
    ]


async def test_rejecting_answers_the_call_with_the_reason_and_it_never_runs() -> None:
    ran, tools = shop()
    turn = tools_turn(("c2", "refund", '{"order_id": "B"}'))
    first = await Agent("support", model=ScriptedLLM([turn]), tools=tools).arun("refund B")
    model = ScriptedLLM(
        ["I could not refund it."],
        checks=[lambda req: req.tool_results[-1].text == "the user rejected this tool call: over the limit"],
    )
    second = await Agent("support", model=model, tools=tools).arun(
        Approvals(rejected={"c2": "over the limit"}), history=first.messages
    )
    assert ran["refund"] == []
    answer = next(m for m in second.messages if isinstance(m, ToolMessage))
    assert answer.is_error
    result_step = next(s for s in second.steps if s.kind == "tool_result")
    assert result_step.result.error_kind is ToolErrorKind.REJECTED  # type: ignore[union-attr]


async def test_an_approval_policy_decides_per_call() -> None:
    ran, tools = shop()
    turn = tools_turn(("c1", "lookup", '{"order_id": "VIP-1"}'))
    agent = Agent(
        "support",
        model=ScriptedLLM([turn, "ok"]),
        tools=tools,
        approval_policy=lambda call, ctx: "VIP" in call.arguments,
    )
    result = await agent.arun("look up VIP-1")
    assert result.termination_reason == "approval_required"
    plain = Agent(
        "support",
        model=ScriptedLLM([tools_turn(("c1", "lookup", '{"order_id": "7"}')), "ok"]),
        tools=tools,
        approval_policy=lambda call, ctx: "VIP" in call.arguments,
    )
    assert (await plain.arun("look up 7")).output == "ok"
    assert ran["lookup"] == ["7"]


async def test_decisions_are_checked_before_anything_runs() -> None:
    ran, tools = shop()
    turn = tools_turn(("c1", "refund", '{"order_id": "A"}'), ("c2", "refund", '{"order_id": "B"}'))
    first = await Agent("support", model=ScriptedLLM([turn]), tools=tools).arun("refund both")
    agent = Agent("support", model=ScriptedLLM(["never"]), tools=tools)
    with pytest.raises(ValueError, match=r"need a decision.*c2 \(refund\)"):
        await agent.arun(Approvals(approved=["c1"]), history=first.messages)
    with pytest.raises(ValueError, match="not waiting"):
        await agent.arun(Approvals(approved=["c1", "c2", "zzz"]), history=first.messages)
    with pytest.raises(ValueError, match="nothing is waiting"):
        await agent.arun(Approvals(approved=["c1"]), history=[*first.messages[:-1]])
    with pytest.raises(ValueError, match="both approved and rejected"):
        Approvals(approved=["c1"], rejected={"c1": "no"})
    assert ran["refund"] == []


async def test_a_tool_without_approval_runs_as_before() -> None:
    ran, tools = shop()
    agent = Agent(
        "support", model=ScriptedLLM([tools_turn(("c1", "lookup", '{"order_id": "A"}')), "paid"]), tools=tools
    )
    assert (await agent.arun("status of A")).output == "paid"
    assert ran["lookup"] == ["A"]
