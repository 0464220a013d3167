"""Streaming ``<think>`` separation and the fallback thought (seed 000 §5, 001 §4.6)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kanawa.prompts import ThinkOutput, ThinkTagFilter, fallback_thought, split_think


def feed_all(chunks: Sequence[str]) -> tuple[str, str, list[ThinkOutput]]:
    stream = ThinkTagFilter()
    outputs = [stream.feed(chunk) for chunk in chunks]
    outputs.append(stream.flush())
    return "".join(o.visible for o in outputs), "".join(o.thought for o in outputs), outputs


_TAG = re.compile(r"(<think>|</think>)", re.IGNORECASE)


def reference_split(text: str) -> tuple[str, str]:
    """An independent, non-streaming statement of the rules: tags toggle the side and vanish."""
    visible: list[str] = []
    thought: list[str] = []
    in_thought = False
    for piece in _TAG.split(text):
        lowered = piece.lower()
        if lowered == "<think>":
            in_thought = True
        elif lowered == "</think>":
            in_thought = False
        else:
            (thought if in_thought else visible).append(piece)
    return "".join(visible), "".join(thought)


@pytest.mark.parametrize(
    ("text", "visible", "thought"),
    [
        ("plain answer", "plain answer", ""),
        ("<think>plan</think>answer", "answer", "plan"),
        ("before<think>plan</think>after", "beforeafter", "plan"),
        ("<think>a</think>x<think>b</think>y", "xy", "ab"),
        ("<THINK>a</Think>b", "b", "a"),
        ("<think>never closed", "", "never closed"),
        ("text</think>more", "textmore", ""),
        ("<think>a<think>b</think>c", "c", "ab"),
        ("a < b > c <thinking> </thinker>", "a < b > c <thinking> </thinker>", ""),
        ("<think >x</think >", "<think >x</think >", ""),
        ("<<think>>", "<", ">"),
        ("", "", ""),
    ],
)
def test_split_think_cases(text: str, visible: str, thought: str) -> None:
    assert split_think(text) == (visible, thought)
    assert reference_split(text) == (visible, thought)


def test_tag_split_across_chunks_is_recognised() -> None:
    visible, thought, _ = feed_all(["<th", "ink>pl", "an</", "thi", "nk>ans", "wer"])
    assert (visible, thought) == ("answer", "plan")


def test_tag_split_one_character_per_chunk() -> None:
    text = "hi<think>deep</think>bye"
    visible, thought, _ = feed_all(list(text))
    assert (visible, thought) == ("hibye", "deep")


def test_text_is_released_as_soon_as_it_cannot_be_a_tag() -> None:
    stream = ThinkTagFilter()
    assert stream.feed("a<b") == ThinkOutput(visible="a<b")
    assert stream.feed("x <thin") == ThinkOutput(visible="x ")
    assert stream.feed("g") == ThinkOutput(visible="<thing")


def test_held_back_text_never_exceeds_a_partial_tag() -> None:
    stream = ThinkTagFilter()
    out = stream.feed("x" * 10_000 + "</think")
    assert out.visible == "x" * 10_000
    assert stream.flush() == ThinkOutput(visible="</think")


def test_unclosed_thought_stays_thought_at_flush() -> None:
    stream = ThinkTagFilter()
    assert stream.feed("<think>still going</thi") == ThinkOutput(thought="still going")
    assert stream.in_thought
    assert stream.flush() == ThinkOutput(thought="</thi")


def test_stray_closing_tag_is_dropped_and_text_stays_visible() -> None:
    visible, thought, _ = feed_all(["answer </th", "ink> tail"])
    assert (visible, thought) == ("answer  tail", "")


def test_flush_resets_the_filter_for_the_next_response() -> None:
    stream = ThinkTagFilter()
    stream.feed("<think>open")
    stream.flush()
    assert not stream.in_thought
    assert stream.feed("next") == ThinkOutput(visible="next")


def test_empty_chunks_produce_nothing() -> None:
    stream = ThinkTagFilter()
    assert stream.feed("") == ThinkOutput()
    assert stream.flush() == ThinkOutput()


_PIECES = st.sampled_from(
    [
        "<think>",
        "</think>",
        "<THINK>",
        "</Think>",
        "<",
        ">",
        "/",
        "<<",
        "</",
        "<t",
        "<th",
        "<thi",
        "<thin",
        "<think",
        "</think",
        "think>",
        "ink>",
        "k>",
        "<think >",
        "a",
        "b",
        " ",
        "\n",
        "思考",
    ]
)
_TEXTS = st.lists(_PIECES | st.text(alphabet="<>/thinkTHINK x", max_size=4), max_size=30).map("".join)


@st.composite
def text_and_chunks(draw: st.DrawFn) -> tuple[str, list[str]]:
    text = draw(_TEXTS)
    cuts = sorted(draw(st.lists(st.integers(min_value=0, max_value=len(text)), max_size=12)))
    bounds = [0, *cuts, len(text)]
    return text, [text[a:b] for a, b in pairwise(bounds)]


@settings(deadline=None)
@given(text_and_chunks())
def test_any_chunking_equals_split_think_of_whole_text(case: tuple[str, list[str]]) -> None:
    text, chunks = case
    assert "".join(chunks) == text
    visible, thought, _ = feed_all(chunks)
    assert (visible, thought) == split_think(text)
    assert split_think(text) == reference_split(text)


@settings(deadline=None)
@given(text_and_chunks())
def test_streaming_holds_back_at_most_a_partial_tag(case: tuple[str, list[str]]) -> None:
    """After every chunk, all text is released except a possible partial tag (< 8 characters)."""
    _, chunks = case
    stream = ThinkTagFilter()
    fed = ""
    released = 0
    for chunk in chunks:
        fed += chunk
        out = stream.feed(chunk)
        released += len(out.visible) + len(out.thought)
        expected = sum(map(len, reference_split(fed)))
        assert 0 <= expected - released < len("</think>")


def test_fallback_thought_lists_tools_in_a_think_block() -> None:
    assert fallback_thought(["search", "fetch"]) == "<think>Calling tools: search, fetch</think>"


def test_fallback_thought_japanese_variant() -> None:
    assert (
        fallback_thought(["search", "fetch"], lang="ja")
        == "<think>ツールを呼び出します：search、fetch</think>"
    )


def test_fallback_thought_names_each_tool_once_in_call_order() -> None:
    assert fallback_thought(["b", "a", "b"]) == "<think>Calling tools: b, a</think>"


def test_fallback_thought_unknown_language_falls_back_to_english() -> None:
    assert fallback_thought(["x"], lang="fr") == "<think>Calling tools: x</think>"


def test_fallback_thought_is_a_thought_for_the_filter() -> None:
    assert split_think(fallback_thought(["x", "y"])) == ("", "Calling tools: x, y")


def test_fallback_thought_needs_a_tool_name() -> None:
    with pytest.raises(ValueError, match="at least one tool"):
        fallback_thought([])
