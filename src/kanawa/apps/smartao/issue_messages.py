"""Each style issue's message in Japanese and in English, for the page's two languages.

textlint's rules write their messages in one language each — ``sentence-length``, ``no-nfd``,
``no-zero-width-spaces`` and ``no-kangxi-radicals`` in English, the others in Japanese — and none of
them takes a locale option; the Sudachi rules (:mod:`kanawa.apps.smartao.sudachi_rules`) write
Japanese. So the messages are keyed here by rule id: a pattern takes the message's particulars (a
length, the repeated particle, the redundant expression) from the rule's own first line, and each
language has its sentence around them. Text quoted from the essay keeps its typographic quotes
(“…”), so a page can mark it as Japanese inside an English sentence.

A rule this catalogue does not know (a rule a user added to ``.textlintrc.json``) keeps its own message
in the language it was written in, and gets a sentence naming the rule in the other language (its own
message stays at hand as :attr:`StyleIssue.message`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, TypedDict

from kanawa.apps.smartao.issues import StyleIssue


class IssueMessages(TypedDict):
    """One issue's message per page language."""

    ja: str
    en: str


@dataclass(frozen=True, slots=True)
class _Message:
    """``pattern`` finds the particulars in the rule's message (``None``: the message has none); the
    templates are filled with its named groups (``ja=None``: the rule's own Japanese message)."""

    pattern: re.Pattern[str] | None
    ja: str | None
    en: str


def _m(pattern: str | None, ja: str | None, en: str) -> _Message:
    return _Message(None if pattern is None else re.compile(pattern), ja, en)


_LONG = _m(
    r"sentence length\((?P<n>\d+)(?:, original:\d+)?\) exceeds the maximum sentence length of (?P<max>\d+)",
    "一文が{n}文字あります（{max}文字以内に分けましょう）",
    "This sentence has {n} characters; split it into sentences of at most {max}.",
)
_MIXED = _m(
    None,
    "「です・ます」調と「である」調が混ざっています",
    "Polite (desu/masu) and plain (dearu) sentence endings are mixed; use one style throughout.",
)

_CATALOGUE: Final[dict[str, _Message]] = {
    "sentence-length": _LONG,
    "max-ten": _m(
        r'"(?P<mark>[^"]+)"を(?P<n>\d+)つ以上',
        "一つの文で「{mark}」を{n}つ以上使っています",
        "This sentence uses “{mark}” {n} or more times; split it or use fewer commas.",
    ),
    "no-mix-dearu-desumasu": _MIXED,
    "no-doubled-joshi": _m(
        r'助詞 "(?P<particle>[^"]+)"',
        "一文の中で助詞「{particle}」が二回以上使われています",
        "The particle “{particle}” appears twice or more in one sentence; reorder or split it.",
    ),
    "no-doubled-conjunction": _m(
        r"接続詞（(?P<word>[^）]+)）",
        "同じ接続詞「{word}」が続けて使われています",
        "The same conjunction “{word}” begins consecutive sentences.",
    ),
    "no-doubled-conjunctive-particle-ga": _m(
        None,
        "一文の中で逆接の「が」が二回以上使われています",
        "The contrastive particle “が” is used twice or more in one sentence.",
    ),
    "no-dropping-the-ra": _m(
        None,
        "ら抜き言葉を使っています",
        "A potential verb form drops its ra (ra-nuki); use the standard form.",
    ),
    "no-double-negative-ja": _m(
        r"二重否定: (?P<form>.+)",
        "二重否定（{form}）があります",
        "A double negative (“{form}”); say it positively.",
    ),
    "no-nfd": _m(
        None,
        "濁点・半濁点が分かれた文字（NFD）があります",
        "A character is written in decomposed form (NFD); use the composed character.",
    ),
    "no-zero-width-spaces": _m(None, "ゼロ幅スペースがあります", "There is a zero-width space."),
    "no-kangxi-radicals": _m(
        r"radical: (?P<char>.+)",
        "康煕部首の文字「{char}」があります（通常の漢字に直しましょう）",
        "The Kangxi radical “{char}” stands where a regular kanji belongs.",
    ),
    "no-invalid-control-character": _m(
        None, "制御文字が含まれています", "There is an invalid control character."
    ),
    "ja-no-redundant-expression": _m(
        r'"(?P<expr>[^"]+)"は冗長な表現です',
        "「{expr}」は冗長な表現です。簡潔に言い換えましょう",
        "“{expr}” is a redundant expression; a shorter one reads more clearly.",
    ),
    "sudachi/sentence-length": _m(
        r"一文が(?P<n>\d+)文字あります（(?P<max>\d+)文字以内",
        _LONG.ja,
        _LONG.en,
    ),
    "sudachi/no-mix-dearu-desumasu": _m(
        r"「(?P<style>[^」]+)」調の文章",
        None,
        "This ending breaks the text's {style_en} style; use one style throughout.",
    ),
    "sudachi/repeated-word": _m(
        r"「(?P<word>[^」]+)」が(?P<how>続けて二度|一文に三回以上)",
        None,
        "“{word}” is {how_en}.",
    ),
}

_PARTICULARS_EN: Final[dict[str, dict[str, str]]] = {
    "style": {"です・ます": "polite (desu/masu)", "である": "plain (dearu)"},
    "how": {
        "続けて二度": "written twice in a row",
        "一文に三回以上": "used three or more times in one sentence",
    },
}
"""Japanese particulars an English template names in English (as ``{style_en}``, ``{how_en}``)."""
_JAPANESE: Final = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]")


def _key(rule: str) -> str:
    """The catalogue's name for ``rule``: textlint's preset prefix dropped (``japanese/max-ten``)."""
    for prefix in ("preset-japanese/", "japanese/", "textlint-rule-"):
        if rule.startswith(prefix):
            return rule[len(prefix) :]
    return rule


def issue_messages(issue: StyleIssue) -> IssueMessages:
    """``issue``'s message in Japanese and in English (see the module docstring)."""
    entry = _CATALOGUE.get(_key(issue.rule))
    found = None if entry is None or entry.pattern is None else entry.pattern.search(issue.message)
    if entry is not None and (entry.pattern is None or found is not None):
        values = found.groupdict() if found is not None else {}
        for name, english in _PARTICULARS_EN.items():
            if name in values:
                values[f"{name}_en"] = english.get(values[name], values[name])
        ja = issue.message if entry.ja is None else entry.ja.format(**values)
        return IssueMessages(ja=ja, en=entry.en.format(**values))
    if _JAPANESE.search(issue.message):
        return IssueMessages(ja=issue.message, en=f"Style issue found by the rule {issue.rule}.")
    return IssueMessages(ja=f"表記の指摘があります（{issue.rule}）", en=issue.message)


__all__ = ["IssueMessages", "issue_messages"]
