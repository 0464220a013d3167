"""Long-term memory in one SQLite file, searched with numpy: the embedded default (DESIGN.md
principle 4, "SQLite/JSON files under ./.kanawa/").

The file is the truth; each namespace's vectors are also held in memory as one float32 matrix so a
search is a single matrix-vector product plus a partial sort (``argpartition``), exact rather than
approximate. Another process writing the same file is noticed through ``PRAGMA data_version`` before
each search, and the cached matrices are reloaded. SQLite calls run in a worker thread, one at a time
per store, so the event loop never blocks on disk; WAL mode and a busy timeout let several processes
write concurrently without losing rows.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from kanawa.agents.memory.embeddings.base import Vectors
from kanawa.agents.memory.store import (
    DEFAULT_NAMESPACE,
    MemoryItem,
    ScoredItem,
    check_batch,
    check_query,
)

DEFAULT_PATH = Path(".kanawa") / "memory.sqlite3"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS memory_items (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    namespace TEXT NOT NULL,
    text TEXT NOT NULL,
    metadata TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    embedding BLOB NOT NULL,
    created_at REAL NOT NULL DEFAULT ((julianday('now') - 2440587.5) * 86400.0)
);
CREATE INDEX IF NOT EXISTS memory_items_namespace ON memory_items (namespace, id);
CREATE INDEX IF NOT EXISTS memory_items_hash ON memory_items (content_hash);
CREATE TABLE IF NOT EXISTS memory_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


class _Matrix:
    """One namespace's ids and embedding rows, grown in chunks and joined on the next search."""

    def __init__(self, ids: npt.NDArray[np.int64], rows: Vectors) -> None:
        self._ids = [ids]
        self._rows = [rows]

    def extend(self, ids: npt.NDArray[np.int64], rows: Vectors) -> None:
        self._ids.append(ids)
        self._rows.append(rows)

    def joined(self) -> tuple[npt.NDArray[np.int64], Vectors]:
        if len(self._rows) > 1:
            self._ids = [np.concatenate(self._ids)]
            self._rows = [np.concatenate(self._rows, axis=0)]
        return self._ids[0], self._rows[0]


