"""Long-term stores: SQLite + numpy and PostgreSQL + pgvector (index path and the seed's brute-force
``SELECT id, cos_sim(...) ORDER BY 2 DESC LIMIT k`` fallback) keep the same contract."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import numpy as np
import pytest

from kanawa.agents.memory import MemoryItem, MemoryStore, PgVectorMemoryStore, SQLiteMemoryStore
from kanawa.agents.memory.long_term import open_memory_store
from tests.agents.memory.conftest import unit_vectors

DIM = 16
StoreFactory = Callable[[], Awaitable[MemoryStore]]


@pytest.fixture(params=["sqlite", "pgvector_index", "pgvector_brute_force"])
async def make_store(
    request: pytest.FixtureRequest, tmp_path: Path, postgres_url: str, table: str
) -> AsyncIterator[StoreFactory]:
    """Opens stores over one shared database (a file, or one table), closing them after the test."""
    opened: list[MemoryStore] = []

    async def make() -> MemoryStore:
        store: MemoryStore
        if request.param == "sqlite":
            store = SQLiteMemoryStore(path=tmp_path / "memory.sqlite3", dim=DIM)
        else:
            index = "hnsw" if request.param == "pgvector_index" else None
            store = await PgVectorMemoryStore.open(postgres_url, dim=DIM, table=table, index=index)
            assert store.indexed is (index is not None)
        opened.append(store)
        return store

    yield make
    for store in opened:
        await store.aclose()


def exact_top_k(vectors: np.ndarray, query: np.ndarray, k: int) -> list[int]:
    return [int(i) for i in np.argsort(-(vectors @ query))[:k]]


def items(n: int, *, namespace: str = "default", start: int = 0) -> list[MemoryItem]:
    return [MemoryItem(f"note {start + i}", metadata={"n": start + i}, namespace=namespace) for i in range(n)]


async def test_search_returns_the_exact_top_k_by_cosine_similarity(make_store: StoreFactory) -> None:
    store = await make_store()
    vectors = unit_vectors(60, DIM, seed=1)
    ids = await store.add(items(60), vectors, [f"h{i}" for i in range(60)])
    assert len(set(ids)) == 60
    for q in range(5):
        query = unit_vectors(1, DIM, seed=100 + q)[0]
        hits = await store.asearch(query, k=5)
        assert [hit.item.text for hit in hits] == [f"note {i}" for i in exact_top_k(vectors, query, 5)]
        scores = [hit.score for hit in hits]
        assert scores == sorted(scores, reverse=True)
        expected = np.sort(vectors @ query)[::-1][:5]
        assert np.allclose(scores, expected, atol=1e-5)
        assert hits[0].item.metadata == {"n": int(hits[0].item.text.split()[1])}
        assert hits[0].item.id in ids


async def test_namespaces_never_mix_and_small_stores_return_what_they_have(make_store: StoreFactory) -> None:
    store = await make_store()
    vectors = unit_vectors(6, DIM, seed=2)
    await store.add(items(3, namespace="alice"), vectors[:3], ["a0", "a1", "a2"])
    await store.add(items(3, namespace="bob", start=3), vectors[3:], ["b0", "b1", "b2"])
    hits = await store.asearch(vectors[4], k=10, namespace="alice")
    assert sorted(hit.item.text for hit in hits) == ["note 0", "note 1", "note 2"]
    assert (await store.asearch(vectors[4], k=1, namespace="bob"))[0].item.text == "note 4"
    assert await store.asearch(vectors[0], k=3, namespace="nobody") == []
    assert await store.count() == 6
    assert await store.count(namespace="bob") == 3


async def test_stored_vectors_are_found_by_content_hash(make_store: StoreFactory) -> None:
    store = await make_store()
    vectors = unit_vectors(2, DIM, seed=3)
    await store.add(items(2), vectors, ["h0", "h1"])
    found = await store.vectors_for(["h1", "missing", "h1"])
    assert set(found) == {"h1"}
    assert np.allclose(found["h1"], vectors[1], atol=1e-6)


async def test_wrong_dimensions_are_refused(make_store: StoreFactory) -> None:
    store = await make_store()
    with pytest.raises(ValueError, match="dimensions"):
        await store.add(items(1), unit_vectors(1, DIM + 1, seed=4), ["h"])
    with pytest.raises(ValueError, match="one embedding row"):
        await store.add(items(2), unit_vectors(1, DIM, seed=4), ["h"])
    with pytest.raises(ValueError, match="dimensions"):
        await store.asearch(unit_vectors(1, DIM - 1, seed=4)[0], k=1)
    with pytest.raises(ValueError, match="k must be"):
        await store.asearch(unit_vectors(1, DIM, seed=4)[0], k=0)


async def test_concurrent_inserts_from_several_stores_lose_nothing(make_store: StoreFactory) -> None:
    stores = [await make_store() for _ in range(4)]
    vectors = unit_vectors(200, DIM, seed=5)

    async def writer(w: int) -> list[int]:
        ids: list[int] = []
        for batch in range(5):
            start = w * 50 + batch * 10
            ids += await stores[w].add(
                items(10, start=start), vectors[start : start + 10], [f"h{start + i}" for i in range(10)]
            )
        return ids

    written = await asyncio.gather(*(writer(w) for w in range(4)))
    all_ids = [i for ids in written for i in ids]
    assert len(set(all_ids)) == 200
    for store in stores:
        assert await store.count() == 200
    # every store sees every row, including those written through the others
    query = vectors[123]
    for store in stores:
        assert (await store.asearch(query, k=1))[0].item.text == "note 123"


async def test_sqlite_and_pgvector_return_the_same_top_k(
    tmp_path: Path, postgres_url: str, table: str
) -> None:
    vectors = unit_vectors(300, DIM, seed=6)
    texts = items(300)
    hashes = [f"h{i}" for i in range(300)]
    sqlite = SQLiteMemoryStore(path=tmp_path / "m.sqlite3", dim=DIM)
    indexed = await PgVectorMemoryStore.open(postgres_url, dim=DIM, table=table)
    brute = await PgVectorMemoryStore.open(postgres_url, dim=DIM, table=f"{table}_bf", index=None)
    try:
        for store in (sqlite, indexed, brute):
            await store.add(texts, vectors, hashes)
        for q in range(10):
            query = unit_vectors(1, DIM, seed=1000 + q)[0]
            results = [[h.item.text for h in await s.asearch(query, k=8)] for s in (sqlite, indexed, brute)]
            assert results[0] == results[1] == results[2]
    finally:
        for store in (sqlite, indexed, brute):
            await store.aclose()


async def test_pgvector_falls_back_to_the_cos_sim_scan_when_the_index_is_dropped(
    postgres_url: str, table: str
) -> None:
    import asyncpg

    store = await PgVectorMemoryStore.open(postgres_url, dim=DIM, table=table)
    try:
        vectors = unit_vectors(40, DIM, seed=7)
        await store.add(items(40), vectors, [f"h{i}" for i in range(40)])
        query = unit_vectors(1, DIM, seed=8)[0]
        before = [h.item.text for h in await store.asearch(query, k=5)]
        conn = await asyncpg.connect(postgres_url)
        try:
            await conn.execute("SET enable_seqscan = off")  # the table is tiny; show the index is usable
            plan = "\n".join(
                r[0]
                for r in await conn.fetch(
                    f"EXPLAIN SELECT id FROM {table} ORDER BY embedding <=> '{_literal(query)}' LIMIT 5"
                )
            )
            await conn.execute(f"DROP INDEX {table}_embedding_hnsw")
            # the seed's fallback form works in SQL on its own
            rows = await conn.fetch(
                f"SELECT id, cos_sim(embedding, '{_literal(query)}') FROM {table} ORDER BY 2 DESC LIMIT 5"
            )
        finally:
            await conn.close()
        assert "hnsw" in plan
        assert "ORDER BY embedding <=> $1" in store.search_sql
        assert await store.refresh_index() is False
        assert "cos_sim(embedding, $1)" in store.search_sql
        assert "ORDER BY 2 DESC LIMIT $3" in store.search_sql
        after = [h.item.text for h in await store.asearch(query, k=5)]
        assert before == after == [f"note {i}" for i in exact_top_k(vectors, query, 5)]
        assert [f"note {r['id'] - 1}" for r in rows] == after
    finally:
        await store.aclose()


def _literal(row: np.ndarray) -> str:
    return "[" + ",".join(f"{x:.8f}" for x in row) + "]"


async def test_a_store_refuses_a_database_made_for_other_dimensions(
    tmp_path: Path, postgres_url: str, table: str
) -> None:
    SQLiteMemoryStore(path=tmp_path / "m.sqlite3", dim=DIM)
    with pytest.raises(ValueError, match="16-dimensional"):
        SQLiteMemoryStore(path=tmp_path / "m.sqlite3", dim=8)
    store = await PgVectorMemoryStore.open(postgres_url, dim=DIM, table=table)
    await store.aclose()
    with pytest.raises(ValueError, match="16-dimensional"):
        await PgVectorMemoryStore.open(postgres_url, dim=8, table=table)


async def test_kanawa_database_url_selects_pgvector(
    tmp_path: Path, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KANAWA_DATABASE_URL", raising=False)
    local = await open_memory_store(dim=DIM, path=tmp_path / "local.sqlite3")
    assert isinstance(local, SQLiteMemoryStore)
    await local.aclose()
    monkeypatch.setenv("KANAWA_DATABASE_URL", postgres_url)
    remote = await open_memory_store(dim=DIM, path=tmp_path / "unused.sqlite3")
    try:
        assert isinstance(remote, PgVectorMemoryStore)
        assert remote.indexed
        assert not (tmp_path / "unused.sqlite3").exists()
    finally:
        await remote.aclose()


async def test_analyze_gives_the_planner_the_tables_size(postgres_url: str, table: str) -> None:
    store = await PgVectorMemoryStore.open(postgres_url, dim=DIM, table=table)
    try:
        await store.add(items(500), unit_vectors(500, DIM, seed=9), [f"h{i}" for i in range(500)])
        await store.analyze()
        tuples = await store._pool.fetchval("SELECT reltuples FROM pg_class WHERE relname = $1", table)
        assert tuples == 500
    finally:
        await store.aclose()


async def test_ef_search_holds_on_every_pooled_connection(postgres_url: str, table: str) -> None:
    store = await PgVectorMemoryStore.open(postgres_url, dim=DIM, table=table, ef_search=123, pool_size=2)
    try:
        for _ in range(4):  # connections are reset (RESET ALL) each time they return to the pool
            assert await store._pool.fetchval("SHOW hnsw.ef_search") == "123"
    finally:
        await store.aclose()
