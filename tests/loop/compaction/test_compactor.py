"""Compaction inside a run (``Agent(..., compaction=Compaction(...))``) with the offline test models:
every request stays under the trigger however long the tool loop runs, tool pairs stay intact, the
summariser's work is counted, and a context-length refusal compacts once and retries once."""

from __future__ import annotations

import pytest

from kanawa import Agent, Compaction, FunctionLLM, tool
from kanawa.llm.errors import LLMBadRequestError, is_context_length_error
from kanawa.llm.testing import ModelRequest
from kanawa.llm.tokens import count_message_tokens
from kanawa.loop.compaction import DropOldest, NativeCompaction, Summarize
from kanawa.loop.compaction.strategies import SUMMARY_PREFIX
from kanawa.loop.errors import LLMCallFailed
from kanawa.trace import Tracer
from kanawa.trace.memory import InMemoryTraceSink
from kanawa.types import AssistantMessage, Message, ToolCall, UserMessage
from tests.loop.compaction.histories import pairing_errors

WINDOW = 4_000
BIG = "lorem ipsum dolor sit amet " * 60  # ~ 400 tokens per tool result


@tool
def fetch_page(n: int) -> str:
    """Fetch one page of a long document.

    Args:
        n: the page number
    """
    return f"page {n}: {BIG}"


def paging_model(pages: int, seen: list[ModelRequest]) -> FunctionLLM:
    """Asks for ``pages`` pages one after another, then answers with how many results it could see."""

    def answer(request: ModelRequest) -> AssistantMessage | str:
        seen.append(request)
        done = sum(1 for m in request.messages if isinstance(m, AssistantMessage) and m.tool_calls)
        asked = int(request.messages[-1].tool_call_id.split("_")[1]) + 1 if request.tool_results else 0
        if asked >= pages:
            return f"read {asked} pages, {done} in view"
        return AssistantMessage(tool_calls=(ToolCall(f"p_{asked}", "fetch_page", f'{{"n": {asked}}}'),))

    return FunctionLLM(answer, model="paging")


async def test_a_tool_loop_ten_times_the_window_completes_with_every_request_under_the_trigger() -> None:
    seen: list[ModelRequest] = []
    agent = Agent(
        "reader",
        "Read every page.",
        tools=[fetch_page],
        model=paging_model(100, seen),
        config=_config(110),
        compaction=Compaction(context_window=WINDOW, trigger=0.8, target=0.5),
    )
    result = await agent.arun("Read the document.")

    assert result.output.startswith("read 100 pages")
    total = sum(count_message_tokens([m]) for m in result.messages)
    assert len(seen) == 101
    sizes = [count_message_tokens(list(r.messages)) for r in seen]
    assert sum(sizes) > 10 * WINDOW  # the conversation is ten windows long, at least
    assert max(sizes) <= 0.8 * WINDOW
    for request in seen:
        assert pairing_errors(request.messages) == []
        assert request.messages[0].role == "system"
        assert any(isinstance(m, UserMessage) and m.text == "Read the document." for m in request.messages)
    assert total <= 0.8 * WINDOW


async def test_without_compaction_the_same_history_grows_past_the_window() -> None:
    seen: list[ModelRequest] = []
    agent = Agent("reader", "Read.", tools=[fetch_page], model=paging_model(20, seen), config=_config(30))
    await agent.arun("Read the document.")
    assert count_message_tokens(list(seen[-1].messages)) > WINDOW


async def test_summarize_folds_older_turns_into_one_summary_written_by_the_chosen_model() -> None:
    seen: list[ModelRequest] = []
    summaries: list[ModelRequest] = []

    def summarise(request: ModelRequest) -> str:
        summaries.append(request)
        return f"pages so far were read; {len(summaries)} summaries written"

    summariser = FunctionLLM(summarise, model="summariser")
    agent = Agent(
        "reader",
        "Read every page.",
        tools=[fetch_page],
        model=paging_model(30, seen),
        config=_config(40),
        compaction=Compaction(strategy=Summarize(summariser), context_window=WINDOW),
    )
    result = await agent.arun("Read the document.")

    assert summaries, "the summariser was never asked"
    request = summaries[0]
    assert request.tools == ()  # a transcript, not tool messages: nothing to pair
    assert "Conversation to summarise" in request.messages[-1].text  # type: ignore[union-attr]
    assert "fetch_page" in request.messages[-1].text  # type: ignore[union-attr]
    last = seen[-1].messages
    summary = [m for m in last if isinstance(m, UserMessage) and m.text.startswith(SUMMARY_PREFIX)]
    assert len(summary) == 1  # earlier summaries were folded into the newest one
    assert pairing_errors(last) == []
    assert result.usage.requests == len(seen) + len(summaries)  # the summariser's requests count


async def test_a_context_length_refusal_compacts_once_and_retries_once() -> None:
    calls: list[int] = []

    def refuse_long(request: ModelRequest) -> AssistantMessage | str:
        size = count_message_tokens(list(request.messages))
        calls.append(size)
        if size > 1_500:  # the server's real window is smaller than the one the agent was told
            raise LLMBadRequestError(
                "Your input exceeds the context window of this model.",
                status_code=400,
                code="context_length_exceeded",
            )
        return "done"

    history: list[Message] = []
    for n in range(12):
        call = ToolCall(f"h_{n}", "fetch_page", f'{{"n": {n}}}')
        history += [AssistantMessage(tool_calls=(call,)), _result(call)]
    agent = Agent(
        "reader",
        "Answer.",
        model=FunctionLLM(refuse_long),
        compaction=Compaction(context_window=100_000, target=0.01),
    )
    result = await agent.arun("Summarise what you read.", history=history)
    assert result.output == "done"
    assert len(calls) == 2
    assert calls[0] > 1_500 >= calls[1]
    assert pairing_errors(result.messages) == []


