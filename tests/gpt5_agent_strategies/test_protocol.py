"""Both strategies through Dify's real plugin protocol: a strategy request on stdin, its backwards
``llm``/``tool`` invocations answered on stdin, and the messages it streams checked (seed 001 §4.3–§4.8,
seed 000 §3–§7)."""

from __future__ import annotations

from tests.gpt5_agent_strategies.dify import (
    FakeDify,
    Round,
    logs,
    metadata,
    run_strategy,
    text_tool,
    texts,
    tool_entity,
    tool_outputs,
)
from tests.wire.dify_plugin import DifyPluginProcess

REASONING = {"id": "rs_1", "type": "reasoning", "encrypted_content": "enc-1"}
OPAQUE_1 = {"kanawa_responses": {"version": 1, "reasoning": [REASONING], "message_items": []}}


def two_tool_dify() -> FakeDify:
    return FakeDify(
        [
            Round(
                "<think>I need both facts.</think>Checking.",
                calls=[("call_a", "lookup", '{"q": "kanawa"}'), ("call_b", "weather", '{"q": "Tokyo"}')],
                opaque=OPAQUE_1,
            ),
            Round("kanawa is a framework; Tokyo is sunny."),
        ],
        tools={"lookup": lambda p: text_tool(f"found {p['q']}"), "weather": lambda p: text_tool("sunny")},
    )


def test_two_tool_run_streams_text_logs_and_execution_metadata(agent_plugin: DifyPluginProcess) -> None:
    dify = two_tool_dify()
    result = run_strategy(agent_plugin, dify, tools=[tool_entity("lookup"), tool_entity("weather")])
    assert result.error is None, result.error
    assert texts(result) == "<think>I need both facts.</think>Checking.kanawa is a framework; Tokyo is sunny."
    assert [r["tool_parameters"] for r in dify.tool_requests] == [{"q": "kanawa"}, {"q": "Tokyo"}]
    assert [r["tool"] for r in dify.tool_requests] == ["lookup", "weather"]
    second = dify.llm_requests[1]
    assert tool_outputs(second) == ["found kanawa", "sunny"]
    labels = [log["label"] for log in logs(result)]
    assert labels.count("ROUND 1") == 2
    assert labels.count("ROUND 2") == 2
    assert "CALL lookup" in labels
    assert "CALL weather" in labels
    meta = metadata(result)
    assert meta["iterations"] == 2
    assert meta["tool_calls"] == 2
    assert meta["termination_reason"] == "completed"
    assert meta["total_tokens"] == 30


def test_second_round_request_carries_the_first_rounds_opaque_body(agent_plugin: DifyPluginProcess) -> None:
    dify = two_tool_dify()
    run_strategy(agent_plugin, dify, tools=[tool_entity("lookup"), tool_entity("weather")])
    assistant = [m for m in dify.llm_requests[1]["prompt_messages"] if m["role"] == "assistant"]
    assert assistant[0]["opaque_body"] == OPAQUE_1
    assert [c["id"] for c in assistant[0]["tool_calls"]] == ["call_a", "call_b"]


def test_request_shape_system_policies_query_and_no_stop_words(agent_plugin: DifyPluginProcess) -> None:
    dify = FakeDify([Round("Done.")])
    result = run_strategy(
        agent_plugin,
        dify,
        strategy="gpt5_react",
        prompt_policy_overrides='{"extra_policy": "Answer in English.", "unknown": "x"}',
        context={"tenant": "acme"},
    )
    assert result.error is None, result.error
    request = dify.llm_requests[0]
    assert request["stop"] is None
    assert request["provider"] == "kanawa/openai_gpt5_responses/openai_gpt5"
    assert request["completion_params"] == {"reasoning_effort": "low"}
    system = request["prompt_messages"][0]
    assert system["role"] == "system"
    assert system["content"].startswith("You answer questions about kanawa.")
    assert "<persistence>" in system["content"]
    assert "Answer in English." in system["content"]
    assert '<context>\n{"tenant": "acme"}\n</context>' in system["content"]
    assert request["prompt_messages"][-1] == {"role": "user", "content": "What is kanawa?", "name": None}
    assert metadata(result)["strategy"] == "gpt5_react"
