"""Playbooks in one SQLite file (default ``./.kanawa/playbooks.sqlite3``).

One row per dataset holds the playbook's JSON and a version number; :meth:`SQLitePlaybookStore.apply`
reads, merges and writes inside ``BEGIN IMMEDIATE`` — SQLite's write lock — so concurrent curators,
in threads or processes, serialise and lose nothing. Embeddings are rows of ``(model, hash, blob)``.
Each call opens its own connection in a worker thread (WAL mode, busy timeout), so nothing is shared
across threads and nothing stays open.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import closing, contextmanager
from pathlib import Path

import numpy as np

from kanawa.apps.ace.operations import AuditRecord, Operation, apply_operations
from kanawa.apps.ace.playbook import Playbook
from kanawa.apps.ace.store.base import PlaybookStore, Vector, check_dataset

DEFAULT_PATH = Path(".kanawa") / "playbooks.sqlite3"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS ace_playbooks (
    dataset TEXT PRIMARY KEY,
    body TEXT NOT NULL,
    version INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS ace_vectors (
    model TEXT NOT NULL,
    hash TEXT NOT NULL,
    row BLOB NOT NULL,
    PRIMARY KEY (model, hash)
);
"""


class SQLitePlaybookStore(PlaybookStore):
    """Playbooks and their embeddings in the SQLite file at ``path``."""

    def __init__(self, *, path: str | Path = DEFAULT_PATH) -> None:
        self.path = Path(path)
        self._ready = False

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with closing(sqlite3.connect(self.path, timeout=30.0, isolation_level=None)) as conn:
            if not self._ready:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.executescript(_SCHEMA)
                self._ready = True
            yield conn

    @staticmethod
    def _read(conn: sqlite3.Connection, dataset: str) -> Playbook:
        row = conn.execute("SELECT body FROM ace_playbooks WHERE dataset = ?", (dataset,)).fetchone()
        return Playbook() if row is None else Playbook.model_validate_json(row[0])

    @staticmethod
    def _write(conn: sqlite3.Connection, dataset: str, playbook: Playbook) -> None:
        conn.execute(
            "INSERT INTO ace_playbooks (dataset, body, version) VALUES (?, ?, 1) "
            "ON CONFLICT (dataset) DO UPDATE SET body = excluded.body, version = version + 1",
            (dataset, playbook.model_dump_json()),
        )

    async def aload(self, dataset: str) -> Playbook:
        check_dataset(dataset)

        def load() -> Playbook:
            with self._connect() as conn:
                return self._read(conn, dataset)

        return await asyncio.to_thread(load)

    async def asave(self, dataset: str, playbook: Playbook) -> None:
        check_dataset(dataset)

        def save() -> None:
            with self._connect() as conn:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    self._write(conn, dataset, playbook)
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
                conn.execute("COMMIT")

        await asyncio.to_thread(save)

    async def aapply(self, dataset: str, operations: Sequence[Operation]) -> list[AuditRecord]:
        check_dataset(dataset)

        def apply() -> list[AuditRecord]:
            with self._connect() as conn:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    playbook, audit = apply_operations(self._read(conn, dataset), operations)
                    self._write(conn, dataset, playbook)
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
                conn.execute("COMMIT")
                return audit

        return await asyncio.to_thread(apply)

    async def datasets(self) -> list[str]:
        def datasets() -> list[str]:
            with self._connect() as conn:
                return [row[0] for row in conn.execute("SELECT dataset FROM ace_playbooks ORDER BY dataset")]

        return await asyncio.to_thread(datasets)

    async def load_vectors(self, model: str, hashes: Sequence[str]) -> dict[str, Vector]:
        def load() -> dict[str, Vector]:
            found: dict[str, Vector] = {}
            with self._connect() as conn:
                for start in range(0, len(hashes), 500):
                    chunk = list(hashes[start : start + 500])
                    marks = ",".join("?" * len(chunk))
                    for key, blob in conn.execute(
                        f"SELECT hash, row FROM ace_vectors WHERE model = ? AND hash IN ({marks})",
                        (model, *chunk),
                    ):
                        found[key] = np.frombuffer(blob, dtype=np.float32).copy()
            return found

        return await asyncio.to_thread(load)

    async def save_vectors(self, model: str, vectors: Mapping[str, Vector]) -> None:
        def save() -> None:
            with self._connect() as conn:
                conn.execute("BEGIN IMMEDIATE")
                conn.executemany(
                    "INSERT OR REPLACE INTO ace_vectors (model, hash, row) VALUES (?, ?, ?)",
                    [
                        (model, key, np.asarray(row, dtype=np.float32).tobytes())
                        for key, row in vectors.items()
                    ],
                )
                conn.execute("COMMIT")

        if vectors:
            await asyncio.to_thread(save)


__all__ = ["DEFAULT_PATH", "SQLitePlaybookStore"]
