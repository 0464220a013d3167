"""Long-term memory items and the store contract both backends keep (seed 002 §2 "長期 (pgvector)").

A store holds :class:`MemoryItem` s with one embedding each and answers "the ``k`` items nearest to this
vector" by cosine similarity, highest first. Embeddings arrive L2-normalised (see
:mod:`kanawa.agents.memory.embeddings.base`), so cosine similarity is a dot product. Each item also
keeps the content hash of its embedding: :meth:`MemoryStore.vectors_for` turns the store into an
embedding cache, so content seen before is never embedded again.

Items live in *namespaces* (a user, a project, an agent …); searches never cross them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import Protocol, runtime_checkable

from kanawa.agents.memory.embeddings.base import Vectors
from kanawa.types import JsonValue

DEFAULT_NAMESPACE = "default"


@dataclass(frozen=True, slots=True)
class MemoryItem:
    """One remembered text. ``id`` is assigned by the store (``None`` before it is added)."""

    text: str
    _: KW_ONLY
    metadata: Mapping[str, JsonValue] = field(default_factory=dict)
    namespace: str = DEFAULT_NAMESPACE
    id: int | None = None


@dataclass(frozen=True, slots=True)
class ScoredItem:
    """A search hit: the item and its cosine similarity to the query (-1 … 1)."""

    item: MemoryItem
    score: float


@runtime_checkable
class MemoryStore(Protocol):
    """Where long-term memory lives: :class:`~kanawa.agents.memory.sqlite_store.SQLiteMemoryStore`
    (embedded default) or :class:`~kanawa.agents.memory.pgvector_store.PgVectorMemoryStore`.

    Contract: ``add`` is atomic per call and safe to call concurrently (from tasks, threads or
    processes sharing the database): nothing added is lost. ``asearch`` returns at most ``k`` hits of
    ``namespace`` ordered by score, highest first. ``dim`` is the embedding length; vectors of another
    length are refused with ``ValueError``.
    """

    @property
    def dim(self) -> int: ...

    async def add(self, items: Sequence[MemoryItem], vectors: Vectors, hashes: Sequence[str]) -> list[int]:
        """Store ``items`` with their embedding rows and content hashes; return their new ids."""
        ...

    async def asearch(
        self, vector: Vectors, *, k: int, namespace: str = DEFAULT_NAMESPACE
    ) -> list[ScoredItem]:
        """The ``k`` items of ``namespace`` most similar to ``vector`` (one row or a 1-d array)."""
        ...

    async def vectors_for(self, hashes: Sequence[str]) -> dict[str, Vectors]:
        """Stored embeddings by content hash (1-d rows), for the hashes the store knows."""
        ...

    async def count(self, *, namespace: str | None = None) -> int:
        """Items in ``namespace`` (all namespaces with ``None``)."""
        ...

    async def aclose(self) -> None:
        """Release connections; the store cannot be used afterwards."""
        ...


def check_batch(dim: int, items: Sequence[MemoryItem], vectors: Vectors, hashes: Sequence[str]) -> None:
    """Raise ``ValueError`` unless there is one ``dim``-long row and one hash per item."""
    if vectors.ndim != 2 or vectors.shape[0] != len(items) or len(hashes) != len(items):
        raise ValueError(
            f"need one embedding row and one hash per item: {len(items)} items, "
            f"vectors of shape {vectors.shape}, {len(hashes)} hashes"
        )
    if len(items) and vectors.shape[1] != dim:
        raise ValueError(f"embeddings have {vectors.shape[1]} dimensions; this store holds {dim}")


def check_query(dim: int, vector: Vectors, k: int) -> Vectors:
    """``vector`` as a 1-d float32 row of length ``dim``; ``ValueError`` otherwise or for ``k < 1``."""
    if k < 1:
        raise ValueError("k must be >= 1")
    row = vector.reshape(-1)
    if row.shape[0] != dim:
        raise ValueError(f"the query has {row.shape[0]} dimensions; this store holds {dim}")
    return row


__all__ = ["DEFAULT_NAMESPACE", "MemoryItem", "MemoryStore", "ScoredItem", "check_batch", "check_query"]
