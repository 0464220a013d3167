"""Playbooks in PostgreSQL + pgvector through asyncpg, for shared deployments (``postgresql://…`` or
``KANAWA_DATABASE_URL``).

Tables (names start with ``prefix``, default ``ace``):

- ``<prefix>_playbooks (dataset, sections, prefixes, next_counter, version)`` — one row per dataset;
- ``<prefix>_bullets (dataset, id, position, section, content, counters, timestamps)``;
- ``<prefix>_vectors (model, hash, embedding vector)`` — bullet embeddings by content hash, in
  pgvector's binary format (the codec of :mod:`kanawa.agents.memory.pgvector_store`).

:meth:`PgPlaybookStore.apply` is one transaction: it locks the dataset's row (``SELECT … FOR UPDATE``),
reads the bullets, merges the operations with the same pure function every store uses, and writes only
what changed. Two curators applying at once therefore serialise on that row: the second sees the
first's bullets and counters, so nothing is lost and no id is handed out twice.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Self

import numpy as np

from kanawa.agents.memory.pgvector_store import _Packed, _register_vector
from kanawa.apps.ace.operations import AuditRecord, Operation, apply_operations
from kanawa.apps.ace.playbook import Bullet, Playbook
from kanawa.apps.ace.store.base import PlaybookStore, Vector, check_dataset

if TYPE_CHECKING:
    import asyncpg

_IDENTIFIER = re.compile(r"^[a-z_][a-z0-9_]{0,30}$")


class PgPlaybookStore(PlaybookStore):
    """Create it with ``await PgPlaybookStore.open(dsn)``; close it with ``await store.aclose()``."""

    def __init__(self, pool: asyncpg.Pool, *, prefix: str = "ace") -> None:
        self._pool = pool
        self._prefix = prefix

    @classmethod
    async def open(cls, dsn: str, *, prefix: str = "ace", pool_size: int = 4) -> Self:
        """Connect, create the extension and tables (under an advisory lock) and return the store."""
        import asyncpg

        if not _IDENTIFIER.match(prefix):
            raise ValueError(f"table prefix {prefix!r} must be a lowercase SQL identifier")
        pool = await asyncpg.create_pool(dsn, min_size=1, max_size=pool_size, init=_init_connection)
        try:
            async with pool.acquire() as conn:
                await _create_schema(conn, prefix)
        except BaseException:
            await pool.close()
            raise
        return cls(pool, prefix=prefix)

    async def aclose(self) -> None:
        await self._pool.close()

    async def aload(self, dataset: str) -> Playbook:
        check_dataset(dataset)
        async with self._pool.acquire() as conn:
            return await self._read(conn, dataset)

    async def _read(self, conn: asyncpg.Connection, dataset: str) -> Playbook:
        p = self._prefix
        head = await conn.fetchrow(
            f"SELECT sections, prefixes, next_counter FROM {p}_playbooks WHERE dataset = $1", dataset
        )
        if head is None:
            return Playbook()
        rows = await conn.fetch(
            f"SELECT id, section, content, helpful, harmful, neutral, created_at, updated_at "
            f"FROM {p}_bullets WHERE dataset = $1 ORDER BY position",
            dataset,
        )
        return Playbook(
            bullets=[Bullet.model_validate(dict(row)) for row in rows],
            sections=json.loads(head["sections"]),
            prefixes=json.loads(head["prefixes"]),
            next_counter=head["next_counter"],
        )

    async def _write(
        self, conn: asyncpg.Connection, dataset: str, old: Playbook, new: Playbook, *, replace: bool
    ) -> None:
        p = self._prefix
        await conn.execute(
            f"INSERT INTO {p}_playbooks (dataset, sections, prefixes, next_counter, version) "
            "VALUES ($1, $2, $3, $4, 1) ON CONFLICT (dataset) DO UPDATE SET sections = excluded.sections, "
            f"prefixes = excluded.prefixes, next_counter = excluded.next_counter, "
            f"version = {p}_playbooks.version + 1",
            dataset,
            json.dumps(new.sections),
            json.dumps(new.prefixes),
            new.next_counter,
        )
        if replace:
            await conn.execute(f"DELETE FROM {p}_bullets WHERE dataset = $1", dataset)
            previous: dict[str, tuple[int, Bullet]] = {}
        else:
            previous = {b.id: (i, b) for i, b in enumerate(old.bullets)}
            gone = [bullet_id for bullet_id in previous if bullet_id not in new]
            if gone:
                await conn.execute(
                    f"DELETE FROM {p}_bullets WHERE dataset = $1 AND id = ANY($2::text[])", dataset, gone
                )
        changed = [(i, b) for i, b in enumerate(new.bullets) if previous.get(b.id) != (i, b)]
        if changed:
            await conn.executemany(
                f"INSERT INTO {p}_bullets (dataset, id, position, section, content, helpful, harmful, "
                "neutral, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) "
                "ON CONFLICT (dataset, id) DO UPDATE SET position = excluded.position, "
                "section = excluded.section, content = excluded.content, helpful = excluded.helpful, "
                "harmful = excluded.harmful, "
                "neutral = excluded.neutral, updated_at = excluded.updated_at",
                [
                    (
                        dataset,
                        b.id,
                        i,
                        b.section,
                        b.content,
                        b.helpful,
                        b.harmful,
                        b.neutral,
                        b.created_at,
                        b.updated_at,
                    )
                    for i, b in changed
                ],
            )

    async def _lock(self, conn: asyncpg.Connection, dataset: str) -> None:
        p = self._prefix
        await conn.execute(
            f"INSERT INTO {p}_playbooks (dataset, sections, prefixes, next_counter, version) "
            "VALUES ($1, '[]', '{}', 1, 0) ON CONFLICT (dataset) DO NOTHING",
            dataset,
        )
        await conn.execute(f"SELECT 1 FROM {p}_playbooks WHERE dataset = $1 FOR UPDATE", dataset)

    async def asave(self, dataset: str, playbook: Playbook) -> None:
        check_dataset(dataset)
        async with self._pool.acquire() as conn, conn.transaction():
            await self._lock(conn, dataset)
            await self._write(conn, dataset, Playbook(), playbook, replace=True)

    async def aapply(self, dataset: str, operations: Sequence[Operation]) -> list[AuditRecord]:
        check_dataset(dataset)
        async with self._pool.acquire() as conn, conn.transaction():
            await self._lock(conn, dataset)
            old = await self._read(conn, dataset)
            new, audit = apply_operations(old, operations)
            await self._write(conn, dataset, old, new, replace=False)
            return audit

    async def datasets(self) -> list[str]:
        rows = await self._pool.fetch(
            f"SELECT dataset FROM {self._prefix}_playbooks WHERE version > 0 ORDER BY dataset"
        )
        return [row["dataset"] for row in rows]

    async def load_vectors(self, model: str, hashes: Sequence[str]) -> dict[str, Vector]:
        if not hashes:
            return {}
        rows = await self._pool.fetch(
            f"SELECT hash, embedding FROM {self._prefix}_vectors WHERE model = $1 AND hash = ANY($2::text[])",
            model,
            list(dict.fromkeys(hashes)),
        )
        return {row["hash"]: np.asarray(row["embedding"], dtype=np.float32) for row in rows}

    async def save_vectors(self, model: str, vectors: Mapping[str, Vector]) -> None:
        if not vectors:
            return
        await self._pool.executemany(
            f"INSERT INTO {self._prefix}_vectors (model, hash, embedding) VALUES ($1, $2, $3) "
            "ON CONFLICT (model, hash) DO NOTHING",
            [(model, key, _Packed(np.asarray(row, dtype=np.float32))) for key, row in vectors.items()],
        )


async def _init_connection(conn: asyncpg.Connection) -> None:
    try:
        await _register_vector(conn)
    except Exception:  # the extension does not exist yet on the very first connection
        return


async def _create_schema(conn: asyncpg.Connection, prefix: str) -> None:
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(hashtext('kanawa_ace_schema'))")
        await conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        await conn.execute(
            f"CREATE TABLE IF NOT EXISTS {prefix}_playbooks (dataset text PRIMARY KEY, "
            "sections text NOT NULL, prefixes text NOT NULL, next_counter integer NOT NULL, "
            "version bigint NOT NULL)"
        )
        await conn.execute(
            f"CREATE TABLE IF NOT EXISTS {prefix}_bullets (dataset text NOT NULL, id text NOT NULL, "
            "position integer NOT NULL, section text NOT NULL, content text NOT NULL, "
            "helpful integer NOT NULL, harmful integer NOT NULL, neutral integer NOT NULL, "
            "created_at timestamptz NOT NULL, updated_at timestamptz NOT NULL, PRIMARY KEY (dataset, id))"
        )
        await conn.execute(
            f"CREATE TABLE IF NOT EXISTS {prefix}_vectors (model text NOT NULL, hash text NOT NULL, "
            "embedding vector NOT NULL, PRIMARY KEY (model, hash))"
        )
    await _register_vector(conn)


__all__ = ["PgPlaybookStore"]
