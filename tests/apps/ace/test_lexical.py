"""The BM25 leg's own index against ``bm25s``, the maintained BM25 library, as the oracle.

kanawa keeps raw postings (so a Curator's change updates the index instead of rebuilding it) and
scores at query time; these tests pin that its scores are Lucene BM25 exactly as ``bm25s`` computes
them, for a fresh build and for an index derived after removals, edits and additions.
"""

from __future__ import annotations

import random

import bm25s
import numpy as np
import pytest

from kanawa.apps.ace.search.lexical import Bm25Index

VOCAB = [f"t{i}" for i in range(40)] + ["ファイル", "削除", "api_key", "spotify"]


def _corpus(rng: random.Random, size: int) -> list[list[str]]:
    return [[rng.choice(VOCAB) for _ in range(rng.randint(1, 30))] for _ in range(size)]


def _reference(documents: list[list[str]]) -> bm25s.BM25:
    reference = bm25s.BM25(k1=1.2, b=0.75, method="lucene")
    reference.index(documents, show_progress=False)
    return reference


def _assert_same_scores(ours: Bm25Index, documents: list[list[str]], rng: random.Random) -> None:
    reference = _reference(documents)
    for _ in range(40):
        query = [rng.choice(VOCAB) for _ in range(rng.randint(1, 5))] + ["absent-token"]
        np.testing.assert_allclose(ours.get_scores(query), reference.get_scores(query), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("seed", [1, 7, 23])
def test_a_fresh_index_scores_as_bm25s_lucene(seed: int) -> None:
    rng = random.Random(seed)
    documents = _corpus(rng, 150)
    _assert_same_scores(Bm25Index.build(documents), documents, rng)


@pytest.mark.parametrize("seed", [2, 11])
def test_an_index_derived_after_removals_edits_and_additions_scores_as_bm25s(seed: int) -> None:
    rng = random.Random(seed)
    old = _corpus(rng, 120)
    survivors = [i for i in range(len(old)) if rng.random() > 0.2]  # the others removed
    edited = set(rng.sample(survivors, 10))
    new: list[list[str]] = []
    old_to_new = np.full(len(old), -1, dtype=np.int64)
    added: dict[int, list[str]] = {}
    for i in survivors:
        if i in edited:
            added[len(new)] = _corpus(rng, 1)[0]
            new.append(added[len(new)])
        else:
            old_to_new[i] = len(new)
            new.append(old[i])
    for document in _corpus(rng, 15):
        added[len(new)] = document
        new.append(document)
    derived = Bm25Index.build(old).derive(old_to_new, added, len(new))
    _assert_same_scores(derived, new, rng)
