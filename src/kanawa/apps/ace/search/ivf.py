"""An inverted-file (IVF) index for the dense leg of large playbooks.

Scoring every bullet is one matrix-vector product; at 100k bullets × 384 dimensions that product reads
150 MB per query and is bound by memory bandwidth (about 10 ms on a quiet 2-core machine, more on a
busy one). Above ``SearchSettings.ivf_threshold`` bullets the dense leg instead clusters the
embeddings into ``√n`` lists (k-means on a sample, a few rounds, seeded: the same playbook always gives
the same index), keeps each list's rows contiguous, and at query time scores only the ``probe`` lists
whose centroids are nearest the query — a few percent of the rows. Results are approximate; the
benchmark reports recall against the exact product, and smaller playbooks keep exact search.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

Matrix = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class IvfIndex:
    centroids: Matrix
    rows: Matrix
    positions: npt.NDArray[np.int64]
    offsets: npt.NDArray[np.int64]

    @classmethod
    def build(
        cls, matrix: Matrix, *, lists: int | None = None, sample: int = 20_000, rounds: int = 4
    ) -> IvfIndex:
        """Cluster ``matrix`` (unit rows) into ``lists`` lists (default ``√n``)."""
        n = len(matrix)
        count = max(1, min(n, lists or int(math.sqrt(n))))
        rng = np.random.default_rng(0)
        train = matrix[rng.choice(n, size=min(n, sample), replace=False)] if n > sample else matrix
        centroids = train[rng.choice(len(train), size=count, replace=False)].copy()
        for _ in range(rounds):
            assign = _nearest(train, centroids)
            sums = np.zeros_like(centroids)
            np.add.at(sums, assign, train)
            counts = np.bincount(assign, minlength=count)
            filled = counts > 0
            sums[filled] /= counts[filled, None]
            norms = np.linalg.norm(sums, axis=1, keepdims=True)
            norms[norms == 0] = 1.0
            centroids = np.where(filled[:, None], sums / norms, centroids).astype(np.float32)
        assign = _nearest(matrix, centroids)
        order = np.argsort(assign, kind="stable")
        offsets = np.zeros(count + 1, dtype=np.int64)
        offsets[1:] = np.cumsum(np.bincount(assign, minlength=count))
        return cls(centroids, np.ascontiguousarray(matrix[order]), order.astype(np.int64), offsets)

    def derive(self, old_to_new: npt.NDArray[np.int64], matrix: Matrix, added: list[int]) -> IvfIndex:
        """The lists for the next playbook (``matrix`` in its bullet order): surviving rows keep their
        list under their new position, added rows join their nearest centroid's list. The centroids are
        kept, so after many changes the lists drift from a fresh clustering (recall is measured)."""
        count = len(self.centroids)
        clusters = np.repeat(np.arange(count, dtype=np.int64), np.diff(self.offsets))
        where = old_to_new[self.positions]
        keep = where >= 0
        positions = np.concatenate([where[keep], np.asarray(added, dtype=np.int64)])
        extra = _nearest(matrix[added], self.centroids) if added else np.zeros(0, dtype=np.int64)
        assign = np.concatenate([clusters[keep], extra])
        order = np.argsort(assign, kind="stable")
        offsets = np.zeros(count + 1, dtype=np.int64)
        offsets[1:] = np.cumsum(np.bincount(assign, minlength=count))
        positions = positions[order]
        return IvfIndex(self.centroids, np.ascontiguousarray(matrix[positions]), positions, offsets)

    def scores(self, vector: Matrix, *, probe: int) -> tuple[npt.NDArray[np.int64], Matrix]:
        """(positions, cosine scores) of the rows in the ``probe`` lists nearest ``vector``."""
        near = self.centroids @ vector
        probe = min(probe, len(near))
        chosen = np.argpartition(-near, probe - 1)[:probe] if probe < len(near) else np.arange(len(near))
        positions, values = [], []
        for cluster in np.sort(chosen):
            start, end = self.offsets[cluster], self.offsets[cluster + 1]
            if end > start:
                positions.append(self.positions[start:end])
                values.append(self.rows[start:end] @ vector)
        if not positions:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        return np.concatenate(positions), np.concatenate(values).astype(np.float32, copy=False)


def _nearest(rows: Matrix, centroids: Matrix, *, chunk: int = 8192) -> npt.NDArray[np.int64]:
    out = np.empty(len(rows), dtype=np.int64)
    for start in range(0, len(rows), chunk):
        out[start : start + chunk] = np.argmax(rows[start : start + chunk] @ centroids.T, axis=1)
    return out


__all__ = ["IvfIndex"]
