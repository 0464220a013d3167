"""Display control of round text by ``emit_intermediate_thoughts`` (seed 000 §5, 001 §4.6)."""

from __future__ import annotations

import pytest

from kanawa.prompts import should_emit_response_text, visible_text


@pytest.mark.parametrize("emit", [True, False])
@pytest.mark.parametrize("final", [True, False])
def test_no_tool_calls_always_emits(emit: bool, final: bool) -> None:
    assert should_emit_response_text(
        has_tool_calls=False, emit_intermediate_thoughts=emit, is_final_iteration=final
    )


@pytest.mark.parametrize("final", [True, False])
def test_tool_calls_with_emit_true_emits(final: bool) -> None:
    assert should_emit_response_text(
        has_tool_calls=True, emit_intermediate_thoughts=True, is_final_iteration=final
    )


def test_tool_calls_with_emit_false_emits_on_final_iteration_only() -> None:
    assert should_emit_response_text(
        has_tool_calls=True, emit_intermediate_thoughts=False, is_final_iteration=True
    )
    assert not should_emit_response_text(
        has_tool_calls=True, emit_intermediate_thoughts=False, is_final_iteration=False
    )


def test_emit_true_keeps_think_blocks_as_written() -> None:
    text = "<think>plan</think>\nAnswer"
    assert visible_text(text, emit_intermediate_thoughts=True) == text


def test_emit_false_strips_think_blocks() -> None:
    text = "Intro <think>plan</think>Answer<THINK>more</THINK>."
    assert visible_text(text, emit_intermediate_thoughts=False) == "Intro Answer."


def test_emit_false_strips_unclosed_thought_and_stray_close_tag() -> None:
    assert visible_text("Answer<think>half a thought", emit_intermediate_thoughts=False) == "Answer"
    assert visible_text("Answer</think> done", emit_intermediate_thoughts=False) == "Answer done"


def test_emit_false_keeps_surrounding_whitespace_and_other_angle_brackets() -> None:
    text = "<think>x</think>\n\na < b and <b>bold</b>"
    assert visible_text(text, emit_intermediate_thoughts=False) == "\n\na < b and <b>bold</b>"
