"""The ``PlaybookStore`` contract: playbooks keyed by dataset, changed only through atomic deltas.

Every backend offers the same five calls, all awaited:

- ``aload(dataset)`` — the playbook (an empty one when the dataset has none yet);
- ``asave(dataset, playbook)`` — replace it whole (import);
- ``aapply(dataset, operations)`` — run :func:`~kanawa.apps.ace.operations.apply_operations` under the
  backend's lock or transaction and persist the result, returning the audit. Reading, merging and
  writing happen as one step, so two curators applying deltas to one playbook at the same time both
  land (new ids come from the counter inside the lock; tags add up);
- ``load_vectors`` / ``save_vectors`` — embeddings of bullet texts keyed by model and content hash,
  stored with the playbooks so a warm search never re-embeds.

Backends: :class:`~kanawa.apps.ace.store.json_store.JsonPlaybookStore` (files under
``./.kanawa/playbooks/``, the default), :class:`~kanawa.apps.ace.store.sqlite_store.SQLitePlaybookStore`
and :class:`~kanawa.apps.ace.store.pg_store.PgPlaybookStore` (PostgreSQL + pgvector via asyncpg).
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Final, Self

import numpy as np
import numpy.typing as npt

from kanawa.apps.ace.operations import AuditRecord, Operation
from kanawa.apps.ace.playbook import Playbook

Vector = npt.NDArray[np.float32]
DEFAULT_DIR: Final = Path(".kanawa") / "playbooks"
_DATASET: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def check_dataset(dataset: str) -> str:
    """Dataset names become file names and keys: letters, digits, ``_ . -``, at most 64 characters."""
    if not isinstance(dataset, str) or not _DATASET.match(dataset) or ".." in dataset:
        raise ValueError(
            f"dataset name {dataset!r} is not valid: use letters, digits, '_', '.', '-' (at most 64)"
        )
    return dataset


class PlaybookStore(ABC):
    """Playbooks keyed by dataset name (see the module docstring for the contract)."""

    @abstractmethod
    async def aload(self, dataset: str) -> Playbook: ...

    @abstractmethod
    async def asave(self, dataset: str, playbook: Playbook) -> None: ...

    @abstractmethod
    async def aapply(self, dataset: str, operations: Sequence[Operation]) -> list[AuditRecord]: ...

    @abstractmethod
    async def datasets(self) -> list[str]: ...

    @abstractmethod
    async def load_vectors(self, model: str, hashes: Sequence[str]) -> dict[str, Vector]: ...

    @abstractmethod
    async def save_vectors(self, model: str, vectors: Mapping[str, Vector]) -> None: ...

    async def aclose(self) -> None:
        """Release connections (files need nothing)."""
        return None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


__all__ = ["DEFAULT_DIR", "PlaybookStore", "Vector", "check_dataset"]
