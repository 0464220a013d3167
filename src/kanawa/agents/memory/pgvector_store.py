"""Long-term memory in PostgreSQL + pgvector through asyncpg (seed 002 §2 "長期 (pgvector)", §6
"asyncpg").

``KANAWA_DATABASE_URL`` (or ``dsn=``) selects it. Opening the store creates what it needs, under an
advisory lock so several processes can open it at once: the ``vector`` extension, the items table, the
seed's ``cos_sim(a, b)`` SQL function and, unless ``index=None``, an HNSW index over cosine distance.

Two search paths, chosen by what the database actually has (re-checked by :meth:`refresh_index`):

- **index** — ``ORDER BY embedding <=> $1 LIMIT k``: an approximate nearest-neighbour scan of the HNSW
  (or IVFFlat) index; ``ef_search`` (default 100) trades speed for recall.
- **brute force** — when no vector index exists, the seed's form (§4 RefAgent): ``SELECT id,
  cos_sim(embedding, $1) … ORDER BY 2 DESC LIMIT k``, an exact scan.

Vectors travel in pgvector's binary format (a codec registered on every pooled connection), so
inserts and results never go through text. An approximate index filters by namespace after the scan,
so a namespace holding a small share of a large table may get fewer than ``k`` hits from the index
path; raise ``ef_search`` or drop the index for such data.
"""

from __future__ import annotations

import json
import os
import re
import struct
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

import numpy as np

from kanawa.agents.memory.embeddings.base import Vectors
from kanawa.agents.memory.store import (
    DEFAULT_NAMESPACE,
    MemoryItem,
    ScoredItem,
    check_batch,
    check_query,
)

if TYPE_CHECKING:
    import asyncpg

DATABASE_URL_ENV = "KANAWA_DATABASE_URL"

IndexKind = Literal["hnsw"]

_IDENTIFIER = re.compile(r"^[a-z_][a-z0-9_]{0,40}$")


class _Packed:
    """A vector already in pgvector's binary format. Array parameters need it: asyncpg would iterate a
    numpy row as nested array elements."""

    __slots__ = ("data",)

    def __init__(self, row: Vectors) -> None:
        self.data = _encode_vector(row)


def _encode_vector(value: object) -> bytes:
    if isinstance(value, _Packed):
        return value.data
    row = np.asarray(value, dtype=">f4").reshape(-1)
    return struct.pack(">HH", row.shape[0], 0) + row.tobytes()


def _decode_vector(data: bytes) -> Vectors:
    dim, _unused = struct.unpack_from(">HH", data)
    return np.frombuffer(data, dtype=">f4", count=dim, offset=4).astype(np.float32)


async def _register_vector(conn: asyncpg.Connection) -> None:
    schema = await conn.fetchval(
        "SELECT n.nspname FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace "
        "WHERE t.typname = 'vector'"
    )
    await conn.set_type_codec(
        "vector", schema=schema, encoder=_encode_vector, decoder=_decode_vector, format="binary"
    )


