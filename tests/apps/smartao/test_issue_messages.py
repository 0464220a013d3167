"""Every style issue's message in both page languages, from the real linters' own messages: textlint's
rules write English (sentence-length, no-nfd, …) or Japanese, the Sudachi rules Japanese."""

from __future__ import annotations

import re

import pytest

from kanawa.apps.smartao import sudachi_rules
from kanawa.apps.smartao.issue_messages import issue_messages
from kanawa.apps.smartao.issues import StyleIssue
from kanawa.apps.smartao.session import sample_text
from kanawa.apps.smartao.textlint import TextlintSidecar

JAPANESE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]")

TEXTS = (
    sample_text("shibou_riyusho.txt"),
    sample_text("shoronbun.txt"),
    "これは問題です。これは問題である。",
    "私は、昨日、友達と、公園で、遊んだ。",
    "しかし、それは良い。しかし、それは悪い。",
    "今日は早く起きれる。",
    "それは分からないわけではない。",
    "今日は晴れだが、明日は雨だが、行く。",
    "ホ\u309aケットを持つ。",
    "これは\u200bテストです。",
    "\u2f00つの文です。",
    "この機能を使用することができます。",
    "私は私は学生です。学生は学生で学生らしく学生の本分を守る。",
)

TEXTLINT_RULES = {
    "japanese/sentence-length",
    "japanese/max-ten",
    "japanese/no-mix-dearu-desumasu",
    "japanese/no-doubled-joshi",
    "japanese/no-doubled-conjunction",
    "japanese/no-doubled-conjunctive-particle-ga",
    "japanese/no-dropping-the-ra",
    "japanese/no-double-negative-ja",
    "japanese/no-nfd",
    "japanese/no-zero-width-spaces",
    "japanese/no-kangxi-radicals",
    "ja-no-redundant-expression",
}


def _english_outside_quotes(text: str) -> bool:
    return not JAPANESE.search(re.sub(r"“[^”]*”", "", text))


def _assert_both_languages(issue: StyleIssue) -> None:
    messages = issue_messages(issue)
    assert JAPANESE.search(messages["ja"]), (issue.rule, messages)
    assert _english_outside_quotes(messages["en"]), (issue.rule, messages)
    assert not messages["en"].startswith("Style issue found by"), (issue.rule, issue.message)  # known


def test_every_textlint_rule_has_its_message_in_japanese_and_in_english(textlint: TextlintSidecar) -> None:
    issues = [issue for text in TEXTS for issue in textlint.lint(text)]
    assert {issue.rule for issue in issues} == TEXTLINT_RULES  # the texts reach every rule we ship
    for issue in issues:
        _assert_both_languages(issue)


def test_textlints_english_messages_get_japanese_with_their_particulars(textlint: TextlintSidecar) -> None:
    text = "あ" * 100 + "。"
    [issue] = [i for i in textlint.lint(text) if i.rule == "japanese/sentence-length"]
    assert issue.message.startswith("Line 1 sentence length(101) exceeds")
    assert issue_messages(issue) == {
        "ja": "一文が101文字あります（90文字以内に分けましょう）",
        "en": "This sentence has 101 characters; split it into sentences of at most 90.",
    }
    [joshi] = [
        i for i in textlint.lint("材料不足で代替素材で製品を作った。") if i.rule.endswith("no-doubled-joshi")
    ]
    assert issue_messages(joshi)["en"] == (
        "The particle “で” appears twice or more in one sentence; reorder or split it."
    )


def test_every_sudachi_rule_has_its_message_in_japanese_and_in_english() -> None:
    issues = [issue for text in TEXTS for issue in sudachi_rules.check(text)]
    assert {issue.rule for issue in issues} == {
        "sudachi/no-mix-dearu-desumasu",
        "sudachi/sentence-length",
        "sudachi/repeated-word",
    }
    for issue in issues:
        _assert_both_languages(issue)
        if issue.rule == "sudachi/repeated-word":
            assert issue_messages(issue)["ja"] == issue.message  # already Japanese: kept as written


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("文末が不自然です", {"ja": "文末が不自然です", "en": "Style issue found by the rule my-rule."}),
        ("Avoid this word.", {"ja": "表記の指摘があります（my-rule）", "en": "Avoid this word."}),
    ],
)
def test_a_rule_the_catalogue_does_not_know_keeps_its_message_in_its_own_language(
    message: str, expected: dict[str, str]
) -> None:
    issue = StyleIssue(rule="my-rule", message=message, start=0, end=1)
    assert issue_messages(issue) == expected
