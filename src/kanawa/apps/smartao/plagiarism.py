"""GuardAgent's ``plagiarism_check`` (seed 002 §4: 0.28–0.4 → warn, > 0.4 → block; issue 12 part 5).

The story of one check of an essay against a corpus of prior essays and sources:

1. **Normalise** (:func:`normalize`): NFKC character by character (full-width ``ＡＢＣ１２３`` and
   half-width kana fold to one form), lower case, whitespace dropped; a map keeps each normalised
   character's offset in the essay so passages point at the text the student wrote.
2. **Shingle**: the set of character ``n``-grams (default 5: Japanese has no spaces to split words on).
3. **Candidates**: a corpus of at most :data:`LSH_MIN_CORPUS` documents is compared in full; a larger one
   is indexed in a MinHash LSH Ensemble (``datasketch``), which finds documents whose *containment* of
   the essay may reach :data:`CANDIDATE_THRESHOLD`, so a 10k-essay corpus costs a few exact comparisons.
4. **Score** each candidate exactly: containment ``|E ∩ D| / |E|`` (how much of the essay is in the
   document — the score the thresholds apply to) and Jaccard ``|E ∩ D| / |E ∪ D|`` alongside.
5. **Verdict** on the best score (:func:`verdict`), and **passages**: the maximal runs of the essay whose
   shingles all occur in that document, as essay offsets, so a page can highlight them.

Shingles catch copying and light editing; a genuine paraphrase shares few 5-grams and passes — that is
the method's known limit, and the constructed test cases document it.
"""

from __future__ import annotations

import unicodedata
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

WARN_AT = 0.28
"""Seed 002 §4: a containment from 0.28 up to 0.4 warns."""
BLOCK_ABOVE = 0.4
"""Seed 002 §4: a containment above 0.4 blocks."""
SHINGLE = 5
LSH_MIN_CORPUS = 500
"""Corpora larger than this are searched through MinHash LSH instead of compared in full."""
CANDIDATE_THRESHOLD = 0.2
"""The LSH Ensemble's containment threshold: below the warn line, so near misses still get scored."""
NUM_PERM = 128

Verdict = Literal["pass", "warn", "block"]


def verdict(score: float) -> Verdict:
    """Seed 002 §4 thresholds: ``> 0.4`` block, ``0.28 … 0.4`` warn, else pass."""
    if score > BLOCK_ABOVE:
        return "block"
    if score >= WARN_AT:
        return "warn"
    return "pass"


def normalize(text: str) -> tuple[str, list[int]]:
    """``text`` NFKC-normalised per character, lower-cased, without whitespace; and for each character
    of the result, the offset of the character it came from."""
    out: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(text):
        folded = unicodedata.normalize("NFKC", char).lower()
        for piece in folded:
            if not piece.isspace():
                out.append(piece)
                origin.append(index)
    return "".join(out), origin


def shingles(normalised: str, n: int = SHINGLE) -> set[str]:
    """The set of ``n``-character shingles (the whole text when shorter than ``n``)."""
    if len(normalised) <= n:
        return {normalised} if normalised else set()
    return {normalised[i : i + n] for i in range(len(normalised) - n + 1)}


class SourceDocument(BaseModel):
    """One document of the corpus: a prior essay or a published source."""

    id: str
    title: str = ""
    text: str


class Passage(BaseModel):
    """A run of the essay found in a document: ``essay[start:end]`` (essay offsets) and the text."""

    start: int
    end: int
    text: str


class Match(BaseModel):
    """How much of the essay one document contains, with the matching passages."""

    source_id: str
    title: str
    containment: float
    jaccard: float
    passages: list[Passage]


class PlagiarismReport(BaseModel):
    """The check's answer: the best ``score`` (containment), its ``jaccard``, the ``verdict`` and the
    documents over the candidate line, best first."""

    score: float
    jaccard: float
    verdict: Verdict
    matches: list[Match]
    candidates: int
    method: Literal["exact", "lsh"]


@dataclass(frozen=True, slots=True)
class _Doc:
    source: SourceDocument
    normalised: str


