"""The dense leg's IVF index for large playbooks: deterministic, close to exact, exact when every list
is probed, and used by HybridSearch above its threshold."""

from __future__ import annotations

import numpy as np

from kanawa.apps.ace.playbook import Playbook
from kanawa.apps.ace.search.hybrid import HybridSearch
from kanawa.apps.ace.search.ivf import IvfIndex
from kanawa.apps.ace.search.models import SearchQuery
from kanawa.apps.ace.search.ranking import SearchSettings
from tests.apps.ace.search_fixture import PLAYBOOK_PATH


def _clustered(n: int, dim: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((n // 50, dim))
    rows = centres[rng.integers(0, len(centres), n)] + 0.3 * rng.standard_normal((n, dim))
    rows = (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)
    queries = rows[rng.integers(0, n, 40)] + 0.1 * rng.standard_normal((40, dim))
    return rows, (queries / np.linalg.norm(queries, axis=1, keepdims=True)).astype(np.float32)


def test_ivf_finds_nearly_all_exact_neighbours_and_is_deterministic() -> None:
    rows, queries = _clustered(3_000, 48, seed=1)
    ivf = IvfIndex.build(rows)
    again = IvfIndex.build(rows)
    np.testing.assert_array_equal(ivf.positions, again.positions)
    assert sorted(ivf.positions.tolist()) == list(range(3_000))
    hits = 0
    for query in queries:
        exact = set(np.argsort(-(rows @ query))[:10].tolist())
        positions, scores = ivf.scores(query, probe=8)
        approx = set(positions[np.argsort(-scores)[:10]].tolist())
        hits += len(exact & approx)
    assert hits / (10 * len(queries)) >= 0.9


def test_probing_every_list_is_exact() -> None:
    rows, queries = _clustered(500, 16, seed=2)
    ivf = IvfIndex.build(rows, lists=10)
    positions, scores = ivf.scores(queries[0], probe=10)
    np.testing.assert_allclose(scores[np.argsort(positions)], rows @ queries[0], rtol=1e-5, atol=1e-6)


async def test_hybrid_search_uses_ivf_above_its_threshold(dense_search: HybridSearch) -> None:
    playbook = Playbook.from_text(PLAYBOOK_PATH.read_text(encoding="utf-8"))
    exact = HybridSearch(embedder=dense_search.embedder, store=dense_search.store)
    ivf = HybridSearch(
        embedder=dense_search.embedder,
        store=dense_search.store,
        settings=SearchSettings(ivf_threshold=10, ivf_probe=100),
    )
    query = SearchQuery(query_text="APIのレート制限", mode="dense", top_k=5)
    with_ivf = await ivf.asearch(query, playbook)
    assert ivf._index(playbook, lambda missing: None).ivf is not None
    assert [r.bullet.id for r in with_ivf] == [r.bullet.id for r in await exact.asearch(query, playbook)]
