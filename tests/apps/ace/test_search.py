"""Part 3: HybridSearch — Japanese-aware BM25, dense leg, fusion, filters, provenance, de-duplication,
incremental indexing, and search quality on the labelled fixture (recall@5 and MRR)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kanawa.apps.ace.operations import AddOp, apply_operations
from kanawa.apps.ace.playbook import Bullet, Playbook
from kanawa.apps.ace.search.hybrid import HybridSearch
from kanawa.apps.ace.search.models import SearchQuery
from kanawa.apps.ace.search.ranking import SearchSettings
from kanawa.apps.ace.search.tokenizer import BigramTokenizer, SudachiTokenizer, default_tokenizer
from kanawa.apps.ace.store.json_store import JsonPlaybookStore
from tests.apps.ace.search_fixture import PLAYBOOK_PATH, QUERIES, metrics


@pytest.fixture(scope="module")
def fixture_playbook() -> Playbook:
    return Playbook.from_text(PLAYBOOK_PATH.read_text(encoding="utf-8"))


async def _ranked(search: HybridSearch, playbook: Playbook, **options: object) -> list[list[str]]:
    await search.embed_queries([text for text, _ in QUERIES])
    ranked = []
    for text, _relevant in QUERIES:
        query = SearchQuery(query_text=text, top_k=10, **options)  # type: ignore[arg-type]
        ranked.append([r.bullet.id for r in await search.asearch(query, playbook)])
    return ranked


def test_fixture_has_at_least_40_queries_in_japanese_and_english() -> None:
    japanese = [q for q, _ in QUERIES if not q.isascii()]
    assert len(QUERIES) >= 40
    assert len(japanese) >= 20
    assert len(QUERIES) - len(japanese) >= 20


async def test_default_fusion_is_at_least_as_good_as_dense_alone_on_paraphrased_queries(
    dense_search: HybridSearch, fixture_playbook: Playbook
) -> None:
    fused = metrics(await _ranked(dense_search, fixture_playbook))
    dense = metrics(await _ranked(dense_search, fixture_playbook, mode="dense"))
    bm25 = metrics(await _ranked(dense_search, fixture_playbook, mode="bm25"))
    print(f"\nsearch fixture: hybrid {fused}  dense {dense}  bm25 {bm25}")
    assert fused["recall@5"] >= dense["recall@5"]
    assert fused["mrr"] >= dense["mrr"]
    assert fused["recall@5"] >= 0.8
    assert fused["mrr"] >= 0.8


async def test_ungated_equal_weight_fusion_is_what_the_gate_improves_on(
    dense_search: HybridSearch, fixture_playbook: Playbook
) -> None:
    ungated = HybridSearch(
        embedder=dense_search.embedder,
        store=dense_search.store,
        settings=SearchSettings(bm25_weight=1.0, evidence_gate=False),
    )
    default = metrics(await _ranked(dense_search, fixture_playbook))
    equal = metrics(await _ranked(ungated, fixture_playbook))
    assert default["mrr"] > equal["mrr"]


async def test_japanese_query_is_found_by_both_legs_with_scores_per_leg(
    dense_search: HybridSearch, fixture_playbook: Playbook
) -> None:
    results = await dense_search.asearch(SearchQuery(query_text="APIのレート制限", top_k=5), fixture_playbook)
    top = {r.bullet.id: r for r in results}
    assert "aup-00036" in top
    hit = top["aup-00036"]
    assert hit.found_by == ("bm25", "dense")
    assert hit.bm25_score is not None
    assert hit.bm25_score > 0
    assert hit.dense_score is not None
    assert hit.bm25_rank is not None
    assert hit.dense_rank is not None
    assert [r.rank for r in results] == list(range(1, len(results) + 1))


def test_sudachi_normalised_forms_meet_spelling_variants(bm25_search: HybridSearch) -> None:
    playbook = Playbook(
        bullets=[Bullet(id="aup-00001", section="S", content="ユーザーのパスワードを確認する")]
    )
    assert SudachiTokenizer()("ユーザ") == SudachiTokenizer()("ユーザー")
    results = bm25_search.search(SearchQuery(query_text="ユーザ", mode="bm25"), playbook)
    assert [r.bullet.id for r in results] == ["aup-00001"]


def test_sudachi_dictionary_ships_offline_and_is_the_default() -> None:
    assert isinstance(default_tokenizer(), SudachiTokenizer)
    assert SudachiTokenizer()("APIのレート制限を実装する") == ["api", "レート", "制限", "実装"]


def test_bigram_fallback_tokenizer_finds_japanese_without_sudachi(playbook: Playbook) -> None:
    search = HybridSearch(embedder=None, tokenizer=BigramTokenizer())
    results = search.search(SearchQuery(query_text="レート制限", mode="bm25"), playbook)
    assert results[0].bullet.id == "aup-00004"
    assert BigramTokenizer()("レート制限 pages") == ["レー", "ート", "ト制", "制限", "page"]


def test_filters_by_section_and_minimum_confidence(bm25_search: HybridSearch, playbook: Playbook) -> None:
    by_section = bm25_search.search(
        SearchQuery(query_text="API token page", sections=("strategies and hard rules",)), playbook
    )
    assert {r.bullet.section for r in by_section} == {"STRATEGIES AND HARD RULES"}
    confident = bm25_search.search(
        SearchQuery(query_text="access token login API", min_confidence=0.5), playbook
    )
    assert "shr-00002" not in {r.bullet.id for r in confident}  # helpful=1 harmful=2
    rated_only = bm25_search.search(
        SearchQuery(query_text="API", min_confidence=0.0, include_unrated=False), playbook
    )
    assert all(r.bullet.confidence is not None for r in rated_only)


async def test_exact_and_near_duplicates_are_folded_into_one_result(
    dense_search: HybridSearch, fixture_playbook: Playbook
) -> None:
    query = SearchQuery(query_text="keep fetching pages until an empty one")
    results = await dense_search.asearch(query, fixture_playbook)
    family = {"shr-00001", "misc-00044", "misc-00045"}  # one text, one exact copy, one near copy
    shown = [r for r in results if r.bullet.id in family]
    assert len(shown) == 1
    assert set(shown[0].duplicates) == family - {shown[0].bullet.id}


def test_index_updates_incrementally_embedding_only_changed_bullets(
    dense_search: HybridSearch, playbook: Playbook
) -> None:
    search = HybridSearch(embedder=dense_search.embedder)
    search.search(SearchQuery(query_text="paging"), playbook)
    assert search.embedded == 5
    grown, _audit = apply_operations(
        playbook,
        [
            AddOp(
                section="TROUBLESHOOTING AND PITFALLS",
                content="Clear the browser cache when the web app shows stale data.",
            )
        ],
    )
    results = search.search(SearchQuery(query_text="the website shows old data", top_k=3), grown)
    assert search.embedded == 6  # only the new bullet was embedded
    assert results[0].bullet.content.startswith("Clear the browser cache")


async def test_embeddings_persist_in_the_store_so_a_warm_search_embeds_nothing(
    dense_search: HybridSearch, playbook: Playbook, tmp_path: Path
) -> None:
    store = JsonPlaybookStore(root=tmp_path)
    cold = HybridSearch(embedder=dense_search.embedder, store=store)
    assert await cold.prepare(playbook) == 5
    warm = HybridSearch(embedder=dense_search.embedder, store=store)
    assert await warm.prepare(playbook) == 0
    results = await warm.asearch(SearchQuery(query_text="支払いの前に確認すること", top_k=2), playbook)
    assert results[0].bullet.id == "aup-00005"
    assert warm.embedded == 0


def test_rrf_fusion_is_available_per_query(dense_search: HybridSearch, playbook: Playbook) -> None:
    results = dense_search.search(SearchQuery(query_text="APIのレート制限", fusion="rrf", top_k=2), playbook)
    assert results[0].bullet.id == "aup-00004"
    assert 0 < results[0].score <= 2 / 61


def test_top_k_and_empty_playbook(bm25_search: HybridSearch, playbook: Playbook) -> None:
    assert len(bm25_search.search(SearchQuery(query_text="API", top_k=2), playbook)) <= 2
    assert bm25_search.search(SearchQuery(query_text="anything"), Playbook()) == []


def test_arguments_in_the_seeds_order_query_then_playbook(
    bm25_search: HybridSearch, playbook: Playbook
) -> None:
    with pytest.raises(TypeError, match=r"takes a SearchQuery first and a Playbook second"):
        bm25_search.search(playbook, SearchQuery(query_text="x"))  # type: ignore[arg-type]
