"""One query against a built index: filter, score each leg, fuse, de-duplicate (steps 2–5 of
:mod:`kanawa.apps.ace.search.hybrid`). Pure functions of the index, the query, the query's vector and
the settings, so they are easy to test and to time."""

from __future__ import annotations

import math
import weakref
from dataclasses import KW_ONLY, dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from kanawa.apps.ace.playbook import Bullet, Playbook, normalise_section
from kanawa.apps.ace.search.fusion import convex, ranks, rrf
from kanawa.apps.ace.search.ivf import IvfIndex
from kanawa.apps.ace.search.lexical import Bm25Index
from kanawa.apps.ace.search.models import Fusion, Leg, SearchQuery, SearchResult


@dataclass(frozen=True, slots=True)
class SearchSettings:
    """Fusion and index parameters; the defaults are the measured ones (docs/ace.md)."""

    _: KW_ONLY
    fusion: Fusion = "convex"
    dense_weight: float = 1.0
    bm25_weight: float = 0.2
    evidence_gate: bool = True
    evidence_power: float = 2.0
    evidence_floor: float = 0.0
    rrf_k: int = 60
    candidates: int = 50
    near_duplicate: float = 0.97
    lexical_max_df: float = 0.02
    """In hybrid mode the BM25 leg scores only *rare* query tokens: those in at most this share of the
    bullets (or ``lexical_min_df`` bullets, whichever is more). API names, field names and error
    strings are rare; the words a paraphrase shares with many bullets ("playlist", "payment") only
    add noise to the dense ranking (docs/ace.md has the measurements)."""
    lexical_min_df: int = 5
    k1: float = 1.2
    b: float = 0.75
    embed_batch: int = 32
    ivf_threshold: int = 50_000
    ivf_probe: int = 48


@dataclass(slots=True)
class Index:
    """What a search needs about one playbook, in bullet order."""

    playbook: weakref.ref[Playbook]
    length: int
    bullets: list[Bullet]
    hashes: list[str]
    tokens: list[list[str]]
    keys: list[str]
    bm25: Bm25Index
    matrix: npt.NDArray[np.float32] | None
    sections: npt.NDArray[np.str_]
    ivf: IvfIndex | None = None

    def document_frequency(self, token: str) -> int:
        """How many bullets contain ``token``."""
        return self.bm25.document_frequency(token)


def mask_for(query: SearchQuery, index: Index) -> npt.NDArray[np.bool_] | None:
    """Positions that pass the query's filters; ``None`` when there are no filters."""
    if query.sections is None and query.min_confidence is None:
        return None
    mask = np.ones(index.length, dtype=np.bool_)
    if query.sections is not None:
        wanted = np.array([normalise_section(s).casefold() for s in query.sections], dtype=np.str_)
        mask &= np.isin(index.sections, wanted)
    if query.min_confidence is not None:
        threshold = query.min_confidence
        for position, bullet in enumerate(index.bullets):
            confidence = bullet.confidence
            if (confidence is None and not query.include_unrated) or (
                confidence is not None and confidence < threshold
            ):
                mask[position] = False
    return mask


def top(
    scores: npt.NDArray[Any], mask: npt.NDArray[np.bool_] | None, *, count: int, positive: bool
) -> dict[int, float]:
    """The best ``count`` positions (among those ``mask`` allows) with their scores."""
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
        count = min(count, int(mask.sum()))
    count = min(count, len(scores))
    if count <= 0:
        return {}
    best = np.argpartition(-scores, count - 1)[:count] if count < len(scores) else np.arange(len(scores))
    return {
        int(p): float(scores[p]) for p in best if np.isfinite(scores[p]) and (not positive or scores[p] > 0)
    }


def _top_ivf(
    ivf: IvfIndex,
    vector: npt.NDArray[np.float32],
    mask: npt.NDArray[np.bool_] | None,
    settings: SearchSettings,
) -> dict[int, float]:
    positions, scores = ivf.scores(vector, probe=settings.ivf_probe)
    if mask is not None:
        keep = mask[positions]
        positions, scores = positions[keep], scores[keep]
    chosen = top(scores, None, count=settings.candidates, positive=False)
    return {int(positions[i]): score for i, score in chosen.items()}


def rare_tokens(query_tokens: list[str], index: Index, settings: SearchSettings) -> list[str]:
    """The query tokens the hybrid BM25 leg counts (see ``SearchSettings.lexical_max_df``)."""
    if settings.lexical_max_df >= 1.0:
        return query_tokens
    limit = max(float(settings.lexical_min_df), settings.lexical_max_df * index.length)
    return [t for t in query_tokens if 0 < index.document_frequency(t) <= limit]


