"""``SearchQuery`` and ``SearchResult``: the seed's search contract (``search(query, playbook)``)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from kanawa.apps.ace.playbook import Bullet

Leg = Literal["bm25", "dense"]
Fusion = Literal["rrf", "convex"]
Mode = Literal["hybrid", "bm25", "dense"]


class SearchQuery(BaseModel):
    """What to look for: ``SearchQuery(query_text="APIのレート制限", top_k=10)``.

    Attributes:
        query_text: the user's words (Japanese, English or both).
        top_k: how many results at most.
        sections: only bullets of these sections (titles, any case).
        min_confidence: only bullets whose helpful / (helpful + harmful) is at least this; bullets with
            no verdict yet pass unless ``include_unrated=False``.
        mode: ``hybrid`` (both legs fused), ``bm25`` or ``dense`` alone.
        fusion: ``rrf`` or ``convex``; ``None`` uses the search's default.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    query_text: str
    top_k: int = Field(default=10, ge=1, le=1000)
    sections: tuple[str, ...] | None = None
    min_confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    include_unrated: bool = True
    mode: Mode = "hybrid"
    fusion: Fusion | None = None


class SearchResult(BaseModel):
    """One bullet found, with the fused score and what each leg said about it.

    ``found_by`` lists the legs that had the bullet among their candidates; ``bm25_rank`` /
    ``dense_rank`` are 1-based ranks in each leg (``None`` when the leg did not find it);
    ``duplicates`` are ids of exact or near-duplicate bullets folded into this result;
    ``matched_terms`` are the query tokens the lexical leg counted and found in this bullet (in hybrid
    mode only rare tokens count). :meth:`explain` says in one line why the bullet matched.
    """

    model_config = ConfigDict(frozen=True)

    bullet: Bullet
    score: float
    rank: int
    found_by: tuple[Leg, ...]
    bm25_score: float | None = None
    bm25_rank: int | None = None
    dense_score: float | None = None
    dense_rank: int | None = None
    duplicates: tuple[str, ...] = ()
    matched_terms: tuple[str, ...] = ()

    def explain(self) -> str:
        """Why this bullet matched: each leg's score and rank, the lexical terms, folded duplicates —
        ``"dense 0.874 (#1); lexical 6.12 (#1) on show_playlist_library; +1 duplicate"``."""
        parts = []
        if self.dense_score is not None:
            parts.append(f"dense {self.dense_score:.3f} (#{self.dense_rank})")
        if self.bm25_score is not None:
            terms = f" on {', '.join(self.matched_terms)}" if self.matched_terms else ""
            parts.append(f"lexical {self.bm25_score:.2f} (#{self.bm25_rank}){terms}")
        if self.duplicates:
            count = len(self.duplicates)
            parts.append(f"+{count} duplicate{'s' if count > 1 else ''}")
        return "; ".join(parts) or "no leg scored it"


__all__ = ["Fusion", "Leg", "Mode", "SearchQuery", "SearchResult"]
