"""An embedding cache keyed by content hash, in front of any :class:`Embedder`.

Texts are hashed with the model name and kind (:func:`content_hash`); hits come from an LRU of
``max_entries`` rows, and all misses of one call go to the wrapped embedder as a single batch. Vector
stores keep the hash with each item, so re-adding known content skips the model entirely there too.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from kanawa.agents.memory.embeddings.base import Embedder, TextKind, Vectors, content_hash


class CachedEmbedder:
    """Wraps ``embedder``; same ``name`` and ``dim``, so cached and uncached vectors are interchangeable.

    ``misses`` counts texts sent to the model (each distinct text once per call); ``hits`` the rest.
    """

    def __init__(self, embedder: Embedder, *, max_entries: int = 10_000) -> None:
        if max_entries < 1:
            raise ValueError("max_entries must be >= 1")
        self.embedder = embedder
        self.max_entries = max_entries
        self.hits = 0
        self.misses = 0
        self._rows: OrderedDict[str, Vectors] = OrderedDict()

    @property
    def name(self) -> str:
        return self.embedder.name

    @property
    def dim(self) -> int:
        return self.embedder.dim

    async def aembed(self, texts: Sequence[str], *, kind: TextKind) -> Vectors:
        keys = [content_hash(text, kind=kind, model=self.name) for text in texts]
        found: dict[str, Vectors] = {}
        missing: dict[str, str] = {}
        for key, text in zip(keys, texts, strict=True):
            row = self._rows.get(key)
            if row is not None:
                self._rows.move_to_end(key)
                found[key] = row
            else:
                missing.setdefault(key, text)
        self.misses += len(missing)
        self.hits += len(keys) - len(missing)
        if missing:
            rows = await self.embedder.aembed(list(missing.values()), kind=kind)
            for key, row in zip(missing, rows, strict=True):
                found[key] = self._rows[key] = row
            while len(self._rows) > self.max_entries:
                self._rows.popitem(last=False)
        if not keys:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([found[key] for key in keys]).astype(np.float32, copy=False)


__all__ = ["CachedEmbedder"]