class SQLiteMemoryStore:
    """A :class:`~kanawa.agents.memory.store.MemoryStore` in the SQLite file at ``path``.

    Args:
        path: the database file (created with its directory), or ``":memory:"``.
        dim: the embedding length; a file remembers it and refuses another.
    """

    def __init__(self, *, path: str | Path = DEFAULT_PATH, dim: int) -> None:
        if dim < 1:
            raise ValueError("dim must be >= 1")
        self._dim = dim
        self._path = str(path)
        if self._path != ":memory:":
            Path(self._path).parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(self._path, check_same_thread=False, timeout=30.0)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.executescript(_SCHEMA)
        self._check_dim()
        self._matrices: dict[str, _Matrix] = {}
        self._data_version = self._version()

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def path(self) -> str:
        return self._path

    def _check_dim(self) -> None:
        with self._conn:
            self._conn.execute(
                "INSERT OR IGNORE INTO memory_meta (key, value) VALUES ('dim', ?)", (str(self._dim),)
            )
            stored = self._conn.execute("SELECT value FROM memory_meta WHERE key = 'dim'").fetchone()[0]
        if int(stored) != self._dim:
            raise ValueError(f"{self._path} holds {stored}-dimensional embeddings, not {self._dim}")

    def _version(self) -> int:
        return int(self._conn.execute("PRAGMA data_version").fetchone()[0])

    # ---------------------------------------------------------------------------------- writing

    async def add(self, items: Sequence[MemoryItem], vectors: Vectors, hashes: Sequence[str]) -> list[int]:
        check_batch(self._dim, items, vectors, hashes)
        if not items:
            return []
        rows = np.ascontiguousarray(vectors, dtype=np.float32)
        return await asyncio.to_thread(self._add_sync, list(items), rows, list(hashes))

    def _add_sync(self, items: list[MemoryItem], rows: Vectors, hashes: list[str]) -> list[int]:
        with self._lock:
            with self._conn:
                cursor = self._conn.cursor()
                ids: list[int] = []
                for item, row, digest in zip(items, rows, hashes, strict=True):
                    cursor.execute(
                        "INSERT INTO memory_items (namespace, text, metadata, content_hash, embedding) "
                        "VALUES (?, ?, ?, ?, ?)",
                        (item.namespace, item.text, json.dumps(dict(item.metadata)), digest, row.tobytes()),
                    )
                    assert cursor.lastrowid is not None
                    ids.append(cursor.lastrowid)
            if self._version() != self._data_version:  # another connection wrote: reload on next search
                self._matrices.clear()
                self._data_version = self._version()
            by_namespace: dict[str, list[int]] = {}
            for index, item in enumerate(items):
                by_namespace.setdefault(item.namespace, []).append(index)
            for namespace, indices in by_namespace.items():
                matrix = self._matrices.get(namespace)
                if matrix is not None:
                    matrix.extend(np.asarray([ids[i] for i in indices], dtype=np.int64), rows[indices])
        return ids

    # ---------------------------------------------------------------------------------- reading

    async def asearch(
        self, vector: Vectors, *, k: int, namespace: str = DEFAULT_NAMESPACE
    ) -> list[ScoredItem]:
        row = check_query(self._dim, vector, k).astype(np.float32, copy=False)
        return await asyncio.to_thread(self._search_sync, row, k, namespace)

    def _search_sync(self, query: Vectors, k: int, namespace: str) -> list[ScoredItem]:
        with self._lock:
            ids, rows = self._matrix(namespace).joined()
            if not len(ids):
                return []
            scores = rows @ query
            if k < len(scores):
                top = np.argpartition(-scores, k - 1)[:k]
                top = top[np.argsort(-scores[top], kind="stable")]
            else:
                top = np.argsort(-scores, kind="stable")
            chosen = [int(ids[i]) for i in top]
            found = self._fetch(chosen)
        return [ScoredItem(found[item_id], float(scores[i])) for item_id, i in zip(chosen, top, strict=True)]

    def _matrix(self, namespace: str) -> _Matrix:
        version = self._version()
        if version != self._data_version:
            self._matrices.clear()
            self._data_version = version
        matrix = self._matrices.get(namespace)
        if matrix is None:
            cursor = self._conn.execute(
                "SELECT id, embedding FROM memory_items WHERE namespace = ? ORDER BY id", (namespace,)
            )
            found = cursor.fetchall()
            ids = np.fromiter((r[0] for r in found), dtype=np.int64, count=len(found))
            rows = (
                np.frombuffer(b"".join(r[1] for r in found), dtype=np.float32).reshape(-1, self._dim)
                if found
                else np.zeros((0, self._dim), dtype=np.float32)
            )
            matrix = self._matrices[namespace] = _Matrix(ids, rows)
        return matrix

    def _fetch(self, ids: list[int]) -> dict[int, MemoryItem]:
        marks = ",".join("?" * len(ids))
        cursor = self._conn.execute(
            f"SELECT id, namespace, text, metadata FROM memory_items WHERE id IN ({marks})", ids
        )
        return {
            r[0]: MemoryItem(text=r[2], metadata=json.loads(r[3]), namespace=r[1], id=r[0])
            for r in cursor.fetchall()
        }

    async def vectors_for(self, hashes: Sequence[str]) -> dict[str, Vectors]:
        wanted = list(dict.fromkeys(hashes))
        if not wanted:
            return {}
        return await asyncio.to_thread(self._vectors_for_sync, wanted)

    def _vectors_for_sync(self, hashes: list[str]) -> dict[str, Vectors]:
        out: dict[str, Vectors] = {}
        with self._lock:
            for start in range(0, len(hashes), 500):
                chunk = hashes[start : start + 500]
                marks = ",".join("?" * len(chunk))
                cursor = self._conn.execute(
                    f"SELECT content_hash, embedding FROM memory_items WHERE content_hash IN ({marks})",
                    chunk,
                )
                for digest, blob in cursor.fetchall():
                    out.setdefault(digest, np.frombuffer(blob, dtype=np.float32).copy())
        return out

    async def count(self, *, namespace: str | None = None) -> int:
        def run() -> int:
            with self._lock:
                if namespace is None:
                    cursor = self._conn.execute("SELECT count(*) FROM memory_items")
                else:
                    cursor = self._conn.execute(
                        "SELECT count(*) FROM memory_items WHERE namespace = ?", (namespace,)
                    )
                return int(cursor.fetchone()[0])

        return await asyncio.to_thread(run)

    async def aclose(self) -> None:
        with self._lock:
            self._conn.close()
            self._matrices.clear()


__all__ = ["DEFAULT_PATH", "SQLiteMemoryStore"]
