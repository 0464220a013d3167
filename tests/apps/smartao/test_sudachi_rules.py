"""Issue 12 part 3: the Sudachi rules, StyleAgent's fallback when Node is absent."""

from __future__ import annotations

from kanawa.apps.smartao import sudachi_rules
from kanawa.apps.smartao.issues import patch_from_issues


def test_style_mix_is_found_and_fixed_toward_the_majority() -> None:
    text = "私は学生です。毎日勉強しています。研究である。"
    issues = [i for i in sudachi_rules.check(text) if i.rule == "sudachi/no-mix-dearu-desumasu"]
    assert [(text[i.start : i.end], i.suggestion) for i in issues] == [("研究である。", "研究です。")]
    dearu = "私は学生である。毎日勉強している。研究が好きです。"  # plain 常体 endings count as である
    fix = [i for i in sudachi_rules.check(dearu) if i.rule == "sudachi/no-mix-dearu-desumasu"]
    assert [i.suggestion for i in fix] == ["研究が好きである。"]


def test_sentence_styles_are_read_from_the_morphemes() -> None:
    assert sudachi_rules.sentence_style("研究したいのである。") == "dearu"
    assert sudachi_rules.sentence_style("研究します。") == "desumasu"
    assert sudachi_rules.sentence_style("大切だ。") == "dearu"
    assert sudachi_rules.sentence_style("毎日勉強している。") == "dearu"
    assert sudachi_rules.sentence_style("はい。") is None


def test_long_sentences_and_repeated_words() -> None:
    long = "私は" + "地域の人々と協力して" * 10 + "学びたいと考えています。"
    assert any(i.rule == "sudachi/sentence-length" for i in sudachi_rules.check(long))
    text = "店長が店長として店長らしく働いていました。私は私は驚きました。"
    issues = [i for i in sudachi_rules.check(text) if i.rule == "sudachi/repeated-word"]
    spans = [(text[i.start : i.end], i.suggestion) for i in issues]
    assert ("店長", None) in spans
    assert ("私は", "") in spans
    assert ("が", "") in [
        (t[i.start : i.end], i.suggestion)
        for t in ["大切なことがが分かった。"]
        for i in sudachi_rules.check(t)
    ]
    patch = patch_from_issues(text, issues)
    assert patch.apply(text) == patch.new_text
