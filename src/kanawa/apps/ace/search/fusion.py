"""Fusing the BM25 and dense legs: Reciprocal Rank Fusion and a gated convex combination.

Both take each leg's candidates as ``{position: score}`` (positions index the playbook's bullets).

- **RRF** — ``Σ w_leg / (k + rank)``: ranks only, robust to score scales.
- **convex** — ``w_dense · dense' + w_bm25 · g · bm25'`` over min-max normalised scores (``x'``), where
  ``g`` is the *evidence* for the BM25 leg: the IDF-weighted share of the query's terms that occur
  in BM25's best hit. A user's paraphrase shares few terms with a bullet, so BM25's ranking is mostly
  noise and ``g`` is small; a query naming an API or an error string shares many, and BM25 counts.
  Equal-weight fusion without the gate scored *below* dense retrieval alone on our paraphrased
  fixture (docs/ace.md gives the numbers that chose the defaults).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np


def ranks(scores: Mapping[int, float]) -> dict[int, int]:
    """1-based ranks, best first; ties broken by position so results are deterministic."""
    ordered = sorted(scores, key=lambda position: (-scores[position], position))
    return {position: rank for rank, position in enumerate(ordered, start=1)}


def rrf(
    legs: Mapping[str, Mapping[int, float]], *, weights: Mapping[str, float], k: int = 60
) -> dict[int, float]:
    fused: dict[int, float] = {}
    for leg, scores in legs.items():
        weight = weights.get(leg, 1.0)
        if weight <= 0:
            continue
        for position, rank in ranks(scores).items():
            fused[position] = fused.get(position, 0.0) + weight / (k + rank)
    return fused


def minmax(scores: Mapping[int, float]) -> dict[int, float]:
    if not scores:
        return {}
    values = np.fromiter(scores.values(), dtype=np.float64)
    low, high = float(values.min()), float(values.max())
    if high - low < 1e-12:
        return dict.fromkeys(scores, 1.0)
    return {position: (score - low) / (high - low) for position, score in scores.items()}


def convex(legs: Mapping[str, Mapping[int, float]], *, weights: Mapping[str, float]) -> dict[int, float]:
    fused: dict[int, float] = {}
    for leg, scores in legs.items():
        weight = weights.get(leg, 0.0)
        if weight <= 0:
            continue
        for position, score in minmax(scores).items():
            fused[position] = fused.get(position, 0.0) + weight * score
    return fused


__all__ = ["convex", "minmax", "ranks", "rrf"]