class PgVectorMemoryStore:
    """A :class:`~kanawa.agents.memory.store.MemoryStore` in PostgreSQL + pgvector.

    Create it with ``await PgVectorMemoryStore.open(dsn, dim=384)``; the constructor only wraps a pool
    that :meth:`open` has prepared.
    """

    def __init__(
        self,
        pool: asyncpg.Pool,
        *,
        dim: int,
        table: str,
        indexed: bool,
    ) -> None:
        self._pool = pool
        self._dim = dim
        self._table = table
        self._indexed = indexed

    @classmethod
    async def open(
        cls,
        dsn: str | None = None,
        *,
        dim: int,
        table: str = "kanawa_memory",
        index: IndexKind | None = "hnsw",
        ef_search: int = 100,
        pool_size: int = 4,
    ) -> PgVectorMemoryStore:
        """Connect, create what is missing (see the module docstring) and return the store.

        Args:
            dsn: a ``postgresql://`` URL; ``None`` reads ``KANAWA_DATABASE_URL``.
            dim: the embedding length (the column is ``vector(dim)``); a table made for another
                length is refused with ``ValueError``.
            table: the items table (a plain lower-case identifier).
            index: ``"hnsw"`` (default) or ``None`` (no index: exact brute-force search). For a bulk
                load, open with ``None``, load, then create the index and :meth:`analyze`. An IVFFlat
                index created by hand is used too (it needs data to build its lists).
            ef_search: HNSW candidates per search (recall vs. speed); IVFFlat probes are a tenth of it.
            pool_size: connections in the pool (seed 002 §6: one connection per agent at least).
        """
        import asyncpg

        url = dsn or os.environ.get(DATABASE_URL_ENV)
        if not url:
            raise ValueError(f"no database: pass dsn= or set {DATABASE_URL_ENV}")
        if dim < 1 or ef_search < 1 or pool_size < 1:
            raise ValueError("dim, ef_search and pool_size must be >= 1")
        if not _IDENTIFIER.match(table):
            raise ValueError(f"table must be a lower-case identifier, not {table!r}")
        conn = await asyncpg.connect(url)
        try:
            await _create_schema(conn, table=table, dim=dim, index=index)
        finally:
            await conn.close()

        # Startup parameters, not SET: the pool runs RESET ALL when a connection is released, which
        # returns to these values but would discard a SET.
        search_settings = {"hnsw.ef_search": str(ef_search), "ivfflat.probes": str(max(1, ef_search // 10))}
        pool = await asyncpg.create_pool(
            url, min_size=1, max_size=pool_size, init=_register_vector, server_settings=search_settings
        )
        store = cls(pool, dim=dim, table=table, indexed=False)
        await store.refresh_index()
        return store

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def table(self) -> str:
        return self._table

    @property
    def indexed(self) -> bool:
        """Whether searches use the vector index (``False``: the brute-force ``cos_sim`` scan)."""
        return self._indexed

    @property
    def search_sql(self) -> str:
        """The statement :meth:`asearch` sends (``$1`` query vector, ``$2`` namespace, ``$3`` k)."""
        if self._indexed:
            return (
                f"SELECT id, 1 - (embedding <=> $1) AS score, namespace, text, metadata "
                f"FROM {self._table} WHERE namespace = $2 ORDER BY embedding <=> $1 LIMIT $3"
            )
        return (
            f"SELECT id, cos_sim(embedding, $1) AS score, namespace, text, metadata "
            f"FROM {self._table} WHERE namespace = $2 ORDER BY 2 DESC LIMIT $3"
        )

    async def refresh_index(self) -> bool:
        """Look again for a vector index on the table (after one was created or dropped elsewhere)."""
        found = await self._pool.fetchval(
            "SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
            "JOIN pg_am a ON a.oid = c.relam "
            "WHERE i.indrelid = $1::regclass AND a.amname IN ('hnsw', 'ivfflat')",
            self._table,
        )
        self._indexed = bool(found)
        return self._indexed

    async def analyze(self) -> None:
        """Refresh the planner's statistics of the table. Call it after a bulk load: until autovacuum
        has analysed the new rows, PostgreSQL may misjudge the namespace filter and scan every row
        instead of using the vector index."""
        await self._pool.execute(f"ANALYZE {self._table}")

    async def add(self, items: Sequence[MemoryItem], vectors: Vectors, hashes: Sequence[str]) -> list[int]:
        check_batch(self._dim, items, vectors, hashes)
        if not items:
            return []
        rows = np.asarray(vectors, dtype=np.float32)
        found = await self._pool.fetch(
            f"INSERT INTO {self._table} (namespace, text, metadata, content_hash, embedding) "
            "SELECT * FROM unnest($1::text[], $2::text[], $3::jsonb[], $4::text[], $5::vector[]) "
            "RETURNING id",
            [item.namespace for item in items],
            [item.text for item in items],
            [json.dumps(dict(item.metadata)) for item in items],
            list(hashes),
            [_Packed(row) for row in rows],
        )
        ids = [int(r["id"]) for r in found]
        return ids

    async def asearch(
        self, vector: Vectors, *, k: int, namespace: str = DEFAULT_NAMESPACE
    ) -> list[ScoredItem]:
        row = check_query(self._dim, vector, k)
        query = self.search_sql
        found = await self._pool.fetch(query, row, namespace, k)
        return [
            ScoredItem(
                MemoryItem(
                    text=r["text"], metadata=json.loads(r["metadata"]), namespace=r["namespace"], id=r["id"]
                ),
                float(r["score"]),
            )
            for r in found
        ]

    async def vectors_for(self, hashes: Sequence[str]) -> dict[str, Vectors]:
        wanted = list(dict.fromkeys(hashes))
        if not wanted:
            return {}
        found = await self._pool.fetch(
            f"SELECT DISTINCT ON (content_hash) content_hash, embedding FROM {self._table} "
            "WHERE content_hash = ANY($1::text[])",
            wanted,
        )
        return {r["content_hash"]: r["embedding"] for r in found}

    async def count(self, *, namespace: str | None = None) -> int:
        if namespace is None:
            value = await self._pool.fetchval(f"SELECT count(*) FROM {self._table}")
        else:
            value = await self._pool.fetchval(
                f"SELECT count(*) FROM {self._table} WHERE namespace = $1", namespace
            )
        return int(value)

    async def aclose(self) -> None:
        await self._pool.close()


async def _create_schema(conn: asyncpg.Connection, *, table: str, dim: int, index: IndexKind | None) -> None:
    """Create the extension, table, ``cos_sim`` and index once, serialised by an advisory lock."""
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(hashtext('kanawa_memory_schema'))")
        await conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        await conn.execute(
            f"CREATE TABLE IF NOT EXISTS {table} ("
            "id bigserial PRIMARY KEY, namespace text NOT NULL, text text NOT NULL, "
            "metadata jsonb NOT NULL DEFAULT '{}', content_hash text NOT NULL, "
            f"embedding vector({dim}) NOT NULL, created_at timestamptz NOT NULL DEFAULT now())"
        )
        existing = await conn.fetchval(
            "SELECT atttypmod FROM pg_attribute WHERE attrelid = $1::regclass AND attname = 'embedding'",
            table,
        )
        if existing != dim:
            raise ValueError(f"table {table} holds {existing}-dimensional embeddings, not {dim}")
        await conn.execute(f"CREATE INDEX IF NOT EXISTS {table}_namespace ON {table} (namespace)")
        await conn.execute(f"CREATE INDEX IF NOT EXISTS {table}_hash ON {table} (content_hash)")
        await conn.execute(
            "CREATE OR REPLACE FUNCTION cos_sim(a vector, b vector) RETURNS double precision "
            "LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS 'SELECT 1 - (a <=> b)'"
        )
        if index is not None:
            await conn.execute(
                f"CREATE INDEX IF NOT EXISTS {table}_embedding_{index} ON {table} "
                f"USING {index} (embedding vector_cosine_ops)"
            )


__all__ = ["DATABASE_URL_ENV", "IndexKind", "PgVectorMemoryStore"]
