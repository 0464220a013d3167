"""Tokenizers for the BM25 leg that work for Japanese and English alike.

Text is split into runs: ASCII word runs are English (lower-cased, a light suffix stemmer, a short
stop-word list); everything else goes to the Japanese analyser.

- :class:`SudachiTokenizer` (the default when ``sudachipy`` and ``sudachidict-core`` are installed —
  the dictionary ships in the wheel, nothing is downloaded): Sudachi's *normalised forms*, so
  ``ユーザー``/``ユーザ`` and ``出来る``/``できる`` meet, with particles, auxiliaries, symbols and
  whitespace dropped. Sudachi objects are not shared across threads (one per thread).
- :class:`BigramTokenizer` (no dependencies, the fallback): overlapping character bigrams of each
  Japanese run (a one-character run stays a unigram).

:func:`default_tokenizer` picks Sudachi when it imports and falls back to bigrams otherwise.
"""

from __future__ import annotations

import itertools
import re
import threading
import unicodedata
from typing import Any, Final, Protocol

_RUN: Final = re.compile(r"[A-Za-z0-9_]+|[^\sA-Za-z0-9_]+")
_ASCII_WORD: Final = re.compile(r"[a-z0-9_]+")
_PUNCT_ONLY: Final = re.compile(r"^[\W_]+$")
_STOP: Final = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "can",
        "do",
        "does",
        "for",
        "from",
        "how",
        "i",
        "if",
        "in",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "so",
        "that",
        "the",
        "this",
        "to",
        "was",
        "we",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "you",
        "your",
        "should",
        "would",
        "could",
    ]
)
_DROP_POS: Final = frozenset({"助詞", "助動詞", "補助記号", "空白", "記号"})
_JA_STOP: Final = frozenset({"為る", "居る", "有る", "成る", "事", "物", "下さる", "様", "此の", "其の"})


class Tokenizer(Protocol):
    """Text to tokens; ``name`` identifies the scheme (indexes built with different ones never mix)."""

    @property
    def name(self) -> str: ...

    def __call__(self, text: str) -> list[str]: ...


def stem(word: str) -> str:
    """A light English stemmer: enough to meet ``pages``/``page``, ``paginating``/``paginate``."""
    if len(word) > 5 and word.endswith("ies"):
        return word[:-3] + "y"
    for suffix in ("ing", "ed"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    if len(word) > 4 and word.endswith("e"):
        return word[:-1]
    return word


def english_tokens(run: str) -> list[str]:
    return [stem(word) for word in _ASCII_WORD.findall(run.lower()) if word not in _STOP]


def _runs(text: str) -> list[str]:
    return _RUN.findall(unicodedata.normalize("NFKC", text))


class BigramTokenizer:
    """Character bigrams for Japanese runs, stemmed words for English; no dependencies."""

    name = "bigram-v1"

    def __call__(self, text: str) -> list[str]:
        tokens: list[str] = []
        for run in _runs(text):
            if run.isascii():
                tokens.extend(english_tokens(run))
                continue
            chars = [char for char in run if not _PUNCT_ONLY.match(char)]
            if len(chars) == 1:
                tokens.append(chars[0])
            tokens.extend(a + b for a, b in itertools.pairwise(chars))
        return tokens


class SudachiTokenizer:
    """Sudachi normalised forms for Japanese, stemmed words for English.

    Args:
        mode: Sudachi's split mode: ``"A"`` (short units, best recall for search), ``"B"`` or ``"C"``.
    """

    def __init__(self, *, mode: str = "A") -> None:
        from sudachipy import Dictionary, SplitMode

        self._mode = {"A": SplitMode.A, "B": SplitMode.B, "C": SplitMode.C}[mode]
        self._dictionary = Dictionary()
        self._local = threading.local()
        self.name = f"sudachi-core-{mode}-v1"

    def _tokenizer(self) -> Any:
        tokenizer = getattr(self._local, "tokenizer", None)
        if tokenizer is None:
            tokenizer = self._local.tokenizer = self._dictionary.tokenizer(mode=self._mode)
        return tokenizer

    def __call__(self, text: str) -> list[str]:
        tokens: list[str] = []
        tokenizer = None
        for run in _runs(text):
            if run.isascii():
                tokens.extend(english_tokens(run))
                continue
            tokenizer = tokenizer or self._tokenizer()
            for morpheme in tokenizer.tokenize(run):
                if morpheme.part_of_speech()[0] in _DROP_POS:
                    continue
                form = morpheme.normalized_form()
                if form in _JA_STOP or _PUNCT_ONLY.match(form):
                    continue
                tokens.append(stem(form.lower()) if form.isascii() else form)
        return tokens


_default: Tokenizer | None = None
_default_lock = threading.Lock()


def default_tokenizer() -> Tokenizer:
    """Sudachi when ``sudachipy`` and its core dictionary import, else :class:`BigramTokenizer` (shared)."""
    global _default
    with _default_lock:
        if _default is None:
            try:
                _default = SudachiTokenizer()
            except Exception:  # no sudachipy, or no dictionary package: the dependency-free fallback
                _default = BigramTokenizer()
        return _default


__all__ = [
    "BigramTokenizer",
    "SudachiTokenizer",
    "Tokenizer",
    "default_tokenizer",
    "english_tokens",
    "stem",
]