async def test_a_refusal_that_compaction_cannot_help_is_raised_after_one_retry() -> None:
    def always_refuse(request: ModelRequest) -> str:
        raise LLMBadRequestError("prompt is too long: 900000 tokens > 200000 maximum", status_code=400)

    agent = Agent(
        "a",
        "x",
        model=FunctionLLM(always_refuse),
        compaction=Compaction(context_window=1_000),
    )
    with pytest.raises(LLMCallFailed) as failed:
        await agent.arun("hello " * 2_000)
    assert is_context_length_error(failed.value.error)


async def test_other_bad_requests_are_not_retried() -> None:
    calls: list[int] = []

    def refuse(request: ModelRequest) -> str:
        calls.append(1)
        raise LLMBadRequestError("invalid tool schema", status_code=400)

    agent = Agent("a", "x", model=FunctionLLM(refuse), compaction=Compaction(context_window=1_000))
    with pytest.raises(LLMCallFailed):
        await agent.arun("hello")
    assert calls == [1]


async def test_compaction_is_traced_with_counts_only() -> None:
    sink = InMemoryTraceSink()
    agent = Agent(
        "reader",
        "Read every page.",
        tools=[fetch_page],
        model=paging_model(15, []),
        config=_config(20),
        tracer=Tracer(sinks=[sink]),
        compaction=Compaction(context_window=WINDOW),
    )
    await agent.arun("Read the document.")
    events = sink.named("compaction")
    assert events
    data = events[0].data
    assert data["cause"] == "threshold"
    assert data["strategy"] == "drop_oldest"
    assert data["tokens_after"] < data["tokens_before"] <= WINDOW  # type: ignore[operator]
    assert "lorem" not in str(events[0])


async def test_streamed_runs_compact_and_retry_too() -> None:
    seen: list[ModelRequest] = []
    agent = Agent(
        "reader",
        "Read every page.",
        tools=[fetch_page],
        model=paging_model(40, seen),
        config=_config(50),
        compaction=Compaction(context_window=WINDOW),
    )
    result = await agent.arun("Read the document.", stream=True)
    assert result.output.startswith("read 40 pages")
    assert all(r.streamed for r in seen)
    assert max(count_message_tokens(list(r.messages)) for r in seen) <= 0.8 * WINDOW


def test_a_model_the_catalogue_does_not_know_needs_a_window() -> None:
    local = FunctionLLM(lambda r: "ok", model="my-local-model")
    agent = Agent("a", "x", model=local, compaction=Compaction())
    with pytest.raises(ValueError, match=r"my-local-model.*context_window"):
        agent.run("hi")


def test_a_catalogue_model_brings_its_window() -> None:
    assert Compaction().window_for("openai:gpt-5.2") >= 400_000
    assert Compaction(context_window=123).window_for("openai:gpt-5.2") == 123


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"trigger": 0}, "trigger"),
        ({"trigger": 1.5}, "trigger"),
        ({"target": 0.9, "trigger": 0.5}, "target"),
        ({"context_window": 0}, "context_window"),
        ({"strategy": "drop"}, "strategy"),
    ],
)
def test_bad_settings_are_refused_where_they_are_written(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises((ValueError, TypeError), match=message):
        Compaction(**kwargs)  # type: ignore[arg-type]


def test_native_compaction_adds_the_anthropic_context_edit_only_for_anthropic() -> None:
    native = NativeCompaction(keep_tool_uses=2, fallback=DropOldest())
    fields = native.request_fields("anthropic", trigger_tokens=1000)
    assert fields == {
        "context_management": {
            "edits": [
                {
                    "type": "clear_tool_uses_20250919",
                    "trigger": {"type": "input_tokens", "value": 1000},
                    "keep": {"type": "tool_uses", "value": 2},
                }
            ]
        }
    }
    assert native.request_fields("gemini", trigger_tokens=1000) == {}


@pytest.mark.parametrize(
    ("status", "code", "message", "expected"),
    [
        (400, "context_length_exceeded", "Your input exceeds the context window of this model.", True),
        (400, "invalid_request_error", "prompt is too long: 250000 tokens > 200000 maximum", True),
        (413, "request_too_large", "Request exceeds the maximum allowed number of bytes.", True),
        (
            400,
            "INVALID_ARGUMENT",
            "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
            True,
        ),
        (400, None, "This model's maximum context length is 8192 tokens.", True),
        (400, "invalid_request_error", "tools.0.name: String should match pattern", False),
        (429, None, "too many tokens per minute", False),
    ],
)
def test_context_length_errors_are_told_apart(
    status: int, code: str | None, message: str, expected: bool
) -> None:
    from kanawa.llm.errors import error_for_status

    assert is_context_length_error(error_for_status(status, message, code=code)) is expected


def _config(steps: int):  # type: ignore[no-untyped-def]
    from kanawa import AgentConfiguration

    return AgentConfiguration(max_steps=steps, max_tool_calls_per_tool=None)


def _result(call: ToolCall) -> Message:
    from kanawa.types import ToolMessage

    return ToolMessage(call.id, f"page: {BIG}", name=call.name)
