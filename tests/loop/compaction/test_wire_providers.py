"""Conversations ten times a model's window, through each provider's official SDK and a local server
that checks every request the way the real API does (tests/wire/conversation.py): a tool result
without its call, a call without its result or a reasoning item cut from its call is a 400 there,
and so is a prompt over the window. Every run must complete with no refusal at all."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import pytest

from kanawa import Agent, AgentConfiguration, Compaction, FunctionLLM, tool
from kanawa.llm.adapter import LLMAdapter
from kanawa.llm.errors import LLMBadRequestError, is_context_length_error
from kanawa.llm.testing import ModelRequest
from kanawa.loop.compaction import NativeCompaction, Summarize
from kanawa.loop.compaction.strategies import SUMMARY_PREFIX
from kanawa.types import AssistantMessage, ReasoningPart, ToolCall, ToolMessage, UserMessage
from tests.wire.conversation import Api, LongConversation
from tests.wire.server import WireServer

WINDOW = 3_000
PAGES = 50
FILLER = "lorem ipsum dolor sit amet " * 90  # ~600 tokens at four characters a token
APIS: tuple[Api, ...] = ("responses", "chat", "anthropic", "gemini")


@tool
def fetch_page(n: int) -> str:
    """Fetch one page of a long document.

    Args:
        n: the page number
    """
    return f"page {n}: {FILLER}"


def make_adapter(api: Api, server: WireServer) -> LLMAdapter:
    base = server.base_url
    if api == "responses":
        from kanawa.llm.openai.responses import OpenAIResponsesAdapter

        return OpenAIResponsesAdapter("gpt-5.2", api_key="sk-test-long-0001", base_url=base, timeout=5.0)
    if api == "chat":
        from kanawa.llm.openai.chat import OpenAIChatAdapter

        return OpenAIChatAdapter(
            "local-model", api_key="sk-test-long-0002", base_url=f"{base}/v1", timeout=5.0
        )
    if api == "anthropic":
        from kanawa.llm.anthropic.adapter import AnthropicAdapter

        return AnthropicAdapter("claude-haiku-4-5", api_key="sk-ant-test-long-3", base_url=base, timeout=5.0)
    from kanawa.llm.gemini.adapter import GeminiAdapter

    return GeminiAdapter("gemini-2.5-flash", api_key="AIza-test-long-000004", base_url=base, timeout=5.0)


@pytest.fixture(autouse=True)
def _no_ambient_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "ANTHROPIC_API_KEY",
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
    ):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
async def serve(wire_server: WireServer) -> AsyncIterator[Callable[[Api, LongConversation], LLMAdapter]]:
    adapters: list[LLMAdapter] = []

    def start(api: Api, conversation: LongConversation) -> LLMAdapter:
        wire_server.default = conversation
        adapter = make_adapter(api, wire_server)
        adapters.append(adapter)
        return adapter

    yield start
    for adapter in adapters:
        await adapter.aclose()  # type: ignore[attr-defined]


def reader(model: LLMAdapter, compaction: Compaction | None, *, pages: int = PAGES) -> Agent[str]:
    return Agent(
        "reader",
        "Read every page of the document, one call at a time.",
        tools=[fetch_page],
        model=model,
        config=AgentConfiguration(max_steps=pages + 5, max_tool_calls_per_tool=None),
        compaction=compaction,
    )


def assert_completed(conversation: LongConversation, output: str, pages: int = PAGES) -> None:
    assert conversation.refusals == []
    assert output == f"read {pages} pages"
    assert pages * len(FILLER) // 4 >= 10 * WINDOW  # the pages read are ten windows long
    assert sum(conversation.sizes) > 10 * WINDOW
    assert max(conversation.sizes) <= WINDOW


@pytest.mark.parametrize("api", APIS)
async def test_dropping_old_turns_carries_a_conversation_ten_windows_long(
    api: Api, serve: Callable[[Api, LongConversation], LLMAdapter]
) -> None:
    conversation = LongConversation(api, window=WINDOW, pages=PAGES)
    agent = reader(serve(api, conversation), Compaction(context_window=WINDOW, trigger=0.6, target=0.3))
    result = await agent.arun("Read the whole document.")
    assert_completed(conversation, result.output)


@pytest.mark.parametrize("api", APIS)
async def test_the_same_conversation_without_compaction_is_refused_as_too_long(
    api: Api, serve: Callable[[Api, LongConversation], LLMAdapter]
) -> None:
    from kanawa.loop.errors import LLMCallFailed

    conversation = LongConversation(api, window=WINDOW, pages=PAGES)
    with pytest.raises(LLMCallFailed) as failed:
        await reader(serve(api, conversation), None).arun("Read the whole document.")
    assert failed.value.status_code == 400
    assert conversation.refusals[-1].startswith("context length")


@pytest.mark.parametrize("api", APIS)
async def test_a_context_length_error_from_each_provider_compacts_and_retries(
    api: Api, serve: Callable[[Api, LongConversation], LLMAdapter]
) -> None:
    """The agent believes the window is three times larger than the server's: every overflow comes
    back as that provider's context-length error, which compacts once and retries once."""
    conversation = LongConversation(api, window=WINDOW, pages=25)
    agent = reader(serve(api, conversation), Compaction(context_window=3 * WINDOW, target=0.1), pages=25)
    result = await agent.arun("Read the whole document.")
    assert result.output == "read 25 pages"
    refused = [r for r in conversation.refusals if r.startswith("context length")]
    assert refused, "the server never refused: the test did not reach the retry"
    assert len(refused) == len(conversation.refusals)  # nothing but overflows, never a pairing error
    assert conversation.asked == 25


