"""Long-term memory: texts in, relevant texts out. Joins an :class:`Embedder` to a :class:`MemoryStore`.

Adding embeds every new text of a call in one batch; texts whose content hash the store already holds
reuse the stored vector instead of calling the model (the cache by content hash). Searching embeds
the query (as a *query*, passages as *passages*: e5 models need the distinction) and asks the store.

:func:`open_memory_store` picks the backend the way DESIGN.md describes: PostgreSQL + pgvector when
``KANAWA_DATABASE_URL`` is set, else a SQLite file under ``./.kanawa/``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from kanawa.agents.memory.embeddings.base import Embedder, content_hash
from kanawa.agents.memory.pgvector_store import DATABASE_URL_ENV
from kanawa.agents.memory.sqlite_store import DEFAULT_PATH, SQLiteMemoryStore
from kanawa.agents.memory.store import DEFAULT_NAMESPACE, MemoryItem, MemoryStore, ScoredItem
from kanawa.types import JsonValue


class LongTermMemory:
    """``await memory.add(["Alice prefers tea."])``, then ``await memory.asearch("what does Alice drink?")``.

    ``embedded`` counts texts sent to the embedding model (cache misses).
    """

    def __init__(self, store: MemoryStore, embedder: Embedder) -> None:
        if store.dim != embedder.dim:
            raise ValueError(
                f"the store holds {store.dim}-dimensional vectors but {embedder.name} makes {embedder.dim}"
            )
        self.store = store
        self.embedder = embedder
        self.embedded = 0

    async def add(
        self,
        texts: Sequence[str | MemoryItem],
        *,
        namespace: str = DEFAULT_NAMESPACE,
        metadata: Mapping[str, JsonValue] | None = None,
    ) -> list[int]:
        """Remember ``texts`` (strings take ``namespace`` and ``metadata``; items keep their own) and
        return their ids. Empty texts are refused with ``ValueError``."""
        items = [
            t
            if isinstance(t, MemoryItem)
            else MemoryItem(t, metadata=dict(metadata or {}), namespace=namespace)
            for t in texts
        ]
        if any(not item.text.strip() for item in items):
            raise ValueError("cannot remember an empty text")
        if not items:
            return []
        model = self.embedder.name
        hashes = [content_hash(item.text, kind="passage", model=model) for item in items]
        known = await self.store.vectors_for(hashes)
        todo = list(dict.fromkeys(h for h in hashes if h not in known))
        if todo:
            text_of = {h: item.text for h, item in zip(hashes, items, strict=True)}
            rows = await self.embedder.aembed([text_of[h] for h in todo], kind="passage")
            known.update(zip(todo, rows, strict=True))
            self.embedded += len(todo)
        vectors = np.stack([known[h] for h in hashes]).astype(np.float32, copy=False)
        return await self.store.add(items, vectors, hashes)

    async def asearch(
        self, query: str, *, k: int = 5, namespace: str = DEFAULT_NAMESPACE
    ) -> list[ScoredItem]:
        """The ``k`` remembered items most similar to ``query``, best first."""
        if not query.strip():
            return []
        vector = await self.embedder.aembed([query], kind="query")
        return await self.store.asearch(vector[0], k=k, namespace=namespace)

    async def aclose(self) -> None:
        await self.store.aclose()


async def open_memory_store(
    *,
    dim: int,
    path: str | Path = DEFAULT_PATH,
    dsn: str | None = None,
) -> MemoryStore:
    """PostgreSQL + pgvector when ``dsn`` or ``KANAWA_DATABASE_URL`` is set, else SQLite at ``path``."""
    url = dsn or os.environ.get(DATABASE_URL_ENV)
    if url:
        from kanawa.agents.memory.pgvector_store import PgVectorMemoryStore

        return await PgVectorMemoryStore.open(url, dim=dim)
    return SQLiteMemoryStore(path=path, dim=dim)


__all__ = ["LongTermMemory", "open_memory_store"]
