"""Seed 002 App. A patch model: apply, invert, rebase, merge_patches and its overlap rule."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from kanawa.apps.smartao.patch import (
    Change,
    ChangeOp,
    PatchJSON,
    apply_changes,
    make_change,
    merge_patches,
)

ALPHABET = st.sampled_from(list("あいう漢字ab。、\n𠮷"))
TEXT = st.text(ALPHABET, max_size=30)


@st.composite
def text_and_changes(draw: st.DrawFn, text: str | None = None) -> tuple[str, list[Change]]:
    """A text and a canonical change map of it (random cut points, each gap an edit or not)."""
    original = draw(TEXT) if text is None else text
    points = sorted(draw(st.lists(st.integers(0, len(original)), max_size=8)))
    changes: list[Change] = []
    cursor = 0
    for a, b in zip(points[::2], points[1::2], strict=False):
        if a < cursor:
            continue
        replacement = draw(st.text(ALPHABET, max_size=5))
        if a == b and not replacement:
            continue
        changes.append(make_change(a, b, replacement))
        cursor = b + (1 if a == b else 0)
    return original, changes


@st.composite
def text_and_two_patches(draw: st.DrawFn) -> tuple[str, PatchJSON, PatchJSON]:
    original = draw(TEXT)
    _, first = draw(text_and_changes(original))
    _, second = draw(text_and_changes(original))
    return original, PatchJSON.from_changes(original, first), PatchJSON.from_changes(original, second)


@settings(deadline=None)
@given(text_and_changes())
def test_app_a_applying_change_map_to_original_gives_new_text(case: tuple[str, list[Change]]) -> None:
    original, changes = case
    patch = PatchJSON.from_changes(original, changes)
    assert patch.apply(original) == patch.new_text
    again = PatchJSON.model_validate_json(patch.model_dump_json())
    assert again.apply(original) == patch.new_text


@settings(deadline=None)
@given(text_and_changes())
def test_app_a_invert_takes_new_text_back_to_original(case: tuple[str, list[Change]]) -> None:
    original, changes = case
    patch = PatchJSON.from_changes(original, changes)
    inverse = patch.invert(original)
    assert inverse.apply(patch.new_text) == original
    assert inverse.invert(patch.new_text).apply(original) == patch.new_text


@settings(deadline=None)
@given(text_and_two_patches())
def test_merge_patches_of_non_overlapping_patches_equals_applying_them_in_sequence(
    case: tuple[str, PatchJSON, PatchJSON],
) -> None:
    original, first, second = case
    merged = merge_patches(original, [first, second])
    if merged.dropped:
        return  # overlapping: covered by the overlap-rule tests below
    in_sequence = second.rebase(first, original).apply(first.new_text)
    assert merged.patch.new_text == in_sequence
    assert merged.patch.apply(original) == merged.patch.new_text


@settings(deadline=None)
@given(text_and_two_patches())
def test_merge_patches_is_deterministic_and_keeps_every_change_of_the_first_patch(
    case: tuple[str, PatchJSON, PatchJSON],
) -> None:
    original, first, second = case
    merged = merge_patches(original, [first, second])
    assert merged == merge_patches(original, [first, second])
    # a multiset: two equal changes of the first patch are two changes to keep, not one
    assert not Counter(map(repr, first.change_map)) - Counter(map(repr, merged.patch.change_map))
    assert all(source == 1 for source, _ in merged.dropped)
    assert len(merged.patch.change_map) + len(merged.dropped) == len(first.change_map) + len(
        second.change_map
    )


def test_merge_patches_overlap_rule_first_patch_wins() -> None:
    original = "私は研究である。"
    style = PatchJSON.from_changes(original, [make_change(2, 8, "研究です。")])
    draft = PatchJSON.from_changes(original, [make_change(4, 6, "です"), make_change(8, 8, "追加。")])
    merged = merge_patches(original, [style, draft])
    assert merged.patch.new_text == "私は研究です。追加。"
    assert [(i, c.start, c.end) for i, c in merged.dropped] == [(1, 4, 6)]


def test_two_inserts_at_one_position_from_different_patches_conflict_and_the_first_wins() -> None:
    original = "abc"
    merged = merge_patches(
        original,
        [
            PatchJSON.from_changes(original, [make_change(1, 1, "X")]),
            PatchJSON.from_changes(original, [make_change(1, 1, "Y")]),
        ],
    )
    assert merged.patch.new_text == "aXbc"
    assert len(merged.dropped) == 1


def test_offsets_are_python_characters_so_a_surrogate_pair_counts_once() -> None:
    original = "𠮷野家である。"
    patch = PatchJSON.from_changes(original, [make_change(3, 7, "です。")])
    assert patch.new_text == "𠮷野家です。"


@pytest.mark.parametrize(
    ("op", "start", "end", "text"),
    [
        (ChangeOp.insert, 1, 2, "x"),
        (ChangeOp.insert, 1, 1, ""),
        (ChangeOp.delete, 1, 1, None),
        (ChangeOp.delete, 1, 2, "x"),
        (ChangeOp.replace, 2, 2, "x"),
        (ChangeOp.replace, 3, 2, "x"),
        (ChangeOp.replace, -1, 2, "x"),
    ],
)
def test_malformed_changes_are_refused(op: ChangeOp, start: int, end: int, text: str | None) -> None:
    with pytest.raises(ValidationError):
        Change(op=op, start=start, end=end, text=text)


def test_overlapping_or_out_of_range_change_maps_are_refused_with_a_clear_error() -> None:
    with pytest.raises(ValueError, match="overlap"):
        apply_changes("abcdef", [make_change(0, 3, "x"), make_change(2, 4, "y")])
    with pytest.raises(ValueError, match="past the end"):
        PatchJSON(new_text="", change_map=[make_change(0, 9, "x")]).apply("abc")


def test_rebase_moves_later_changes_and_drops_the_ones_that_conflict() -> None:
    original = "私は学生である。研究である。"
    first = PatchJSON.from_changes(original, [make_change(2, 8, "高校二年生です。")])
    second = PatchJSON.from_changes(original, [make_change(4, 8, "です。"), make_change(10, 14, "です。")])
    rebased = second.rebase(first, original)
    assert [(c.start, c.end) for c in rebased.change_map] == [(12, 16)]
    assert rebased.new_text == "私は高校二年生です。研究です。"