async def test_openai_native_compaction_replaces_old_turns_with_the_compaction_item(
    serve: Callable[[Api, LongConversation], LLMAdapter], wire_server: WireServer
) -> None:
    conversation = LongConversation("responses", window=WINDOW, pages=PAGES)
    agent = reader(
        serve("responses", conversation),
        Compaction(strategy=NativeCompaction(), context_window=WINDOW, trigger=0.6, target=0.3),
    )
    result = await agent.arun("Read the whole document.")
    assert_completed(conversation, result.output)
    assert conversation.compactions > 0
    compact_requests = [r for r in wire_server.requests if r.path.endswith("/responses/compact")]
    assert len(compact_requests) == conversation.compactions
    assert compact_requests[0].json()["model"] == "gpt-5.2"
    last = wire_server.requests[-1].json()["input"]
    assert [i["type"] for i in last if i.get("type") == "compaction"] == ["compaction"]
    kept = [m for m in result.messages if isinstance(m, AssistantMessage) and m.reasoning]
    assert any(
        isinstance(p, ReasoningPart) and p.payload and p.payload.get("type") == "compaction"
        for m in kept
        for p in m.reasoning
    )


async def test_anthropic_native_compaction_lets_the_server_clear_old_tool_results(
    serve: Callable[[Api, LongConversation], LLMAdapter], wire_server: WireServer
) -> None:
    conversation = LongConversation("anthropic", window=WINDOW, pages=PAGES)
    strategy = NativeCompaction(keep_tool_uses=2)
    agent = reader(serve("anthropic", conversation), Compaction(strategy=strategy, context_window=WINDOW))
    result = await agent.arun("Read the whole document.")
    assert conversation.refusals == []
    assert result.output == f"read {PAGES} pages"
    assert conversation.cleared > 0
    sent = wire_server.requests[-1]
    assert sent.headers["anthropic-beta"] == "context-management-2025-06-27"
    edit = sent.json()["context_management"]["edits"][0]
    assert edit["keep"] == {"type": "tool_uses", "value": 2}
    assert edit["trigger"] == {"type": "input_tokens", "value": int(WINDOW * 0.8)}


