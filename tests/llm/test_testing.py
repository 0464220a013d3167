"""Test models (DESIGN.md "In tests, ScriptedLLM / FunctionLLM / TestLLM replace the string"): they
honour the LLMAdapter contract (seed 002 §3-3) in chat and stream mode and record what they were sent."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import AsyncIterator, Sequence
from typing import Literal

import pytest
from pydantic import BaseModel, Field

from kanawa.llm.adapter import LLMAdapter
from kanawa.llm.errors import LLMConnectionError, LLMRateLimitError
from kanawa.llm.settings import ModelSettings
from kanawa.llm.testing import FunctionLLM, ModelRequest, ScriptedLLM, TestLLM, events_for, response_from
from kanawa.llm.tokens import count_message_tokens
from kanawa.types import (
    AssistantMessage,
    LLMResponse,
    Message,
    OutputSchema,
    ReasoningDelta,
    ReasoningPart,
    ResponseCompleted,
    StopReason,
    StreamEvent,
    SystemMessage,
    TextDelta,
    ToolCall,
    ToolCallArgsDelta,
    ToolCallStarted,
    ToolMessage,
    ToolSpec,
    Usage,
    UserMessage,
)

HELLO: list[Message] = [SystemMessage("be brief"), UserMessage("hello")]


class AddArgs(BaseModel):
    a: int = Field(ge=0, le=100)
    b: int


class SearchArgs(BaseModel):
    query: str = Field(min_length=1)
    limit: int = Field(default=5, ge=1, le=20)


ADD = ToolSpec("add", "Add two integers.", AddArgs.model_json_schema())
SEARCH = ToolSpec("search", "Search the web.", SearchArgs.model_json_schema())


class Answer(BaseModel):
    value: int
    explanation: str = Field(min_length=3)


class WrappedTool:
    """Anything with a ``spec`` is offered like a ToolSpec (SupportsToolSpec)."""

    spec = SEARCH


def call(name: str, arguments: str = "{}", id_: str = "call_1") -> ToolCall:
    return ToolCall(id_, name, arguments)


async def collect(stream: AsyncIterator[StreamEvent]) -> list[StreamEvent]:
    return [event async for event in stream]


async def consume(stream: AsyncIterator[StreamEvent], *, into: list[StreamEvent]) -> None:
    """Drain ``stream`` into ``into``, so events seen before an error can be asserted on."""
    async for event in stream:
        into.append(event)


def test_test_models_satisfy_the_adapter_protocol() -> None:
    for model in (ScriptedLLM([]), FunctionLLM(lambda r: "x"), TestLLM()):
        assert isinstance(model, LLMAdapter)
        assert model.provider == "test"
    assert TestLLM(model="My-Test ").normalize_model_name() == "my-test"


# ------------------------------------------------------------------------------------- shorthands


def test_response_from_infers_stop_reason_and_usage() -> None:
    text = response_from("hi there")
    assert text.stop_reason is StopReason.END_TURN
    assert text.message == AssistantMessage(text="hi there")
    assert text.usage.output_tokens >= 1
    tools = response_from(AssistantMessage(tool_calls=(call("add"),)), model="m")
    assert tools.stop_reason is StopReason.TOOL_USE
    assert tools.model == "m"
    whole = LLMResponse(AssistantMessage(text="x"), StopReason.MAX_TOKENS)
    assert response_from(whole) is whole
    assert response_from("x", usage=Usage(input_tokens=1, output_tokens=2)).usage == Usage(
        input_tokens=1, output_tokens=2
    )


def test_events_for_streams_reasoning_text_tool_calls_then_completion() -> None:
    message = AssistantMessage(
        text="The answer is forty-two.",
        tool_calls=(call("add", '{"a": 40, "b": 2}'), call("search", '{"query": "x"}', "call_2")),
        reasoning=(ReasoningPart(text="adding numbers"),),
    )
    response = response_from(message)
    events = events_for(response, chunk_size=5)
    kinds = [e.kind for e in events]
    assert kinds[0] == "reasoning_delta"
    assert kinds.index("text_delta") > kinds.index("reasoning_delta")
    assert kinds.index("tool_call_started") > max(i for i, k in enumerate(kinds) if k == "text_delta")
    assert events[-1] == ResponseCompleted(response)
    assert kinds.count("response_completed") == 1
    assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == "adding numbers"
    texts = [e.text for e in events if isinstance(e, TextDelta)]
    assert "".join(texts) == message.text
    assert max(len(t) for t in texts) == 5
    starts = [e for e in events if isinstance(e, ToolCallStarted)]
    assert [(s.index, s.id, s.name) for s in starts] == [(0, "call_1", "add"), (1, "call_2", "search")]
    for start, tool_call in zip(starts, message.tool_calls, strict=True):
        deltas = [e.delta for e in events if isinstance(e, ToolCallArgsDelta) and e.index == start.index]
        assert "".join(deltas) == tool_call.arguments
    with pytest.raises(ValueError, match="chunk_size"):
        events_for(response, chunk_size=0)


# ------------------------------------------------------------------------------------- ScriptedLLM


async def test_scripted_steps_are_answered_in_order_and_requests_recorded() -> None:
    llm = ScriptedLLM([AssistantMessage(tool_calls=(call("add", '{"a": 1, "b": 2}'),)), "3"])
    settings = ModelSettings(max_output_tokens=50)
    first = await llm.chat(HELLO, tools=[ADD, WrappedTool()], settings=settings)
    assert first.stop_reason is StopReason.TOOL_USE
    assert first.message.tool_calls[0].name == "add"
    second = await llm.chat([*HELLO, first.message, ToolMessage("call_1", "3", name="add")])
    assert second.message.text == "3"
    assert second.stop_reason is StopReason.END_TURN
    assert llm.remaining == 0
    assert [r.tool_names for r in llm.requests] == [("add", "search"), ()]
    assert llm.requests[0].settings is settings
    assert llm.requests[0].messages == tuple(HELLO)
    assert llm.requests[1].tool_results[0].text == "3"
    assert llm.requests[1].last_user_text == "hello"
    assert not llm.requests[0].streamed


async def test_shorthand_usage_is_estimated_from_the_request() -> None:
    llm = ScriptedLLM(["ok", "again"], model="gpt-5")
    response = await llm.chat(HELLO)
    assert response.usage.input_tokens == count_message_tokens(HELLO, model="gpt-5")
    assert response.usage.output_tokens >= 1
    assert response.usage.requests == 1
    assert response.model == "gpt-5"
    assert response.response_id == "resp_1"
    assert (await llm.chat(HELLO)).response_id == "resp_2"


async def test_scripted_llm_response_is_returned_as_given() -> None:
    scripted = LLMResponse(
        AssistantMessage(text="cut"),
        StopReason.MAX_TOKENS,
        usage=Usage(input_tokens=5, output_tokens=7),
        model="x",
        response_id="r-9",
    )
    assert await ScriptedLLM([scripted]).chat(HELLO) is scripted


async def test_running_out_of_script_fails_with_a_clear_assertion() -> None:
    llm = ScriptedLLM(["only step"])
    await llm.chat(HELLO)
    with pytest.raises(AssertionError, match=r"request 2 arrived but the script has only 1 step"):
        await llm.chat(HELLO)
    with pytest.raises(AssertionError, match="script has only 1 step"):
        await collect(llm.stream(HELLO))


async def test_checks_assert_on_what_each_step_was_sent() -> None:
    seen: list[ModelRequest] = []

    def first(request: ModelRequest) -> None:
        seen.append(request)
        assert request.tool_names == ("add",)

    llm = ScriptedLLM(["a", "b", "c"], checks=[first, None, lambda r: r.response_schema is not None])
    await llm.chat(HELLO, tools=[ADD])
    await llm.chat(HELLO, tools=[ADD])  # no check for step 2
    with pytest.raises(AssertionError, match="check for step 3 rejected the request"):
        await llm.chat(HELLO)
    assert seen == [llm.requests[0]]


async def test_a_failing_check_raises_its_own_assertion() -> None:
    def no_tools(request: ModelRequest) -> None:
        assert not request.tools, "tools must not be offered with a response schema"

    llm = ScriptedLLM(["x"], checks=[no_tools])
    with pytest.raises(AssertionError, match="must not be offered"):
        await llm.chat(HELLO, tools=[ADD])


def test_more_checks_than_steps_is_a_mistake() -> None:
    with pytest.raises(ValueError, match="2 checks for a script of 1 steps"):
        ScriptedLLM(["x"], checks=[None, None])


async def test_stream_mode_renders_shorthand_steps_as_provider_events() -> None:
    message = AssistantMessage(text="Sure, adding.", tool_calls=(call("add", '{"a": 1, "b": 2}'),))
    llm = ScriptedLLM([message])
    events = await collect(llm.stream(HELLO, tools=[ADD]))
    assert [type(e) for e in events[:2]] == [TextDelta, TextDelta]
    assert any(isinstance(e, ToolCallStarted) and e.name == "add" for e in events)
    final = events[-1]
    assert isinstance(final, ResponseCompleted)
    assert final.response.message == message
    assert final.response.stop_reason is StopReason.TOOL_USE
    assert llm.requests[0].streamed


async def test_literal_event_scripts_stream_verbatim_and_chat_returns_the_completion() -> None:
    done = LLMResponse(
        AssistantMessage(text="Hello!"),
        StopReason.END_TURN,
        usage=Usage(input_tokens=3, output_tokens=2),
        model="scripted",
    )
    script: list[StreamEvent] = [
        ReasoningDelta("greet"),
        TextDelta("Hel"),
        TextDelta("lo!"),
        ResponseCompleted(done),
    ]
    llm = ScriptedLLM([script, script])
    assert await collect(llm.stream(HELLO)) == script
    assert await llm.chat(HELLO) is done


@pytest.mark.parametrize(
    ("events", "problem"),
    [
        ([TextDelta("no end")], "must end with ResponseCompleted"),
        ([], "must end with ResponseCompleted"),
        (
            [ResponseCompleted(response_from("x")), TextDelta("late")],
            "events after its ResponseCompleted",
        ),
    ],
)
def test_malformed_event_scripts_are_refused_up_front(events: list[StreamEvent], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        ScriptedLLM([events])


async def test_scripted_errors_raise_in_chat_and_before_any_stream_event() -> None:
    error = LLMRateLimitError("slow down", status_code=429, retry_after=2)
    llm = ScriptedLLM([error, error])
    with pytest.raises(LLMRateLimitError) as info:
        await llm.chat(HELLO)
    assert info.value is error
    received: list[StreamEvent] = []
    with pytest.raises(LLMRateLimitError):
        await consume(llm.stream(HELLO), into=received)
    assert received == []
    assert len(llm.requests) == 2


async def test_an_error_inside_an_event_script_breaks_the_stream_there() -> None:
    broken = LLMConnectionError("peer closed connection")
    llm = ScriptedLLM([[TextDelta("partial "), broken], [TextDelta("partial "), broken]])
    received: list[StreamEvent] = []
    with pytest.raises(LLMConnectionError):
        await consume(llm.stream(HELLO), into=received)
    assert received == [TextDelta("partial ")]
    with pytest.raises(LLMConnectionError):
        await llm.chat(HELLO)


# ------------------------------------------------------------------------------------- FunctionLLM


async def test_function_llm_calls_a_sync_function_with_the_request() -> None:
    def echo(request: ModelRequest) -> str:
        return f"you said {request.last_user_text} with {len(request.tools)} tools"

    llm = FunctionLLM(echo)
    response = await llm.chat(HELLO, tools=[ADD])
    assert response.message.text == "you said hello with 1 tools"
    assert llm.model == "function"
    assert len(llm.requests) == 1


async def test_function_llm_awaits_an_async_function_and_streams() -> None:
    async def answer(request: ModelRequest) -> AssistantMessage:
        if request.tool_results:
            return AssistantMessage(text=f"sum is {request.tool_results[-1].text}")
        return AssistantMessage(tool_calls=(call("add", '{"a": 2, "b": 3}'),))

    llm = FunctionLLM(answer, model="fn")
    first = await llm.chat(HELLO, tools=[ADD])
    assert first.message.tool_calls[0].arguments == '{"a": 2, "b": 3}'
    history = [*HELLO, first.message, ToolMessage("call_1", "5", name="add")]
    events = await collect(llm.stream(history, tools=[ADD]))
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "sum is 5"
    assert [r.streamed for r in llm.requests] == [False, True]


async def test_function_llm_may_raise_or_return_event_scripts() -> None:
    calls: list[bool] = []

    def flaky(request: ModelRequest) -> Sequence[StreamEvent]:
        calls.append(request.streamed)
        if len(calls) == 1:
            raise LLMConnectionError("refused")
        return [TextDelta("ok"), ResponseCompleted(response_from("ok"))]

    llm = FunctionLLM(flaky)
    with pytest.raises(LLMConnectionError):
        await llm.chat(HELLO)
    assert (await llm.chat(HELLO)).message.text == "ok"

    bad = FunctionLLM(lambda r: [TextDelta("never completes")])
    with pytest.raises(ValueError, match="must end with ResponseCompleted"):
        await bad.chat(HELLO)
    nonsense = FunctionLLM(lambda r: 42)  # type: ignore[arg-type,return-value]
    with pytest.raises(TypeError, match="FunctionLLM: a step cannot be a int"):
        await nonsense.chat(HELLO)


# ----------------------------------------------------------------------------------------- TestLLM


async def test_test_llm_calls_every_tool_once_with_schema_valid_arguments() -> None:
    llm = TestLLM()
    first = await llm.chat(HELLO, tools=[ADD, WrappedTool()])
    calls = first.message.tool_calls
    assert first.stop_reason is StopReason.TOOL_USE
    assert [c.name for c in calls] == ["add", "search"]
    assert len({c.id for c in calls}) == 2
    AddArgs.model_validate_json(calls[0].arguments)
    SearchArgs.model_validate_json(calls[1].arguments)
    results = [ToolMessage(c.id, f"result of {c.name}", name=c.name) for c in calls]
    final = await llm.chat([*HELLO, first.message, *results], tools=[ADD, WrappedTool()])
    assert final.stop_reason is StopReason.END_TURN
    assert not final.message.tool_calls
    assert "result of add" in final.message.text
    assert "result of search" in final.message.text


async def test_test_llm_final_output_validates_against_the_response_schema() -> None:
    schema = OutputSchema("Answer", Answer.model_json_schema())
    for seed in range(5):
        response = await TestLLM(seed=seed).chat(HELLO, response_schema=schema)
        Answer.model_validate_json(response.message.text)


async def test_test_llm_without_tools_or_schema_answers_briefly() -> None:
    response = await TestLLM().chat(HELLO)
    assert response.message.text == "Done."
    assert response.stop_reason is StopReason.END_TURN


async def test_test_llm_is_stateless_between_conversations_and_deterministic() -> None:
    llm = TestLLM(seed=7)
    one = await llm.chat(HELLO, tools=[ADD])
    two = await llm.chat(HELLO, tools=[ADD])  # a new conversation: the tool is called again
    assert one.message.tool_calls == two.message.tool_calls
    other = await TestLLM(seed=8).chat(HELLO, tools=[ADD])
    assert other.message.tool_calls[0].name == "add"


async def test_test_llm_honours_tool_choice_and_parallel_tool_calls() -> None:
    llm = TestLLM()
    none = await llm.chat(HELLO, tools=[ADD, SEARCH], settings=ModelSettings(tool_choice="none"))
    assert not none.message.tool_calls
    named = await llm.chat(HELLO, tools=[ADD, SEARCH], settings=ModelSettings(tool_choice="search"))
    assert [c.name for c in named.message.tool_calls] == ["search"]
    serial = ModelSettings(parallel_tool_calls=False)
    history: list[Message] = list(HELLO)
    names = []
    for _ in range(3):
        response = await llm.chat(history, tools=[ADD, SEARCH], settings=serial)
        if not response.message.tool_calls:
            break
        assert len(response.message.tool_calls) == 1
        tool_call = response.message.tool_calls[0]
        names.append(tool_call.name)
        history += [response.message, ToolMessage(tool_call.id, "ok", name=tool_call.name)]
    assert names == ["add", "search"]
    ids = [c.id for m in history if isinstance(m, AssistantMessage) for c in m.tool_calls]
    assert len(set(ids)) == len(ids)


async def test_test_llm_streams_tool_calls_and_final_json() -> None:
    llm = TestLLM()
    events = await collect(llm.stream(HELLO, tools=[ADD]))
    started = [e for e in events if isinstance(e, ToolCallStarted)]
    assert [s.name for s in started] == ["add"]
    arguments = "".join(e.delta for e in events if isinstance(e, ToolCallArgsDelta))
    AddArgs.model_validate(json.loads(arguments))
    final = events[-1]
    assert isinstance(final, ResponseCompleted)
    schema = OutputSchema("Answer", Answer.model_json_schema())
    streamed = await collect(llm.stream(HELLO, response_schema=schema))
    Answer.model_validate_json("".join(e.text for e in streamed if isinstance(e, TextDelta)))


async def test_test_llm_sends_a_parameter_s_schema_example_as_its_argument() -> None:
    class Lookup(BaseModel):
        city: str = Field(examples=["Kyoto"])
        units: str = Field(default="metric", examples=["imperial"])

    spec = ToolSpec("weather", "Look up the weather.", Lookup.model_json_schema())
    response = await TestLLM(seed=3).chat(HELLO, tools=[spec])
    assert json.loads(response.message.tool_calls[0].arguments) == {"city": "Kyoto", "units": "imperial"}


def _after_tools(*results: ToolMessage) -> list[Message]:
    calls = tuple(call(m.name or "tool", id_=m.tool_call_id) for m in results)
    return [*HELLO, AssistantMessage(tool_calls=calls), *results]


RESULTS = (
    ToolMessage("call_1", "403.0", name="calculator"),
    ToolMessage("call_2", "kanawa notes\n- first line\n- second line", name="read_file"),
    ToolMessage("call_3", "tool invoke error: failed to execute tool", is_error=True, name="read_file"),
    ToolMessage("call_4", "x" * 100, name="dump"),
)
SUMMARY = (
    "Done. Tool results: calculator → 403.0; read_file → kanawa notes - first line - second line; "
    f"read_file ✗ tool invoke error: failed to execute tool; dump → {'x' * 59}…"
)


async def test_test_llm_text_answer_names_each_result_and_marks_errors() -> None:
    response = await TestLLM().chat(_after_tools(*RESULTS))
    assert response.message.text == SUMMARY


class Report(BaseModel):
    kind: Literal["report"]
    count: int
    code: str = Field(pattern=r"^[A-Z]{3}$")
    when: dt.datetime
    headline: str = Field(max_length=24)
    body: str


async def test_test_llm_structured_answer_puts_the_summary_in_the_first_free_text_field() -> None:
    schema = OutputSchema("Report", Report.model_json_schema())
    for seed in range(4):
        response = await TestLLM(seed=seed).chat(_after_tools(*RESULTS), response_schema=schema)
        report = Report.model_validate_json(response.message.text)  # still valid against the model
        assert report.headline == SUMMARY[:23] + "…"  # enum, pattern and format fields are passed over
        assert report.body != SUMMARY  # only the first one is filled


async def test_test_llm_structured_answer_follows_a_top_level_ref_and_adds_an_absent_field() -> None:
    class Note(BaseModel):
        tag: str = Field(min_length=500)  # the summary cannot reach it: skipped
        text: str = ""  # optional, so maybe absent from the generated value: added

    schema = OutputSchema("Note", {"$ref": "#/$defs/Note", "$defs": {"Note": Note.model_json_schema()}})
    for seed in range(4):
        response = await TestLLM(seed=seed).chat(_after_tools(*RESULTS[:2]), response_schema=schema)
        note = Note.model_validate_json(response.message.text)
        assert (
            note.text
            == "Done. Tool results: calculator → 403.0; read_file → kanawa notes - first line - second line"
        )


async def test_test_llm_structured_answer_without_results_or_text_fields_is_left_as_generated() -> None:
    from kanawa.llm.testing.schema_values import value_for_schema

    answer = OutputSchema("Answer", Answer.model_json_schema())
    plain = await TestLLM(seed=2).chat(HELLO, response_schema=answer)  # no tool results yet
    assert json.loads(plain.message.text) == value_for_schema(answer.schema, seed=2)

    class Numbers(BaseModel):
        total: int
        labels: list[str]

    numbers = OutputSchema("Numbers", Numbers.model_json_schema())
    response = await TestLLM(seed=2).chat(_after_tools(*RESULTS), response_schema=numbers)
    assert json.loads(response.message.text) == value_for_schema(numbers.schema, seed=2)


def test_count_tokens_counts_offline() -> None:
    llm = TestLLM()
    assert llm.count_tokens("hello world") > 0
    assert llm.count_tokens(HELLO) == count_message_tokens(HELLO, model="test")