def evidence(query_tokens: list[str], index: Index, best: int) -> float:
    """The IDF-weighted share of the query's terms found in BM25's best hit (the BM25 gate)."""
    n = index.length

    def idf(token: str) -> float:
        df = index.document_frequency(token)
        return math.log(1.0 + (n - df + 0.5) / (df + 0.5))

    terms = set(query_tokens)
    total = sum(idf(t) for t in terms)
    if total <= 0:
        return 0.0
    found = set(index.tokens[best]) & terms
    return sum(idf(t) for t in found) / total


def rank(
    query: SearchQuery,
    index: Index,
    query_tokens: list[str],
    vector: npt.NDArray[np.float32] | None,
    settings: SearchSettings,
) -> list[SearchResult]:
    """Steps 2–5 for one query."""
    if index.length == 0:
        return []
    mask = mask_for(query, index)
    legs: dict[str, dict[int, float]] = {}
    gate = 1.0
    if query.mode == "hybrid":
        query_tokens = rare_tokens(query_tokens, index, settings)
    if query.mode in ("hybrid", "bm25") and index.bm25 is not None and query_tokens:
        scores = np.asarray(index.bm25.get_scores(query_tokens), dtype=np.float32)
        legs["bm25"] = top(scores, mask, count=settings.candidates, positive=True)
        if legs["bm25"] and settings.evidence_gate:
            best = max(legs["bm25"], key=lambda p: (legs["bm25"][p], -p))
            share = evidence(query_tokens, index, best)
            gate = 0.0 if share < settings.evidence_floor else share**settings.evidence_power
    if vector is not None and index.matrix is not None and query.mode in ("hybrid", "dense"):
        if index.ivf is not None:
            legs["dense"] = _top_ivf(index.ivf, vector, mask, settings)
        else:
            legs["dense"] = top(index.matrix @ vector, mask, count=settings.candidates, positive=False)
    if query.mode == "hybrid" and len(legs) == 2:
        weights = {"dense": settings.dense_weight, "bm25": settings.bm25_weight * gate}
        if (query.fusion or settings.fusion) == "rrf":
            fused = rrf(legs, weights=weights, k=settings.rrf_k)
        else:
            fused = convex(legs, weights=weights)
    else:
        fused = next(iter(legs.values()), {})
    ordered = sorted(fused, key=lambda p: (-fused[p], p))
    lexical = query_tokens if "bm25" in legs else []
    return deduplicate(query, index, ordered, fused, legs, settings.near_duplicate, lexical=lexical)


def deduplicate(
    query: SearchQuery,
    index: Index,
    ordered: list[int],
    fused: dict[int, float],
    legs: dict[str, dict[int, float]],
    near_duplicate: float,
    *,
    lexical: list[str] | None = None,
) -> list[SearchResult]:
    """Fold exact (normalised text) and near (embedding cosine) duplicates into the better result;
    ``lexical`` are the query tokens BM25 counted (each result names those its bullet contains)."""
    wanted = list(dict.fromkeys(lexical or []))
    kept: list[int] = []
    folded: dict[int, list[str]] = {}
    for position in ordered:
        twin = next((k for k in kept if index.keys[k] == index.keys[position]), None)
        if twin is None and index.matrix is not None and kept:
            sims = index.matrix[kept] @ index.matrix[position]
            best = int(np.argmax(sims))
            if sims[best] >= near_duplicate:
                twin = kept[best]
        if twin is not None:
            folded.setdefault(twin, []).append(index.bullets[position].id)
            continue
        kept.append(position)
        if len(kept) >= query.top_k:
            break
    leg_ranks = {leg: ranks(scores) for leg, scores in legs.items()}
    results = []
    for place, position in enumerate(kept, start=1):
        found_by: tuple[Leg, ...] = tuple(leg for leg in ("bm25", "dense") if position in legs.get(leg, {}))
        results.append(
            SearchResult(
                bullet=index.bullets[position],
                score=fused[position],
                rank=place,
                found_by=found_by,
                bm25_score=legs.get("bm25", {}).get(position),
                bm25_rank=leg_ranks.get("bm25", {}).get(position),
                dense_score=legs.get("dense", {}).get(position),
                dense_rank=leg_ranks.get("dense", {}).get(position),
                duplicates=tuple(folded.get(position, ())),
                matched_terms=tuple(t for t in wanted if t in set(index.tokens[position]))
                if position in legs.get("bm25", {})
                else (),
            )
        )
    return results


__all__ = [
    "Index",
    "SearchSettings",
    "deduplicate",
    "evidence",
    "mask_for",
    "rank",
    "rare_tokens",
    "top",
]
