"""Part 1: the public ACE text format, read and written exactly (round trip on generated playbooks)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kanawa.apps.ace.playbook import Bullet, Playbook, format_id
from kanawa.apps.ace.text_format import PlaybookFormatError, is_structural_line, parse_playbook

SEED_EXAMPLE = """## STRATEGIES AND HARD RULES
[shr-00001] helpful=3 harmful=0 :: Always paginate through every page.
[shr-00002] Never guess an access token.

## API USAGE PATTERNS
[aup-00003] helpful=1 harmful=2 :: Retry after the Retry-After seconds:
    time.sleep(int(response.headers["Retry-After"]))
    {"retry": true}
"""

_line = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), min_size=1, max_size=40
).filter(lambda s: s.strip() != "" and not is_structural_line(s))
_content = st.lists(_line, min_size=1, max_size=3).map("\n".join).filter(lambda s: s.strip() != "")
_title = st.sampled_from(
    [
        "STRATEGIES AND HARD RULES",
        "USEFUL CODE SNIPPETS AND TEMPLATES",
        "API USAGE PATTERNS",
        "OTHERS",
        "メモ",
    ]
)


@st.composite
def playbooks(draw: st.DrawFn) -> Playbook:
    rows = draw(st.lists(st.tuples(_title, _content, st.integers(0, 99), st.integers(0, 99)), max_size=8))
    empty = draw(
        st.lists(st.sampled_from(["VERIFICATION CHECKLIST", "自作セクション"]), max_size=2, unique=True)
    )
    bullets = []
    for counter, (title, content, helpful, harmful) in enumerate(rows, start=1):
        prefix = Playbook(sections=[title]).prefix_for(title)
        bullets.append(
            Bullet(
                id=format_id(prefix, counter),
                section=title,
                content=content,
                helpful=helpful,
                harmful=harmful,
            )
        )
    sections = list(dict.fromkeys([*(b.section for b in bullets), *empty]))
    return Playbook(bullets=bullets, sections=sections)


def _visible(playbook: Playbook) -> list[tuple[str, str, str, int, int]]:
    return [(b.id, b.section, b.content, b.helpful, b.harmful) for b in playbook.bullets]


@given(playbooks())
def test_text_round_trip_keeps_ids_sections_content_and_counters(playbook: Playbook) -> None:
    text = playbook.to_text()
    again = parse_playbook(text)
    assert _visible(again) == _visible(playbook)
    assert again.sections == playbook.sections
    assert again.to_text() == text


def test_reads_the_seed_forms_including_counterless_bullets() -> None:
    playbook = parse_playbook(SEED_EXAMPLE)
    assert [b.id for b in playbook] == ["shr-00001", "shr-00002", "aup-00003"]
    assert (playbook.get("shr-00001").helpful, playbook.get("shr-00001").harmful) == (3, 0)  # type: ignore[union-attr]
    assert playbook.get("shr-00002").content == "Never guess an access token."  # type: ignore[union-attr]
    snippet = playbook.get("aup-00003")
    assert snippet is not None
    assert snippet.content.endswith('    {"retry": true}')
    assert playbook.prefix_for("API USAGE PATTERNS") == "aup"
    assert playbook.next_counter == 4


def test_written_text_always_carries_counters() -> None:
    text = parse_playbook(SEED_EXAMPLE).to_text()
    assert "[shr-00002] helpful=0 harmful=0 :: Never guess an access token." in text
    assert text.startswith("## STRATEGIES AND HARD RULES\n[shr-00001] helpful=3 harmful=0 :: ")
    assert "\n\n## API USAGE PATTERNS\n" in text


def test_bullet_before_any_header_goes_to_its_prefix_section() -> None:
    playbook = parse_playbook("[shr-00007] helpful=1 harmful=0 :: keep going\n")
    assert playbook.get("shr-00007").section == "STRATEGIES AND HARD RULES"  # type: ignore[union-attr]


def test_malformed_bullet_id_is_a_clear_error() -> None:
    with pytest.raises(PlaybookFormatError, match="line 2: 'shr-1' is not a bullet id"):
        parse_playbook("## S\n[shr-1] helpful=0 harmful=0 :: x\n")


def test_duplicate_ids_in_text_are_a_clear_error() -> None:
    with pytest.raises(PlaybookFormatError, match="duplicate bullet id 'shr-00001'"):
        parse_playbook("## S\n[shr-00001] a\n[shr-00001] b\n")


def test_content_line_that_would_read_as_a_header_is_rejected() -> None:
    with pytest.raises(ValueError, match="cannot look like a section header"):
        Bullet(id="shr-00001", section="S", content="first\n## not a header")