class PlagiarismIndex:
    """A corpus ready for checks: ``PlagiarismIndex(docs).check(essay)``.

    ``n`` is the shingle length; corpora larger than ``lsh_min_corpus`` get a MinHash LSH Ensemble
    (built once here). Raises ``ValueError`` for ``n < 2`` or two documents with one id.
    """

    def __init__(
        self, documents: Iterable[SourceDocument], *, n: int = SHINGLE, lsh_min_corpus: int = LSH_MIN_CORPUS
    ) -> None:
        if n < 2:
            raise ValueError("shingles need n >= 2")
        self.n = n
        self._docs: dict[str, _Doc] = {}
        for doc in documents:
            if doc.id in self._docs:
                raise ValueError(f"two documents have the id {doc.id!r}")
            self._docs[doc.id] = _Doc(doc, normalize(doc.text)[0])
        self._exact: dict[str, set[str]] | None = None
        self._lsh: Any = None
        if len(self._docs) > lsh_min_corpus:
            self._build_lsh()
        else:
            self._exact = {key: shingles(doc.normalised, n) for key, doc in self._docs.items()}

    def __len__(self) -> int:
        return len(self._docs)

    def _build_lsh(self) -> None:
        from datasketch import MinHash, MinHashLSHEnsemble

        keys = list(self._docs)
        sets = [shingles(self._docs[k].normalised, self.n) for k in keys]
        encoded = [[s.encode() for s in group] for group in sets]
        hashes = MinHash.bulk(encoded, num_perm=NUM_PERM, hashfunc=_crc32)
        self._lsh = MinHashLSHEnsemble(threshold=CANDIDATE_THRESHOLD, num_perm=NUM_PERM, num_part=16)
        self._lsh.index((k, h, max(1, len(s))) for k, h, s in zip(keys, hashes, sets, strict=True))

    def _candidates(self, essay_shingles: set[str]) -> list[str]:
        if self._exact is not None:
            return [k for k, s in self._exact.items() if not essay_shingles.isdisjoint(s)]
        from datasketch import MinHash

        query = MinHash(num_perm=NUM_PERM, hashfunc=_crc32)
        query.update_batch([s.encode() for s in essay_shingles])
        return sorted(self._lsh.query(query, len(essay_shingles)))

    def _shingles_of(self, key: str) -> set[str]:
        if self._exact is not None:
            return self._exact[key]
        return shingles(self._docs[key].normalised, self.n)

    def check(self, essay: str, *, top: int = 3) -> PlagiarismReport:
        """Score ``essay`` against the corpus (see the module docstring)."""
        normalised, origin = normalize(essay)
        mine = shingles(normalised, self.n)
        keys = self._candidates(mine) if mine else []
        matches: list[Match] = []
        for key in keys:
            theirs = self._shingles_of(key)
            common = mine & theirs
            if not common:
                continue
            containment = len(common) / len(mine)
            if containment < CANDIDATE_THRESHOLD / 2:
                continue
            doc = self._docs[key].source
            matches.append(
                Match(
                    source_id=doc.id,
                    title=doc.title,
                    containment=round(containment, 4),
                    jaccard=round(len(common) / len(mine | theirs), 4),
                    passages=_passages(essay, normalised, origin, common, self.n),
                )
            )
        matches.sort(key=lambda m: (-m.containment, m.source_id))
        best = matches[0] if matches else None
        score = best.containment if best else 0.0
        return PlagiarismReport(
            score=score,
            jaccard=best.jaccard if best else 0.0,
            verdict=verdict(score),
            matches=matches[:top],
            candidates=len(keys),
            method="exact" if self._exact is not None else "lsh",
        )


def _crc32(data: bytes) -> int:
    """The 32-bit shingle hash MinHash permutes: CRC-32 in C, several times faster than datasketch's
    default SHA-1 and as good for hashing distinct short strings into 32 bits."""
    return zlib.crc32(data)


def _passages(essay: str, normalised: str, origin: Sequence[int], common: set[str], n: int) -> list[Passage]:
    """Maximal runs of normalised positions covered by shared shingles, mapped to essay offsets."""
    covered = [False] * len(normalised)
    for i in range(len(normalised) - n + 1):
        if normalised[i : i + n] in common:
            for j in range(i, i + n):
                covered[j] = True
    passages: list[Passage] = []
    i = 0
    while i < len(covered):
        if not covered[i]:
            i += 1
            continue
        j = i
        while j < len(covered) and covered[j]:
            j += 1
        start, end = origin[i], origin[j - 1] + 1
        passages.append(Passage(start=start, end=end, text=essay[start:end]))
        i = j
    return passages


__all__ = [
    "BLOCK_ABOVE",
    "WARN_AT",
    "Match",
    "Passage",
    "PlagiarismIndex",
    "PlagiarismReport",
    "SourceDocument",
    "normalize",
    "shingles",
    "verdict",
]
