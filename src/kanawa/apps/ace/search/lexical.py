"""The BM25 leg's index: postings that a Curator's change updates in place of a rebuild.

``bm25s`` precomputes every (token, bullet) score with the corpus's IDF and average length baked in,
so any change to the playbook meant rebuilding it (7.3 s at 100k bullets). :class:`Bm25Index` keeps
raw term frequencies instead — one array of positions and one of counts per token, stored together
and sorted by token id (a CSC layout) — and computes IDF and length normalisation when a query comes.
:meth:`Bm25Index.derive` makes the index of the next playbook from the last one: surviving bullets'
postings are renumbered with one vectorised remap, only added or edited bullets are counted, and the
result is exactly the index a fresh :meth:`Bm25Index.build` would give (a test checks it).

Scores follow Lucene's BM25 (the variant bm25s uses): ``idf · tf / (tf + k1 · (1 − b + b · dl/avgdl))``
with ``idf = ln(1 + (N − df + 0.5) / (df + 0.5))``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

Positions = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class Bm25Index:
    vocab: dict[str, int]
    indptr: npt.NDArray[np.int64]
    positions: Positions
    counts: npt.NDArray[np.float32]
    lengths: npt.NDArray[np.float32]
    k1: float = 1.2
    b: float = 0.75

    @classmethod
    def build(cls, documents: Sequence[Sequence[str]], *, k1: float = 1.2, b: float = 0.75) -> Bm25Index:
        """The index of ``documents`` (token lists, in bullet order)."""
        empty = cls(
            {},
            np.zeros(1, dtype=np.int64),
            np.zeros(0, dtype=np.int64),
            np.zeros(0, dtype=np.float32),
            np.zeros(0, dtype=np.float32),
            k1,
            b,
        )
        return empty.derive(np.zeros(0, dtype=np.int64), dict(enumerate(documents)), len(documents))

    def derive(self, old_to_new: Positions, added: Mapping[int, Sequence[str]], length: int) -> Bm25Index:
        """The index of the next playbook: ``old_to_new[i]`` is where old bullet ``i`` now sits (``-1``
        when it was removed or edited), ``added`` the token lists of the bullets at new positions."""
        vocab = dict(self.vocab)
        token_ids = np.repeat(np.arange(len(self.vocab), dtype=np.int64), np.diff(self.indptr))
        positions = old_to_new[self.positions] if len(self.positions) else self.positions
        keep = positions >= 0
        token_ids, positions, counts = token_ids[keep], positions[keep], self.counts[keep]
        lengths = np.zeros(length, dtype=np.float32)
        moved = old_to_new >= 0
        lengths[old_to_new[moved]] = self.lengths[moved]
        new_tokens: list[int] = []
        new_positions: list[int] = []
        new_counts: list[int] = []
        for position, tokens in added.items():
            lengths[position] = len(tokens)
            for token, count in Counter(tokens).items():
                new_tokens.append(vocab.setdefault(token, len(vocab)))
                new_positions.append(position)
                new_counts.append(count)
        if new_tokens:
            token_ids = np.concatenate([token_ids, np.asarray(new_tokens, dtype=np.int64)])
            positions = np.concatenate([positions, np.asarray(new_positions, dtype=np.int64)])
            counts = np.concatenate([counts, np.asarray(new_counts, dtype=np.float32)])
        order = np.argsort(token_ids, kind="stable")
        indptr = np.zeros(len(vocab) + 1, dtype=np.int64)
        indptr[1:] = np.cumsum(np.bincount(token_ids, minlength=len(vocab)))
        return Bm25Index(vocab, indptr, positions[order], counts[order], lengths, self.k1, self.b)

    def __len__(self) -> int:
        return len(self.lengths)

    def document_frequency(self, token: str) -> int:
        """How many bullets contain ``token``."""
        token_id = self.vocab.get(token)
        return 0 if token_id is None else int(self.indptr[token_id + 1] - self.indptr[token_id])

    def get_scores(self, query_tokens: Sequence[str]) -> npt.NDArray[np.float32]:
        """BM25 score of every bullet for ``query_tokens`` (0 for bullets sharing none)."""
        n = len(self.lengths)
        scores = np.zeros(n, dtype=np.float32)
        if n == 0:
            return scores
        average = float(self.lengths.mean()) or 1.0
        for token in query_tokens:
            token_id = self.vocab.get(token)
            if token_id is None:
                continue
            start, end = int(self.indptr[token_id]), int(self.indptr[token_id + 1])
            df = end - start
            if df == 0:
                continue
            idf = np.log(1.0 + (n - df + 0.5) / (df + 0.5))
            where = self.positions[start:end]
            tf = self.counts[start:end]
            norm = self.k1 * (1.0 - self.b + self.b * self.lengths[where] / average)
            scores[where] += (idf * tf / (tf + norm)).astype(np.float32)
        return scores


__all__ = ["Bm25Index"]
