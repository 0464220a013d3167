"""Issue 12 part 3: textlint in a warm Node sidecar over real Japanese samples — です/である mix, long
sentences, repeated particles — with UTF-16 offsets converted to Python characters."""

from __future__ import annotations

import pytest

from kanawa.apps.smartao.issues import patch_from_issues
from kanawa.apps.smartao.session import sample_text
from kanawa.apps.smartao.textlint import TextlintError, TextlintSidecar

MIXED = "私は地域の商店街を元気にしたいです。そのために経済を学ぶ必要があると考えている。"
SURROGATE = "𠮷野家の店長から話を聞きました。店長の話は面白いです。私は研究者になるのである。"


def test_sidecar_finds_the_desumasu_dearu_mix_and_suggests_the_majority_style(
    textlint: TextlintSidecar,
) -> None:
    text = "私は学生です。毎日勉強しています。研究である。"
    issues = [i for i in textlint.lint(text) if i.rule.endswith("no-mix-dearu-desumasu")]
    assert len(issues) == 1
    assert text[issues[0].start : issues[0].end] == "研究である。"
    assert issues[0].suggestion == "研究です。"
    assert patch_from_issues(text, issues).new_text == "私は学生です。毎日勉強しています。研究です。"


def test_surrogate_pair_before_a_finding_does_not_shift_its_offsets(textlint: TextlintSidecar) -> None:
    plain = SURROGATE.replace("𠮷", "吉")
    with_pair = textlint.lint(SURROGATE)
    without = textlint.lint(plain)
    assert [(i.rule, i.start, i.end) for i in with_pair] == [(i.rule, i.start, i.end) for i in without]
    mix = next(i for i in with_pair if i.rule.endswith("no-mix-dearu-desumasu"))
    assert SURROGATE[mix.start : mix.end] == "私は研究者になるのである。"
    raw = next(m for m in textlint.raw(SURROGATE) if str(m["rule"]).endswith("no-mix-dearu-desumasu"))
    assert raw["start"] == mix.start + 1 + len("私は研究者になる")  # 𠮷 is two units


def test_long_sentence_and_doubled_particles_are_reported(textlint: TextlintSidecar) -> None:
    long = (
        "私は"
        + "、".join(["地域の人々と協力して"] * 3)
        + "まちを元気にする方法を"
        + "深く" * 30
        + "学びたいと考えています。"
    )
    rules = {i.rule for i in textlint.lint(long)}
    assert "japanese/sentence-length" in rules
    doubled = "材料不足で代替素材で製品を作った。"
    assert "japanese/no-doubled-joshi" in {i.rule for i in textlint.lint(doubled)}


def test_shipped_samples_get_findings_whose_offsets_fit_the_text(textlint: TextlintSidecar) -> None:
    for name in ("shibou_riyusho.txt", "shoronbun.txt"):
        text = sample_text(name)
        issues = textlint.lint(text)
        assert issues, name
        assert all(0 <= i.start < i.end <= len(text) for i in issues)
        patch = patch_from_issues(text, issues)
        assert patch.apply(text) == patch.new_text


def test_sidecar_answers_many_requests_in_order_and_closes(textlint: TextlintSidecar) -> None:
    answers = [textlint.lint(f"{n}回目です。研究である。") for n in range(5)]
    assert all(len(a) == 1 for a in answers)
    other = TextlintSidecar()
    other.close()
    assert not other.running
    with pytest.raises(TextlintError, match="not running"):
        other.raw("テスト")


def test_without_node_the_sidecar_refuses_with_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    import kanawa.apps.smartao.textlint as module

    monkeypatch.setattr(module.shutil, "which", lambda name: None)
    assert not module.textlint_available()
    assert module.missing_reason() == (
        "Node.js is not on the PATH: install Node.js, then run `kanawa smartao setup` "
        "(it needs Node.js 18.14 or newer and npm)"
    )
    with pytest.raises(
        TextlintError, match=r"Node\.js is not on the PATH.*kanawa smartao setup.*Sudachi rules"
    ):
        TextlintSidecar()
