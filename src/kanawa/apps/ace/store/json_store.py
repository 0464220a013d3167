"""Playbooks as JSON files: ``<root>/<dataset>.json`` (default root ``./.kanawa/playbooks/``).

Each write goes to a temporary file that is renamed over the old one, so a reader never sees half a
playbook. :meth:`JsonPlaybookStore.apply` holds an exclusive ``flock`` on ``<dataset>.lock`` while it
reads, merges and writes, so concurrent curators — threads or processes — serialise and lose nothing.
Embeddings live in ``<root>/vectors/<model-hash>.npz`` (content hash → row).
"""

from __future__ import annotations

import asyncio
import fcntl
import hashlib
import os
import tempfile
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import numpy as np

from kanawa.apps.ace.operations import AuditRecord, Operation, apply_operations
from kanawa.apps.ace.playbook import Playbook
from kanawa.apps.ace.store.base import DEFAULT_DIR, PlaybookStore, Vector, check_dataset


class JsonPlaybookStore(PlaybookStore):
    """JSON files under ``root``; file I/O runs in a worker thread."""

    def __init__(self, *, root: str | Path = DEFAULT_DIR) -> None:
        self.root = Path(root)
        self._vector_lock = threading.Lock()

    def _path(self, dataset: str) -> Path:
        return self.root / f"{check_dataset(dataset)}.json"

    def _locked(self, dataset: str) -> AbstractContextManager[None]:
        return _flocked(self.root / f"{check_dataset(dataset)}.lock")

    def _read(self, dataset: str) -> Playbook:
        path = self._path(dataset)
        if not path.is_file():
            return Playbook()
        return Playbook.model_validate_json(path.read_bytes())

    def _write(self, dataset: str, playbook: Playbook) -> None:
        _atomic_write(self._path(dataset), playbook.model_dump_json(indent=1).encode("utf-8"))

    async def aload(self, dataset: str) -> Playbook:
        return await asyncio.to_thread(self._read, dataset)

    async def asave(self, dataset: str, playbook: Playbook) -> None:
        def save() -> None:
            with self._locked(dataset):
                self._write(dataset, playbook)

        await asyncio.to_thread(save)

    async def aapply(self, dataset: str, operations: Sequence[Operation]) -> list[AuditRecord]:
        def apply() -> list[AuditRecord]:
            with self._locked(dataset):
                playbook, audit = apply_operations(self._read(dataset), operations)
                self._write(dataset, playbook)
                return audit

        return await asyncio.to_thread(apply)

    async def datasets(self) -> list[str]:
        if not self.root.is_dir():
            return []
        return sorted(path.stem for path in self.root.glob("*.json"))

    def _vector_path(self, model: str) -> Path:
        return self.root / "vectors" / f"{hashlib.sha256(model.encode()).hexdigest()[:16]}.npz"

    def _read_vectors(self, model: str) -> dict[str, Vector]:
        path = self._vector_path(model)
        if not path.is_file():
            return {}
        with np.load(path, allow_pickle=False) as data:
            keys = [str(key) for key in data["keys"]]
            rows = data["rows"].astype(np.float32, copy=False)
        return dict(zip(keys, rows, strict=True))

    async def load_vectors(self, model: str, hashes: Sequence[str]) -> dict[str, Vector]:
        def load() -> dict[str, Vector]:
            with self._vector_lock:
                known = self._read_vectors(model)
            return {key: known[key] for key in hashes if key in known}

        return await asyncio.to_thread(load)

    async def save_vectors(self, model: str, vectors: Mapping[str, Vector]) -> None:
        if not vectors:
            return

        def save() -> None:
            with self._vector_lock, _flocked(self._vector_path(model).with_suffix(".lock")):
                known = self._read_vectors(model)
                known.update(vectors)
                keys = np.array(list(known), dtype=np.str_)
                rows = np.stack(list(known.values())).astype(np.float32)
                path = self._vector_path(model)
                path.parent.mkdir(parents=True, exist_ok=True)
                fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp.npz")
                with os.fdopen(fd, "wb") as handle:
                    np.savez(handle, keys=keys, rows=rows)
                os.replace(tmp, path)

        await asyncio.to_thread(save)


@contextmanager
def _flocked(path: Path) -> Iterator[None]:
    """An exclusive ``flock`` on ``path`` (created if missing) for the duration of the block."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


__all__ = ["JsonPlaybookStore"]
