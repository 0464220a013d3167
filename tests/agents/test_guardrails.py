"""Seed 002 §3-4 ``Guardrail``: input/output schemas, regex blocks, custom async functions, each with
``warn`` (an event; the run goes on) or ``block`` (``GuardrailViolation`` before the model call or the
tool runs; nothing after it executes; ``stream()`` yields the violation first); on tool arguments and
tool results too."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from pydantic import BaseModel

from kanawa import Agent, tool
from kanawa.agents.guardrails import Guardrail
from kanawa.llm.testing import ScriptedLLM
from kanawa.loop.errors import GuardrailViolation
from kanawa.loop.events import GuardrailTripped
from kanawa.types import AssistantMessage, ToolCall, ToolMessage

CARD = {"card number": r"\b(?:\d[ -]?){13,16}\b"}


class Essay(BaseModel):
    title: str
    body: str


class Score(BaseModel):
    score: int
    reason: str


async def events_until_error(stream: AsyncIterator[Any]) -> tuple[list[Any], BaseException]:
    """Everything a failing stream yields, and the error it ends with."""
    events: list[Any] = []
    try:
        async for event in stream:
            events.append(event)
    except Exception as exc:
        return events, exc
    raise AssertionError("the run did not fail")


def counting_tool() -> tuple[list[str], object]:
    ran: list[str] = []

    @tool
    def lookup(query: str) -> str:
        """Look something up.

        Args:
            query: what to look up
        """
        ran.append(query)
        return f"result for {query}"

    return ran, lookup


async def test_a_blocked_input_ends_the_run_before_any_model_call() -> None:
    model = ScriptedLLM(["never sent"])
    agent = Agent("a", model=model, guardrails=[Guardrail(regex_blocks=CARD)])
    with pytest.raises(GuardrailViolation) as caught:
        await agent.arun("my card is 4111 1111 1111 1111")
    assert model.requests == []
    error = caught.value
    assert (error.stage, error.guardrail) == ("input", "guardrail")
    assert error.reasons == ("matches blocked pattern 'card number'",)
    assert "4111" not in str(error), "reasons never quote the checked text"
    assert error.partial_result is not None
    assert error.partial_result.steps[-1] == error.event


async def test_stream_yields_the_violation_as_an_event_before_raising() -> None:
    agent = Agent("a", model=ScriptedLLM(["x"]), guardrails=[Guardrail(regex_blocks=CARD, name="pii")])
    events, error = await events_until_error(agent.stream("4111-1111-1111-1111"))
    assert isinstance(error, GuardrailViolation)
    assert len(events) == 1
    assert isinstance(events[0], GuardrailTripped)
    assert (events[0].guardrail, events[0].action, events[0].stage) == ("pii", "block", "input")


async def test_a_warning_is_an_event_and_the_run_goes_on() -> None:
    agent = Agent(
        "a", model=ScriptedLLM(["answer"]), guardrails=[Guardrail(regex_blocks=CARD, action="warn")]
    )
    events = [event async for event in agent.stream("card 4111 1111 1111 1111")]
    assert [e.kind for e in events if e.kind != "text_delta"] == ["guardrail", "final_response"]
    result = await Agent(
        "a", model=ScriptedLLM(["answer"]), guardrails=[Guardrail(regex_blocks=CARD, action="warn")]
    ).arun("card 4111 1111 1111 1111")
    assert result.output == "answer"
    assert [s.kind for s in result.steps] == ["guardrail", "final_response"]


async def test_input_schema_checks_json_input_and_names_fields_not_values() -> None:
    guard = Guardrail(input_schema=Essay)
    assert await guard.validate_input(json.dumps({"title": "t", "body": "b"})) == ()
    (reason,) = await guard.validate_input(json.dumps({"title": "secret-title"}))
    assert "body" in reason
    assert "secret-title" not in reason
    agent = Agent("a", model=ScriptedLLM(["x"]), guardrails=[guard])
    with pytest.raises(GuardrailViolation, match="input does not match Essay"):
        await agent.arun("not json at all")


async def test_output_schema_and_patterns_check_the_final_output_before_it_is_yielded() -> None:
    agent = Agent(
        "a",
        model=ScriptedLLM(['{"score": 11, "reason": "call 555-0100"}']),
        output_type=Score,
        guardrails=[
            Guardrail(
                custom_funcs=[lambda out: None if out.score <= 10 else "score above 10"],
                regex_blocks={"phone": r"\d{3}-\d{4}"},
                stages=("output",),
            )
        ],
    )
    events, error = await events_until_error(agent.stream("grade"))
    assert isinstance(error, GuardrailViolation)
    assert error.stage == "output"
    assert set(error.reasons) == {"matches blocked pattern 'phone'", "score above 10"}
    assert not any(getattr(e, "kind", "") == "final_response" for e in events), (
        "the blocked output is never yielded"
    )


async def test_output_schema_validates_a_text_answer_as_json() -> None:
    agent = Agent("a", model=ScriptedLLM(['{"score": "high"}']), guardrails=[Guardrail(output_schema=Score)])
    with pytest.raises(GuardrailViolation) as caught:
        await agent.arun("grade")
    (reason,) = caught.value.reasons
    assert reason.startswith("output does not match Score")
    assert "high" not in reason
    ok = Agent(
        "a", model=ScriptedLLM(['{"score": 3, "reason": "r"}']), guardrails=[Guardrail(output_schema=Score)]
    )
    assert (await ok.arun("grade")).output == '{"score": 3, "reason": "r"}'


async def test_custom_async_functions_run_and_one_that_raises_fails_closed() -> None:
    async def polite(text: str) -> str | None:
        await asyncio.sleep(0)
        return "impolite input" if "stupid" in text else None

    def broken(text: str) -> bool:
        raise RuntimeError("backend down")

    guard = Guardrail(custom_funcs=[polite, broken], action="warn")
    reasons = await guard.validate_input("you stupid bot")
    assert reasons == ("impolite input", "broken failed (RuntimeError)")
    assert await Guardrail(custom_funcs=[lambda t: False]).validate_input("x") == ("<lambda> rejected it",)
    assert await Guardrail(custom_funcs=[lambda t: True]).validate_input("x") == ()


async def test_a_blocked_tool_call_runs_no_tool_of_that_turn_and_nothing_after() -> None:
    ran, lookup = counting_tool()
    model = ScriptedLLM(
        [
            AssistantMessage(
                tool_calls=(
                    ToolCall("c1", "lookup", '{"query": "weather"}'),
                    ToolCall("c2", "lookup", '{"query": "DROP TABLE users"}'),
                )
            ),
            "never",
        ]
    )
    agent = Agent(
        "a",
        model=model,
        tools=[lookup],
        guardrails=[Guardrail(regex_blocks={"sql": r"(?i)drop\s+table"}, stages=("tool_call",))],
    )
    with pytest.raises(GuardrailViolation) as caught:
        await agent.arun("go")
    assert ran == [], "no call of the blocked turn ran"
    assert len(model.requests) == 1, "no model request after the block"
    assert caught.value.stage == "tool_call"
    assert caught.value.reasons == ("lookup: matches blocked pattern 'sql'",)
    partial = caught.value.partial_result
    assert partial is not None
    answers = [m for m in partial.messages if isinstance(m, ToolMessage)]
    assert [m.tool_call_id for m in answers] == ["c1", "c2"], "the history stays valid"


async def test_a_blocked_tool_result_never_reaches_the_model() -> None:
    ran, lookup = counting_tool()
    model = ScriptedLLM([AssistantMessage(tool_calls=(ToolCall("c1", "lookup", '{"query": "x"}'),)), "never"])
    agent = Agent(
        "a",
        model=model,
        tools=[lookup],
        guardrails=[Guardrail(regex_blocks=[r"result for"], stages=("tool_result",), name="leak")],
    )
    with pytest.raises(GuardrailViolation) as caught:
        await agent.arun("go")
    assert ran == ["x"]
    assert len(model.requests) == 1
    assert caught.value.reasons == ("lookup: matches blocked pattern 'result for'",)


async def test_tool_call_custom_functions_get_the_parsed_arguments() -> None:
    seen: list[dict[str, object]] = []

    def check(arguments: dict[str, object]) -> None:
        seen.append(dict(arguments))

    _, lookup = counting_tool()
    agent = Agent(
        "a",
        model=ScriptedLLM([AssistantMessage(tool_calls=(ToolCall("c1", "lookup", '{"query": "q"}'),)), "ok"]),
        tools=[lookup],
        guardrails=[Guardrail(custom_funcs=[check], stages=("tool_call",))],
    )
    assert (await agent.arun("go")).output == "ok"
    assert seen == [{"query": "q"}]


async def test_guardrails_apply_in_order_and_a_warning_before_a_block_is_kept() -> None:
    agent = Agent(
        "a",
        model=ScriptedLLM(["x"]),
        guardrails=[
            Guardrail(regex_blocks=["hello"], action="warn", name="first"),
            Guardrail(regex_blocks=["hello"], name="second"),
        ],
    )
    with pytest.raises(GuardrailViolation) as caught:
        await agent.arun("hello")
    assert caught.value.guardrail == "second"
    events, error = await events_until_error(agent.stream("hello"))
    assert isinstance(error, GuardrailViolation)
    assert [(e.guardrail, e.action) for e in events] == [("first", "warn"), ("second", "block")]


def test_bad_guardrail_configuration_is_an_error_at_construction() -> None:
    with pytest.raises(ValueError, match="action"):
        Guardrail(action="stop")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="stages"):
        Guardrail(stages=("everywhere",))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="does not compile"):
        Guardrail(regex_blocks=["("])
    with pytest.raises(TypeError, match="callables"):
        Guardrail(custom_funcs=["nope"])  # type: ignore[list-item]


async def test_history_input_is_not_checked_again_only_the_new_turn() -> None:
    agent = Agent(
        "a", model=ScriptedLLM(["first", "second"]), guardrails=[Guardrail(regex_blocks=["forbidden"])]
    )
    first = await agent.arun("fine")
    from kanawa.types import UserMessage

    history = [*first.messages[:-1], UserMessage("forbidden word"), *first.messages[-1:]]
    assert (await agent.arun("still fine", history=history)).output == "second"


async def test_tool_call_guardrails_survive_arguments_nested_past_the_json_parsers_limit() -> None:
    deep = '{"query": ' + "[" * 5000 + "]" * 5000 + "}"
    ran, lookup = counting_tool()
    agent = Agent(
        "a",
        model=ScriptedLLM([AssistantMessage(tool_calls=(ToolCall("c1", "lookup", deep),)), "ok"]),
        tools=[lookup],
        guardrails=[Guardrail(custom_funcs=[lambda args: None], regex_blocks=["zzz"], stages=("tool_call",))],
    )
    result = await agent.arun("go")
    assert result.output == "ok"
    assert ran == []


async def test_guardrails_set_after_construction_apply_to_later_runs() -> None:
    agent = Agent("a", model=ScriptedLLM(["first", "never"]))
    assert (await agent.arun("forbidden")).output == "first"
    agent.guardrails = [Guardrail(regex_blocks=["forbidden"])]
    with pytest.raises(GuardrailViolation):
        await agent.arun("forbidden")
    assert len(agent.guardrails) == 1


async def test_a_blocked_answer_is_never_streamed_token_by_token() -> None:
    agent = Agent(
        "a", model=ScriptedLLM(["my card is 4111 1111 1111 1111"]), guardrails=[Guardrail(regex_blocks=CARD)]
    )
    events, error = await events_until_error(agent.stream("hi"))
    assert isinstance(error, GuardrailViolation)
    assert [e.kind for e in events] == ["guardrail"], "no text delta of the blocked answer was yielded"


async def test_with_a_blocking_output_guardrail_a_passing_answer_still_streams_after_the_check() -> None:
    _, lookup = counting_tool()
    model = ScriptedLLM(
        [
            AssistantMessage(text="Let me look.", tool_calls=(ToolCall("c1", "lookup", '{"query": "q"}'),)),
            "All clear.",
        ]
    )
    agent = Agent("a", model=model, tools=[lookup], guardrails=[Guardrail(regex_blocks=CARD)])
    events = [e async for e in agent.stream("hi")]
    kinds = [e.kind for e in events]
    texts = "".join(e.text for e in events if e.kind == "text_delta")
    assert texts == "Let me look.All clear."
    # the tool turn's preamble is released when that response ends, before its tools run
    assert kinds.index("text_delta") < kinds.index("tool_call")
    assert kinds[-1] == "final_response"
    # a warn-only guardrail does not hold anything back
    warned = Agent(
        "a",
        model=ScriptedLLM(["4111 1111 1111 1111"]),
        guardrails=[Guardrail(regex_blocks=CARD, action="warn")],
    )
    kinds = [e.kind for e in [e async for e in warned.stream("hi")]]
    assert kinds.index("text_delta") < kinds.index("guardrail")
