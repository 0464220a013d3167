"""Part 2: the PostgreSQL + pgvector PlaybookStore against a real server (``pgserver``): round trips,
embeddings in a vector column, and two curators updating one playbook at once losing nothing."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import numpy as np
import pytest

from kanawa.apps.ace.operations import AddOp, MergeOp, RemoveOp, TagOp, UpdateOp
from kanawa.apps.ace.playbook import Playbook
from kanawa.apps.ace.store.opening import open_playbook_store
from kanawa.apps.ace.store.pg_store import PgPlaybookStore


@pytest.fixture
async def store(ace_postgres_url: str, table_prefix: str) -> AsyncIterator[PgPlaybookStore]:
    store = await PgPlaybookStore.open(ace_postgres_url, prefix=table_prefix)
    try:
        yield store
    finally:
        await store.aclose()


async def test_save_load_round_trip(store: PgPlaybookStore, playbook: Playbook) -> None:
    await store.asave("appworld", playbook)
    loaded = await store.aload("appworld")
    assert loaded == playbook
    assert await store.datasets() == ["appworld"]
    assert len(await store.aload("other")) == 0


async def test_apply_writes_only_the_delta_and_keeps_order(
    store: PgPlaybookStore, playbook: Playbook
) -> None:
    await store.asave("appworld", playbook)
    audit = await store.aapply(
        "appworld",
        [
            AddOp(section="STRATEGIES AND HARD RULES", content="A new rule."),
            UpdateOp(bullet_id="api-00003", content="Use spotify.show_playlist_library (paginated)."),
            TagOp(bullet_id="aup-00004", tag="harmful"),
            RemoveOp(bullet_id="aup-00005"),
            MergeOp(bullet_ids=["shr-00001", "shr-00002"]),
        ],
    )
    assert all(a.status == "applied" for a in audit)
    loaded = await store.aload("appworld")
    assert [b.id for b in loaded] == ["shr-00001", "shr-00006", "api-00003", "aup-00004"]
    assert loaded.get("shr-00001").helpful == 4  # type: ignore[union-attr]
    assert loaded.get("aup-00004").harmful == 1  # type: ignore[union-attr]
    assert loaded.next_counter == 7


async def test_two_curators_updating_one_playbook_lose_nothing(
    ace_postgres_url: str, table_prefix: str, playbook: Playbook
) -> None:
    first = await PgPlaybookStore.open(ace_postgres_url, prefix=table_prefix)
    second = await PgPlaybookStore.open(ace_postgres_url, prefix=table_prefix)
    try:
        await first.asave("shared", playbook)

        async def curator(store: PgPlaybookStore, name: str) -> None:
            for i in range(15):
                await store.aapply(
                    "shared",
                    [
                        AddOp(section="OTHERS", content=f"{name} lesson {i}"),
                        TagOp(bullet_id="shr-00001", tag="helpful"),
                    ],
                )

        await asyncio.gather(curator(first, "left"), curator(second, "right"))
        final = await first.aload("shared")
        assert len(final) == 5 + 30
        assert final.get("shr-00001").helpful == 3 + 30  # type: ignore[union-attr]
        assert sorted(b.counter for b in final.in_section("OTHERS")) == list(range(6, 36))
    finally:
        await first.aclose()
        await second.aclose()


async def test_embeddings_live_in_a_pgvector_column(store: PgPlaybookStore) -> None:
    rows = {"a": np.array([1, 0, 0], dtype=np.float32), "b": np.array([0.5, 0.5, 0], dtype=np.float32)}
    await store.save_vectors("m", rows)
    await store.save_vectors(
        "m", {"a": np.array([9, 9, 9], dtype=np.float32)}
    )  # a hash's vector never changes
    found = await store.load_vectors("m", ["a", "b", "c"])
    np.testing.assert_array_equal(found["a"], rows["a"])
    np.testing.assert_array_equal(found["b"], rows["b"])
    assert "c" not in found


async def test_open_playbook_store_accepts_a_postgresql_url(ace_postgres_url: str) -> None:
    store = await open_playbook_store(location=ace_postgres_url)
    try:
        assert isinstance(store, PgPlaybookStore)
    finally:
        await store.aclose()


async def test_search_embeddings_persist_in_postgres(store: PgPlaybookStore, playbook: Playbook) -> None:
    from kanawa.apps.ace.search.hybrid import HybridSearch
    from kanawa.apps.ace.search.models import SearchQuery

    cold = HybridSearch(store=store)
    assert await cold.aprepare(playbook) == 5
    warm = HybridSearch(embedder=cold.embedder, store=store)
    results = await warm.asearch(SearchQuery(query_text="支払いの前に確認すること", top_k=1), playbook)
    assert warm.embedded == 0
    assert results[0].bullet.id == "aup-00005"


async def test_adaptation_loop_runs_on_the_shared_postgres_store(store: PgPlaybookStore) -> None:
    from kanawa.apps.ace.curator import Curator
    from kanawa.apps.ace.demo import DEMO_DATASET, TASKS, demo_models, seed_playbook
    from kanawa.apps.ace.generator import GeneratorAgent
    from kanawa.apps.ace.prompt_builder import PromptBuilder
    from kanawa.apps.ace.reflector import Reflector
    from kanawa.apps.ace.search.hybrid import HybridSearch
    from kanawa.apps.ace.workflow import AdaptationWorkflow

    await store.asave(DEMO_DATASET, seed_playbook())
    search = HybridSearch(embedder=None)
    generator_llm, reflector_llm, curator_llm = demo_models()
    workflow = AdaptationWorkflow(
        GeneratorAgent(store, search, generator_llm, PromptBuilder(None)),
        Reflector(reflector_llm),
        Curator(curator_llm, search=search),
        store,
    )
    report = await workflow.run_offline(DEMO_DATASET, TASKS, epochs=2)
    assert [epoch.accuracy for epoch in report.epochs] == [0.5, 1.0]
    assert len(await store.aload(DEMO_DATASET)) == 5