@pytest.mark.parametrize("api", ["chat", "gemini"])
async def test_native_compaction_falls_back_where_the_provider_has_none(
    api: Api, serve: Callable[[Api, LongConversation], LLMAdapter]
) -> None:
    conversation = LongConversation(api, window=WINDOW, pages=PAGES)
    compaction = Compaction(strategy=NativeCompaction(), context_window=WINDOW, trigger=0.6, target=0.3)
    result = await reader(serve(api, conversation), compaction).arun("Read the whole document.")
    assert_completed(conversation, result.output)


@pytest.mark.parametrize("api", APIS)
async def test_summaries_by_another_model_keep_the_conversation_going(
    api: Api, serve: Callable[[Api, LongConversation], LLMAdapter]
) -> None:
    asked: list[ModelRequest] = []

    def summarise(request: ModelRequest) -> str:
        asked.append(request)
        return f"The reader has read pages so far ({len(asked)} summaries)."

    conversation = LongConversation(api, window=WINDOW, pages=PAGES)
    strategy = Summarize(FunctionLLM(summarise, model="summariser"), max_summary_tokens=200)
    agent = reader(
        serve(api, conversation),
        Compaction(strategy=strategy, context_window=WINDOW, trigger=0.6, target=0.3),
    )
    result = await agent.arun("Read the whole document.")
    assert_completed(conversation, result.output)
    assert asked
    summaries = [
        m for m in result.messages if isinstance(m, UserMessage) and m.text.startswith(SUMMARY_PREFIX)
    ]
    assert len(summaries) == 1


BROKEN = {
    "orphaned result": [UserMessage("go"), ToolMessage("call_gone", "page 0: text", name="fetch_page")],
    "call without result": [
        UserMessage("go"),
        AssistantMessage(tool_calls=(ToolCall("call_0", "fetch_page", '{"n": 0}'),)),
        UserMessage("and then?"),
    ],
}
REFUSED = {
    ("responses", "orphaned result"): "No tool call found for function call output with call_id call_gone",
    ("responses", "call without result"): "No tool output found for function call call_0",
    ("chat", "orphaned result"): "must be a response to a preceeding message with 'tool_calls'",
    ("chat", "call without result"): "did not have response messages: call_0",
    ("anthropic", "orphaned result"): "unexpected `tool_use_id` found in `tool_result` blocks: call_gone",
    ("anthropic", "call without result"): "`tool_use` ids were found without `tool_result` blocks",
    ("gemini", "orphaned result"): "function response turn comes immediately after a function call turn",
    ("gemini", "call without result"): "function call turn comes immediately after a user turn",
}


@pytest.mark.parametrize(("api", "broken"), sorted(REFUSED))
async def test_the_servers_refuse_a_split_tool_pair_as_the_real_apis_do(
    api: Api, broken: str, serve: Callable[[Api, LongConversation], LLMAdapter]
) -> None:
    """What compaction must never produce is a 400 from every provider, with its own wording."""
    conversation = LongConversation(api, window=WINDOW, pages=1)
    messages = list(BROKEN[broken])
    if api == "gemini" and broken == "call without result":  # Gemini: a call turn must follow a user turn,
        messages = messages[1:]  # ... so one that opens the conversation is refused
    with pytest.raises(LLMBadRequestError) as refused:
        await serve(api, conversation).chat(messages, tools=[fetch_page])
    assert refused.value.status_code == 400
    assert REFUSED[api, broken] in refused.value.message
    assert not is_context_length_error(refused.value)


async def test_the_responses_server_refuses_a_reasoning_item_cut_from_its_call(
    serve: Callable[[Api, LongConversation], LLMAdapter],
) -> None:
    reasoning = ReasoningPart(provider="openai", payload={"type": "reasoning", "id": "rs_9", "summary": []})
    messages = [UserMessage("go"), AssistantMessage(reasoning=(reasoning,)), UserMessage("next")]
    with pytest.raises(LLMBadRequestError, match="of type 'reasoning' was provided without its required"):
        await serve("responses", LongConversation("responses", window=WINDOW, pages=1)).chat(messages)
