"""Japanese style rules in Python over Sudachi (the fallback when Node is absent; issue 12 part 3).

Three rules, each a :class:`~kanawa.apps.smartao.issues.StyleIssue` producer over Sudachi's
morphemes (``sudachipy`` + ``sudachidict-core``, offline once installed):

- ``sudachi/no-mix-dearu-desumasu`` — sentence endings in the minority style (です・ます vs である・だ
  and the plain 常体 endings),
  with the ending rewritten to the majority style when that is mechanical (:func:`ending_fix`);
- ``sudachi/sentence-length`` — sentences over :data:`MAX_SENTENCE` characters;
- ``sudachi/repeated-word`` — a word or a two-morpheme phrase written twice in a row (``がが``,
  ``私は私は``; the fix deletes the second)
  or one content word used three times or more in one sentence.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import cache
from itertools import pairwise
from typing import Any, Literal

from kanawa.apps.smartao.issues import StyleIssue

MAX_SENTENCE = 90
"""The same limit as the textlint configuration's ``sentence-length``."""

_SENTENCE = re.compile(r"[^。！？!?\n]+[。！？!?]?")
_DESUMASU_TO_DEARU = (("でした", "であった"), ("です", "である"))
_DEARU_TO_DESUMASU = (("であった", "でした"), ("である", "です"), ("だった", "でした"))

Style = Literal["desumasu", "dearu"]
_STYLE_NAME: dict[str, str] = {"desumasu": "です・ます", "dearu": "である"}


@cache
def _tokenizer() -> Any:
    """Sudachi's tokenizer over the core dictionary, built once (about 50 ms)."""
    from sudachipy import Dictionary

    dictionary = Dictionary(dict="core")
    return dictionary.tokenizer() if hasattr(dictionary, "tokenizer") else dictionary.create()


def sentence_style(sentence: str) -> Style | None:
    """The ending style of one sentence, from its last morphemes (``None``: neither)."""
    morphemes = [m for m in _tokenizer().tokenize(sentence) if m.part_of_speech()[0] != "補助記号"]
    tail = morphemes[-4:]
    forms = {m.dictionary_form() for m in tail if m.part_of_speech()[0] == "助動詞"}
    if forms & {"です", "ます"}:
        return "desumasu"
    if "だ" in forms or (
        len(tail) >= 2 and tail[-1].dictionary_form() == "ある" and tail[-2].surface() == "で"
    ):
        return "dearu"
    last = tail[-1] if tail else None
    plain = last is not None and last.part_of_speech()[0] in ("動詞", "形容詞", "助動詞")
    if plain and last is not None and last.part_of_speech()[5].startswith("終止形"):
        return "dearu"  # a plain ending (常体: 〜する。〜した。〜たい。) belongs with である
    return None


def dominant_style(text: str) -> Style | None:
    """The style most sentences of ``text`` end in (``None`` when no sentence has one)."""
    counts = Counter(s for s in (sentence_style(m.group()) for m in _SENTENCE.finditer(text)) if s)
    if not counts:
        return None
    return "desumasu" if counts["desumasu"] >= counts["dearu"] else "dearu"


def ending_fix(span: str, text: str) -> str | None:
    """``span`` (a clause ending in the minority style) rewritten to ``text``'s majority style, or
    ``None`` when no mechanical rewrite exists (a verb's ます form needs its stem changed)."""
    pairs = _DEARU_TO_DESUMASU if dominant_style(text) == "desumasu" else _DESUMASU_TO_DEARU
    for old, new in pairs:
        index = span.rfind(old)
        if index >= 0:
            return span[:index] + new + span[index + len(old) :]
    return None


def check(text: str) -> list[StyleIssue]:
    """Every Sudachi-rule finding in ``text`` (Python-character offsets)."""
    issues: list[StyleIssue] = []
    sentences = [(m.start(), m.group()) for m in _SENTENCE.finditer(text) if m.group().strip()]
    styles = [sentence_style(s) for _, s in sentences]
    counts = Counter(s for s in styles if s)
    if counts["desumasu"] and counts["dearu"]:
        major: Style = "desumasu" if counts["desumasu"] >= counts["dearu"] else "dearu"
        for (offset, sentence), style in zip(sentences, styles, strict=True):
            if style is None or style == major:
                continue
            clause_start = max(sentence.rfind("、") + 1, 0)
            span = sentence[clause_start:]
            issues.append(
                StyleIssue(
                    rule="sudachi/no-mix-dearu-desumasu",
                    message=f"「{_STYLE_NAME[major]}」調の文章に別の文末が混ざっています",
                    start=offset + clause_start,
                    end=offset + len(sentence),
                    suggestion=ending_fix(span, text),
                    source="sudachi",
                )
            )
    for offset, sentence in sentences:
        body = sentence.strip()
        if len(body) > MAX_SENTENCE:
            issues.append(
                StyleIssue(
                    rule="sudachi/sentence-length",
                    message=f"一文が{len(body)}文字あります（{MAX_SENTENCE}文字以内に分けましょう）",
                    start=offset,
                    end=offset + len(sentence),
                    source="sudachi",
                )
            )
        issues.extend(_repeats(offset, sentence))
    return sorted(issues, key=lambda i: (i.start, i.end, i.rule))


def _repeats(offset: int, sentence: str) -> list[StyleIssue]:
    morphemes = list(_tokenizer().tokenize(sentence))
    found: list[StyleIssue] = []
    for before, after in pairwise(morphemes):
        if before.surface() == after.surface() and after.part_of_speech()[0] not in ("補助記号", "空白"):
            if before.surface() in ("々",):
                continue
            found.append(
                StyleIssue(
                    rule="sudachi/repeated-word",
                    message=f"「{after.surface()}」が続けて二度書かれています",
                    start=offset + after.begin(),
                    end=offset + after.end(),
                    suggestion="",
                    source="sudachi",
                )
            )
    for i in range(len(morphemes) - 3):
        first, second = morphemes[i : i + 2], morphemes[i + 2 : i + 4]
        if [m.surface() for m in first] == [m.surface() for m in second] and first[0].part_of_speech()[
            0
        ] != "補助記号":
            found.append(
                StyleIssue(
                    rule="sudachi/repeated-word",
                    message=f"「{first[0].surface()}{first[1].surface()}」が続けて二度書かれています",
                    start=offset + second[0].begin(),
                    end=offset + second[1].end(),
                    suggestion="",
                    source="sudachi",
                )
            )
    seen: Counter[str] = Counter()
    for morpheme in morphemes:
        pos = morpheme.part_of_speech()[0]
        word = morpheme.dictionary_form()
        if (
            pos not in ("名詞", "動詞", "形容詞")
            or len(word) < 2
            or (pos == "動詞" and word in ("する", "ある", "いる"))
        ):
            continue
        seen[word] += 1
        if seen[word] == 3:
            found.append(
                StyleIssue(
                    rule="sudachi/repeated-word",
                    message=f"「{word}」が一文に三回以上使われています",
                    start=offset + morpheme.begin(),
                    end=offset + morpheme.end(),
                    source="sudachi",
                )
            )
    return found


__all__ = ["MAX_SENTENCE", "check", "dominant_style", "ending_fix", "sentence_style"]
