"""Output parsing (seed 001 §3.7): text, tool calls, reasoning, usage, stop reasons; client-side stop."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kanawa.llm.errors import LLMConnectionError, LLMRateLimitError
from kanawa.llm.openai.responses_output import (
    ResponsesStreamAssembler,
    StopScanner,
    find_stop,
    parse_response,
)
from kanawa.types import ResponseCompleted, StopReason, TextDelta, ToolCallArgsDelta, ToolCallStarted
from tests.llm.openai_responses.wire import ResponseScript


def body(script: ResponseScript, status: str = "completed", reason: str | None = None) -> dict[str, Any]:
    return script.response_object(
        status, usage={"input_tokens": 5, "output_tokens": 7}, incomplete_reason=reason
    )


def test_text_tool_calls_reasoning_and_usage() -> None:
    script = (
        ResponseScript()
        .reasoning("First.", "Second.")
        .message("Hi.")
        .function_call("add", '{"a":1}', call_id="call_a")
        .function_call("mul", '{"b":2}', call_id="call_b")
    )
    response = parse_response(script.response_object("completed", usage={
        "input_tokens": 10, "input_tokens_details": {"cached_tokens": 4},
        "output_tokens": 20, "output_tokens_details": {"reasoning_tokens": 12}, "total_tokens": 30,
    }))  # fmt: skip
    assert response.message.text == "Hi."
    assert [(c.id, c.name, c.arguments) for c in response.message.tool_calls] == [
        ("call_a", "add", '{"a":1}'),
        ("call_b", "mul", '{"b":2}'),
    ]
    assert response.message.tool_calls[0].provider_details == {"item_id": "fc_call_a"}
    (part,) = response.message.reasoning
    assert (part.text, part.provider, part.payload) == ("First.\n\nSecond.", "openai", script.output[0])
    assert (response.usage.input_tokens, response.usage.output_tokens) == (10, 20)
    assert (response.usage.reasoning_tokens, response.usage.cached_tokens, response.usage.requests) == (
        12,
        4,
        1,
    )
    assert response.stop_reason is StopReason.TOOL_USE
    assert (response.model, response.response_id) == ("gpt-5-2025-08-07", "resp_0001")


def test_completed_is_end_turn_and_incomplete_max_output_tokens_is_max_tokens() -> None:
    script = ResponseScript().message("partial")
    assert parse_response(body(script)).stop_reason is StopReason.END_TURN
    assert (
        parse_response(body(script, "incomplete", "max_output_tokens")).stop_reason is StopReason.MAX_TOKENS
    )
    assert parse_response(body(script, "incomplete", "content_filter")).stop_reason is None


def test_truncated_function_call_is_max_tokens_not_tool_use() -> None:
    script = ResponseScript().function_call("add", '{"a":', call_id="c")
    assert (
        parse_response(body(script, "incomplete", "max_output_tokens")).stop_reason is StopReason.MAX_TOKENS
    )


def test_refusal_counts_as_text_and_output_text_is_a_fallback() -> None:
    refusal = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "refusal", "refusal": "I can't."}],
    }
    assert parse_response({"status": "completed", "output": [refusal]}).message.text == "I can't."
    assert (
        parse_response({"status": "completed", "output": [], "output_text": "proxy"}).message.text == "proxy"
    )


def test_unknown_output_items_are_skipped() -> None:
    data = {
        "status": "completed",
        "output": [{"type": "web_search_call", "id": "ws"}, {"type": "future_thing"}],
    }
    response = parse_response(data)
    assert response.message.text == ""
    assert response.stop_reason is StopReason.END_TURN


def test_reasoning_without_summary_uses_reasoning_text_content() -> None:
    item = {
        "type": "reasoning",
        "id": "rs",
        "summary": [],
        "content": [{"type": "reasoning_text", "text": "raw"}],
    }
    assert parse_response({"output": [item]}).message.reasoning[0].text == "raw"


def test_client_side_stop_cuts_text_and_drops_later_items() -> None:
    script = (
        ResponseScript()
        .function_call("early", "{}", call_id="c0")
        .message("alpha STOP beta")
        .function_call("late", "{}", call_id="c1")
    )
    response = parse_response(body(script), stop=("STOP",))
    assert response.message.text == "alpha "
    assert [c.id for c in response.message.tool_calls] == ["c0"]
    assert response.stop_reason is StopReason.TOOL_USE
    plain = parse_response(body(ResponseScript().message("one END two")), stop=("END", "one E"))
    assert (plain.message.text, plain.stop_reason) == ("", StopReason.STOP_SEQUENCE)


def test_find_stop_takes_the_earliest_of_several() -> None:
    assert find_stop("abcdef", ["de", "bc", ""]) == 1
    assert find_stop("abc", ["x"]) == -1


def test_find_stop_cuts_where_a_stop_first_completes_not_where_one_first_starts() -> None:
    # "b" completes at index 2; "XbX" starts earlier (1) but would complete only at index 3.
    assert find_stop("XXbX", ["b", "XbX"]) == 2
    assert find_stop("XXbX", ["XbX", "b"]) == 2
    # Two stops completing on the same character: the one that starts first wins.
    assert find_stop("aXbc", ["bc", "Xbc"]) == 1


def test_stop_scanner_agrees_on_the_case_that_once_failed() -> None:
    scanner = StopScanner(["b", "XbX"])
    released = scanner.feed("XXb") + scanner.feed("X") + scanner.flush()
    assert released == "XX"
    assert scanner.hit


@given(
    text=st.text(alphabet="abXY", max_size=40),
    stops=st.lists(st.text(alphabet="abXY", min_size=1, max_size=4), max_size=3),
    cuts=st.lists(st.integers(min_value=0, max_value=40), max_size=8),
)
def test_stop_scanner_releases_exactly_the_text_before_the_first_stop(
    text: str, stops: list[str], cuts: list[int]
) -> None:
    bounds = sorted({0, len(text), *(min(c, len(text)) for c in cuts)})
    scanner = StopScanner(stops)
    released = "".join(scanner.feed(text[a:b]) for a, b in itertools.pairwise(bounds))
    released += scanner.flush()
    cut = find_stop(text, stops)
    assert released == (text if cut < 0 else text[:cut])
    assert scanner.hit is (cut >= 0)


def feed_all(assembler: ResponsesStreamAssembler, script: ResponseScript) -> list[Any]:
    out: list[Any] = []
    for _, event in script.events:
        out.extend(assembler.feed(event))
    return out


def test_assembler_ignores_unknown_events_and_ends_with_one_completion() -> None:
    assembler = ResponsesStreamAssembler(model="gpt-5")
    assert assembler.feed({"type": "response.future_event", "sequence_number": 9, "stuff": [1]}) == []
    assert assembler.feed({"no_type": True}) == []
    events = feed_all(assembler, ResponseScript().message("hello").completed())
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "hello"
    assert [type(e) for e in events].count(ResponseCompleted) == 1
    assert isinstance(events[-1], ResponseCompleted)
    assert assembler.finished


def test_assembler_falls_back_to_streamed_items_when_completed_has_no_output() -> None:
    script = ResponseScript().message("kept").function_call("f", '{"x":1}', call_id="c")
    assembler = ResponsesStreamAssembler(model="gpt-5")
    feed_all(assembler, script)
    (done,) = assembler.feed({"type": "response.completed", "response": {"id": "r", "status": "completed"}})
    assert isinstance(done, ResponseCompleted)
    assert done.response.message.text == "kept"
    assert done.response.message.tool_calls[0].arguments == '{"x":1}'


def test_arguments_sent_only_in_done_events_still_stream_once() -> None:
    assembler = ResponsesStreamAssembler(model="gpt-5")
    item = {"type": "function_call", "id": "fc", "call_id": "c9", "name": "f", "arguments": ""}
    assert assembler.feed({"type": "response.output_item.added", "output_index": 0, "item": item}) == [
        ToolCallStarted(0, "c9", "f")
    ]
    done = {"type": "response.function_call_arguments.done", "output_index": 0, "arguments": '{"k":1}'}
    assert assembler.feed(done) == [ToolCallArgsDelta(0, "c9", '{"k":1}')]
    assert (
        assembler.feed(
            {"type": "response.output_item.done", "output_index": 0, "item": {**item, "arguments": "{}"}}
        )
        == []
    )


def test_tool_call_missing_its_added_event_starts_at_done() -> None:
    assembler = ResponsesStreamAssembler(model="gpt-5")
    item = {"type": "function_call", "id": "fc", "call_id": "c1", "name": "f", "arguments": '{"a":2}'}
    assert assembler.feed({"type": "response.output_item.done", "output_index": 3, "item": item}) == [
        ToolCallStarted(0, "c1", "f"),
        ToolCallArgsDelta(0, "c1", '{"a":2}'),
    ]


def test_failed_and_error_events_raise_mapped_errors() -> None:
    assembler = ResponsesStreamAssembler(model="gpt-5", request_id="req_1")
    with pytest.raises(LLMConnectionError) as info:
        assembler.feed(ResponseScript().failed("server_error", "The server had an error").events[-1][1])
    assert (info.value.code, info.value.message, info.value.request_id) == (
        "server_error",
        "The server had an error",
        "req_1",
    )
    with pytest.raises(LLMRateLimitError):
        assembler.feed({"type": "error", "error": {"code": "rate_limit_exceeded", "message": "slow"}})


def test_unfinished_stream_error_is_a_connection_error() -> None:
    error = ResponsesStreamAssembler(model="gpt-5").unfinished_error()
    assert isinstance(error, LLMConnectionError)
    assert error.retryable


def test_deltas_add_up_to_the_final_response_even_without_delta_events() -> None:
    script = ResponseScript().message("only in done").function_call("f", '{"z":0}', call_id="c7").completed()
    quiet = [
        e
        for _, e in script.events
        if not e["type"].endswith(".delta") and e["type"] != "response.output_item.added"
    ]
    quiet = [
        e
        for e in quiet
        if not (e["type"] == "response.output_item.done" and e["item"]["type"] == "function_call")
    ]
    assembler = ResponsesStreamAssembler(model="gpt-5")
    events = [out for event in quiet for out in assembler.feed(event)]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "only in done"
    assert [e for e in events if isinstance(e, ToolCallStarted | ToolCallArgsDelta)] == [
        ToolCallStarted(0, "c7", "f"),
        ToolCallArgsDelta(0, "c7", '{"z":0}'),
    ]
    assert isinstance(events[-1], ResponseCompleted)
