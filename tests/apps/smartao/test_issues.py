"""Seed 002 §4 ``util.patch_from_issues``, span widening and the UTF-16 → character table."""

from __future__ import annotations

from kanawa.apps.smartao.issues import StyleIssue, patch_from_issues, utf16_to_chars, widen_span


def issue(start: int, end: int, suggestion: str | None, rule: str = "r") -> StyleIssue:
    return StyleIssue(rule=rule, message="m", start=start, end=end, suggestion=suggestion)


def test_patch_from_issues_turns_suggestions_into_a_change_map() -> None:
    text = "私は学生である。研究します。"
    patch = patch_from_issues(text, [issue(2, 8, "学生です。"), issue(8, 10, None)])
    assert patch.new_text == "私は学生です。研究します。"
    assert [(c.op.value, c.start, c.end) for c in patch.change_map] == [("replace", 2, 8)]
    assert patch.apply(text) == patch.new_text


def test_patch_from_issues_overlap_keeps_the_earliest_then_shortest() -> None:
    text = "abcdefgh"
    patch = patch_from_issues(text, [issue(2, 6, "X"), issue(1, 3, "Y"), issue(1, 2, "Z"), issue(6, 6, "I")])
    assert patch.new_text == "aZcdefIgh" or patch.new_text == "aZXIgh"
    assert patch.new_text == "aZXIgh"


def test_patch_from_issues_skips_no_op_and_out_of_range_suggestions() -> None:
    text = "abc"
    patch = patch_from_issues(text, [issue(0, 1, "a"), issue(2, 9, "x"), issue(1, 1, "")])
    assert patch.change_map == []
    assert patch.new_text == text


def test_utf16_offsets_map_to_python_characters_across_a_surrogate_pair() -> None:
    text = "𠮷は吉"  # 𠮷 is two UTF-16 units
    table = utf16_to_chars(text)
    assert table == [0, 0, 1, 2, 3]
    assert text[table[3]] == "吉"


def test_one_character_anchor_widens_to_its_clause() -> None:
    text = "私は学生です。研究である。"
    assert text[slice(*widen_span(text, 9, 10))] == "研究である。"
    comma = "地域の人と、店と、行政と、学校が協力する。"
    start, end = widen_span(comma, 12, 13)
    assert comma[start:end] == "行政と、"
    assert widen_span(text, 0, 5) == (0, 5)
