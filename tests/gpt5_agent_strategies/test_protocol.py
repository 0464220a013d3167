"""Both strategies through Dify's real plugin protocol: a strategy request on stdin, its backwards
``llm``/``tool`` invocations answered on stdin, and the messages it streams checked (seed 001 §4.3–§4.8,
seed 000 §3–§7)."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

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
    round_one = next(log for log in logs(result) if log["label"] == "ROUND 1")
    assert round_one["status"] == "start"
    children = [log for log in logs(result) if log.get("parent_id") == round_one["id"]]
    assert [c["label"] for c in children] == ["CALL lookup", "CALL weather", "gpt-5 Thought"]
    finished = [log for log in logs(result) if log["id"] == round_one["id"] and log["status"] == "success"]
    assert finished[0]["data"]["tool_calls"] == ["lookup", "weather"]
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


def _error_dify(calls: list[tuple[str, str, str]], **tools: Any) -> FakeDify:
    return FakeDify([Round("Trying.", calls=calls), Round("Recovered.")], tools=tools)


def test_bad_tool_arguments_fail_closed_without_calling_the_tool(agent_plugin: DifyPluginProcess) -> None:
    dify = _error_dify(
        [("c1", "lookup", "not json"), ("c2", "lookup", "[1, 2]")], lookup=lambda p: text_tool("never")
    )
    result = run_strategy(agent_plugin, dify, tools=[tool_entity("lookup")])
    assert result.error is None, result.error
    assert dify.tool_requests == []
    outputs = tool_outputs(dify.llm_requests[1])
    assert len(outputs) == 2
    assert all(o.startswith("tool arguments parse error") for o in outputs)
    call_logs = [log for log in logs(result) if log["label"] == "CALL lookup"]
    assert [log["status"] for log in call_logs] == ["error", "error"]
    assert call_logs[0]["data"]["error"] == "parse_error"
    assert texts(result).endswith("Recovered.")


def test_empty_arguments_are_an_empty_object(agent_plugin: DifyPluginProcess) -> None:
    dify = _error_dify([("c1", "ping", "")], ping=lambda p: text_tool(f"args={sorted(p)}"))
    ping = tool_entity("ping")
    ping["parameters"] = []
    run_strategy(agent_plugin, dify, tools=[ping])
    assert [r["tool_parameters"] for r in dify.tool_requests] == [{}]
    assert tool_outputs(dify.llm_requests[1]) == ["args=[]"]


def test_unknown_tool_is_answered_with_there_is_not_a_tool_named(agent_plugin: DifyPluginProcess) -> None:
    dify = _error_dify([("c1", "nope", "{}")], lookup=lambda p: text_tool("never"))
    result = run_strategy(agent_plugin, dify, tools=[tool_entity("lookup")])
    assert dify.tool_requests == []
    assert tool_outputs(dify.llm_requests[1]) == ["there is not a tool named nope"]
    assert metadata(result)["termination_reason"] == "completed"


def test_option_mismatch_is_a_validation_error(agent_plugin: DifyPluginProcess) -> None:
    dify = _error_dify([("c1", "unit", '{"q": "kelvin"}')], unit=lambda p: text_tool("never"))
    run_strategy(agent_plugin, dify, tools=[tool_entity("unit", options=["c", "f"])])
    assert dify.tool_requests == []
    (output,) = tool_outputs(dify.llm_requests[1])
    assert output.startswith("parameter option validation error:")
    assert "'q' must be one of" in output


def test_tool_exception_becomes_the_fixed_message(agent_plugin: DifyPluginProcess) -> None:
    def broken(params: dict[str, Any]) -> Any:
        raise RuntimeError("database password=hunter2 unreachable")

    dify = _error_dify([("c1", "lookup", '{"q": "x"}')], lookup=broken)
    result = run_strategy(agent_plugin, dify, tools=[tool_entity("lookup")])
    assert tool_outputs(dify.llm_requests[1]) == ["tool invoke error: failed to execute tool"]
    assert "hunter2" not in str(result.stream)


def test_identical_failing_call_is_skipped_the_second_time(agent_plugin: DifyPluginProcess) -> None:
    def broken(params: dict[str, Any]) -> Any:
        raise RuntimeError("down")

    dify = FakeDify(
        [
            Round(calls=[("c1", "lookup", '{"q": "x"}')]),
            Round(calls=[("c2", "lookup", '{ "q":"x" }')]),
            Round("Giving up."),
        ],
        tools={"lookup": broken},
    )
    result = run_strategy(agent_plugin, dify, tools=[tool_entity("lookup")])
    assert len(dify.tool_requests) == 1
    assert tool_outputs(dify.llm_requests[2])[-1].startswith("duplicate tool call skipped")
    assert metadata(result)["iterations"] == 3


def test_maximum_iterations_reached_ends_with_a_tool_free_answer(agent_plugin: DifyPluginProcess) -> None:
    looping = [Round("More.", calls=[(f"c{i}", "lookup", f'{{"q": "{i}"}}')]) for i in range(2)]
    dify = FakeDify(
        [*looping, Round("Final answer with what I have.")], tools={"lookup": lambda p: text_tool("r")}
    )
    result = run_strategy(agent_plugin, dify, tools=[tool_entity("lookup")], maximum_iterations=3)
    assert len(dify.llm_requests) == 3
    assert dify.llm_requests[2]["tools"] is None  # the last allowed request offers no tools
    assert "tool budget" in dify.llm_requests[2]["prompt_messages"][-1]["content"]
    meta = metadata(result)
    assert meta["iterations"] == 3
    assert meta["termination_reason"] == "max_steps_finalized"
    assert texts(result).endswith("Final answer with what I have.")


@pytest.mark.parametrize("value", [0, 31, 2.5])
def test_maximum_iterations_outside_1_to_30_is_refused(agent_plugin: DifyPluginProcess, value: float) -> None:
    result = run_strategy(agent_plugin, FakeDify([]), maximum_iterations=value)
    assert result.error is not None
    assert "maximum_iterations" in result.error["message"]


def _thinking_dify() -> FakeDify:
    return FakeDify(
        [
            Round("<think>Look it up first.</think>Let me check.", calls=[("c1", "lookup", '{"q": "k"}')]),
            Round("Preamble without think.", calls=[("c2", "lookup", '{"q": "j"}')]),
            Round("<think>Now I know.</think>kanawa is a framework."),
        ],
        tools={"lookup": lambda p: text_tool("fact")},
    )


def test_emit_intermediate_thoughts_true_shows_every_round(agent_plugin: DifyPluginProcess) -> None:
    result = run_strategy(agent_plugin, _thinking_dify(), tools=[tool_entity("lookup")])
    shown = texts(result)
    assert "<think>Look it up first.</think>Let me check." in shown
    assert "Preamble without think." in shown
    assert "<think>" in shown.split("Preamble without think.")[1]  # the fallback thought for round 2
    assert shown.endswith("<think>Now I know.</think>kanawa is a framework.")


def test_emit_intermediate_thoughts_false_shows_only_the_visible_final_answer(
    agent_plugin: DifyPluginProcess,
) -> None:
    result = run_strategy(
        agent_plugin, _thinking_dify(), tools=[tool_entity("lookup")], emit_intermediate_thoughts=False
    )
    assert texts(result) == "kanawa is a framework."
    assert metadata(result)["tool_calls"] == 2


def test_old_host_without_opaque_body_works_and_is_reported_once(agent_plugin: DifyPluginProcess) -> None:
    dify = FakeDify(
        [
            Round(calls=[("c1", "lookup", '{"q": "a"}')]),
            Round(calls=[("c2", "lookup", '{"q": "b"}')]),
            Round("Done."),
        ],
        tools={"lookup": lambda p: text_tool("r")},
    )
    result = run_strategy(agent_plugin, dify, tools=[tool_entity("lookup")])
    notices = [log for log in logs(result) if log["label"] == "opaque_body not relayed"]
    assert len(notices) == 1
    assert "1.10.0" in notices[0]["data"]["message"]
    assert metadata(result)["opaque_body_relayed"] is False
    assistant = [m for m in dify.llm_requests[1]["prompt_messages"] if m["role"] == "assistant"]
    assert assistant[0]["opaque_body"] is None


def test_history_keeps_its_opaque_body(agent_plugin: DifyPluginProcess) -> None:
    history = [
        {"role": "user", "content": "earlier question"},
        {"role": "assistant", "content": "earlier answer", "opaque_body": OPAQUE_1},
    ]
    dify = FakeDify([Round("Now.")])
    model = {
        "provider": "other/provider/plain",
        "model": "m",
        "model_type": "llm",
        "mode": "chat",
        "completion_params": {},
        "history_prompt_messages": history,
    }
    result = run_strategy(agent_plugin, dify, model=model)
    messages = dify.llm_requests[0]["prompt_messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert messages[2]["opaque_body"] == OPAQUE_1
    assert metadata(result)["opaque_body_relayed"] is True  # not our model plugin: nothing expected


def test_model_failure_is_reported_as_an_error(agent_plugin: DifyPluginProcess) -> None:
    def failing(invoke: dict[str, Any]) -> Any:
        raise RuntimeError("model quota exceeded")

    result = agent_plugin.request(
        {
            "type": "agent_strategy",
            "action": "invoke_agent_strategy",
            "user_id": "u",
            "agent_strategy_provider": "gpt5_agent",
            "agent_strategy": "gpt5_function_calling",
            "agent_strategy_params": {
                "model": {"provider": "p", "model": "m", "model_type": "llm", "mode": "chat"},
                "tools": [],
                "instruction": "i",
                "query": "q",
                "maximum_iterations": 2,
            },
        },
        on_invoke=failing,
    )
    assert result.error is not None
    assert "model quota exceeded" in result.error["message"]


def test_tool_images_reach_the_user_and_local_files_stay_in_the_sandbox(
    agent_plugin: DifyPluginProcess, files_root: Path
) -> None:
    (files_root / "plot.png").write_bytes(b"\x89PNG plot")
    outside = files_root.parent / "outside.png"
    outside.write_bytes(b"secret")

    def draw(params: dict[str, Any]) -> list[dict[str, Any]]:
        return [
            {"type": "image_link", "message": {"text": "https://img.example/a.png"}},
            {"type": "image", "message": {"text": str(files_root / "plot.png")}},
            {"type": "image", "message": {"text": str(outside)}},
        ]

    dify = _error_dify([("c1", "draw", '{"q": "x"}')], draw=draw)
    result = run_strategy(agent_plugin, dify, tools=[tool_entity("draw")])
    assert result.error is None, result.error
    kinds = [m["type"] for m in result.stream]
    assert "image_link" in kinds
    blobs = [base64.b64decode(m["message"]["blob"]) for m in result.stream if m["type"] == "blob"]
    assert blobs == [b"\x89PNG plot"]  # only the file inside the sandbox, as an agent BLOB message
    assert next(m for m in result.stream if m["type"] == "blob")["meta"]["mime_type"] == "image/png"
    (output,) = tool_outputs(dify.llm_requests[1])
    assert "image has been created and sent to the user: https://img.example/a.png" in output
    assert "file has been sent to the user" in output
    assert "file refused" in output


def test_concurrent_runs_in_one_plugin_process_do_not_interfere(agent_plugin: DifyPluginProcess) -> None:
    """Each run's asyncio loop lives on its own native thread, so overlapping runs (greenlets of one
    process) both finish with their own answers."""
    import threading

    results: dict[str, Any] = {}

    def run(name: str) -> None:
        dify = FakeDify(
            [Round(calls=[(f"c-{name}", "lookup", f'{{"q": "{name}"}}')]), Round(f"answer {name}")],
            tools={"lookup": lambda p: text_tool(f"found {p['q']}")},
        )
        results[name] = (run_strategy(agent_plugin, dify, tools=[tool_entity("lookup")]), dify)

    threads = [threading.Thread(target=run, args=(name,)) for name in ("one", "two", "three")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    for name in ("one", "two", "three"):
        result, dify = results[name]
        assert result.error is None, result.error
        assert texts(result).endswith(f"answer {name}")
        assert tool_outputs(dify.llm_requests[1]) == [f"found {name}"]


def test_knowledge_context_is_cited_and_given_to_the_model(agent_plugin: DifyPluginProcess) -> None:
    knowledge = [
        {
            "content": "kanawa keeps tool loops bounded.",
            "title": "guide.md",
            "metadata": {
                "_source": "knowledge",
                "dataset_id": "ds1",
                "document_name": "guide.md",
                "score": 0.9,
            },
        },
        {"content": "It is written in Python.", "metadata": {"document_name": "faq.md"}},
    ]
    dify = FakeDify([Round("Cited answer.")])
    result = run_strategy(agent_plugin, dify, context=knowledge)
    assert result.error is None, result.error
    (cited,) = [m["message"] for m in result.stream if m["type"] == "retriever_resources"]
    resources = cited["retriever_resources"]
    assert [(r["position"], r["document_name"]) for r in resources] == [(1, "guide.md"), (2, "faq.md")]
    assert resources[0]["dataset_id"] == "ds1"
    assert resources[0]["score"] == 0.9
    system = dify.llm_requests[0]["prompt_messages"][0]["content"]
    assert system.endswith(
        "<context>\nkanawa keeps tool loops bounded.\n\nIt is written in Python.\n</context>"
    )


def test_junk_emit_intermediate_thoughts_is_refused(agent_plugin: DifyPluginProcess) -> None:
    result = run_strategy(agent_plugin, FakeDify([]), emit_intermediate_thoughts="maybe")
    assert result.error is not None
    assert "emit_intermediate_thoughts must be a boolean" in result.error["message"]


@pytest.mark.parametrize("emit", [True, False])
def test_a_final_iteration_that_still_calls_tools_ends_with_its_visible_text(
    agent_plugin: DifyPluginProcess, emit: bool
) -> None:
    """Seed 000 §5: tool calls + emit_intermediate_thoughts=false → shown only in the final iteration.
    The model ignored the tool-free last request; the run still ends cleanly with what it said."""
    dify = FakeDify(
        [Round("<think>hmm</think>Partial answer.", calls=[("c1", "lookup", '{"q": "a"}')])],
        tools={"lookup": lambda p: text_tool("never")},
    )
    result = run_strategy(
        agent_plugin,
        dify,
        tools=[tool_entity("lookup")],
        maximum_iterations=1,
        emit_intermediate_thoughts=emit,
    )
    assert result.error is None, result.error
    assert dify.llm_requests[0]["tools"] is None
    assert dify.tool_requests == []
    assert texts(result) == ("<think>hmm</think>Partial answer." if emit else "Partial answer.")
    assert metadata(result)["termination_reason"] == "max_steps_exceeded"
