"""Part 6: delta operations merged deterministically, with a per-operation audit record."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from kanawa.apps.ace.operations import (
    OPERATIONS,
    AddOp,
    MergeOp,
    Operation,
    RemoveOp,
    TagOp,
    UpdateOp,
    apply_operations,
)
from kanawa.apps.ace.playbook import Playbook

AT = datetime(2026, 1, 1, tzinfo=UTC)


def test_add_uses_section_prefix_and_shared_counter(playbook: Playbook) -> None:
    new, audit = apply_operations(
        playbook,
        [
            AddOp(section="STRATEGIES AND HARD RULES", content="one"),
            AddOp(section="API USAGE PATTERNS", content="二つ目"),
        ],
        at=AT,
    )
    assert [a.bullet_id for a in audit] == ["shr-00006", "aup-00007"]
    assert new.next_counter == 8
    assert new.in_section("STRATEGIES AND HARD RULES")[-1].content == "one"  # appended to its section
    assert new.get("aup-00007").created_at == AT  # type: ignore[union-attr]


def test_add_to_a_new_user_section_gets_its_initials_prefix(playbook: Playbook) -> None:
    new, audit = apply_operations(playbook, [AddOp(section="Data Cleaning Tips", content="strip spaces")])
    assert audit[0].bullet_id == "dct-00006"
    assert "Data Cleaning Tips" in new.sections


def test_update_tag_remove_and_their_audit(playbook: Playbook) -> None:
    new, audit = apply_operations(
        playbook,
        [
            UpdateOp(bullet_id="shr-00001", content="Page until an empty page."),
            TagOp(bullet_id="shr-00001", tag="helpful", count=2),
            TagOp(bullet_id="shr-00002", tag="harmful"),
            TagOp(bullet_id="api-00003", tag="neutral"),
            RemoveOp(bullet_id="aup-00005"),
        ],
        at=AT,
    )
    assert new.get("shr-00001").content == "Page until an empty page."  # type: ignore[union-attr]
    assert new.get("shr-00001").helpful == 5  # type: ignore[union-attr]
    assert new.get("shr-00002").harmful == 3  # type: ignore[union-attr]
    assert new.get("api-00003").neutral == 1  # type: ignore[union-attr]
    assert "aup-00005" not in new
    assert [(a.type, a.status) for a in audit] == [
        ("UPDATE", "applied"),
        ("TAG", "applied"),
        ("TAG", "applied"),
        ("TAG", "applied"),
        ("REMOVE", "applied"),
    ]
    assert audit[0].before is not None
    assert audit[0].before.startswith("Always page")
    assert audit[1].detail == "helpful=5"
    assert audit[4].before is not None


def test_merge_keeps_first_id_and_sums_counters(playbook: Playbook) -> None:
    new, audit = apply_operations(
        playbook, [MergeOp(bullet_ids=["shr-00001", "shr-00002"], content="merged")]
    )
    kept = new.get("shr-00001")
    assert kept is not None
    assert (kept.helpful, kept.harmful, kept.content) == (4, 2, "merged")
    assert "shr-00002" not in new
    assert audit[0].detail == "absorbed shr-00002"


def test_unknown_ids_and_duplicate_adds_are_skipped_with_a_reason(playbook: Playbook) -> None:
    new, audit = apply_operations(
        playbook,
        [
            TagOp(bullet_id="zzz-00001", tag="helpful"),
            AddOp(
                section="OTHERS",
                content=" always PAGE through every result page of a list API until an empty page comes back",
            ),
            AddOp(section="OTHERS", content="   "),
            MergeOp(bullet_ids=["shr-00001", "nope-00009"]),
        ],
    )
    assert [(a.status, a.detail) for a in audit] == [
        ("skipped", "no such bullet"),
        ("skipped", "same text as shr-00001"),
        ("skipped", "Value error, a bullet's content must not be empty"),
        ("skipped", "no such bullet: nope-00009"),
    ]
    assert new.bullets == playbook.bullets


_ops = st.lists(
    st.one_of(
        st.builds(
            AddOp,
            section=st.sampled_from(["OTHERS", "API USAGE PATTERNS"]),
            content=st.text(min_size=1, max_size=20),
        ),
        st.builds(
            UpdateOp,
            bullet_id=st.sampled_from(["shr-00001", "aup-00004", "x-00009"]),
            content=st.text(max_size=20),
        ),
        st.builds(
            TagOp,
            bullet_id=st.sampled_from(["shr-00001", "aup-00004"]),
            tag=st.sampled_from(["helpful", "harmful", "neutral"]),
        ),
        st.builds(RemoveOp, bullet_id=st.sampled_from(["shr-00002", "api-00003", "shr-00006"])),
        st.builds(
            MergeOp,
            bullet_ids=st.lists(
                st.sampled_from(["shr-00001", "aup-00004", "aup-00005"]), min_size=2, max_size=3
            ),
        ),
    ),
    max_size=8,
)


@given(_ops)
def test_apply_is_deterministic_and_audits_every_operation(operations: list[Operation]) -> None:
    from tests.apps.ace.conftest import small_playbook

    base = small_playbook()
    first, audit1 = apply_operations(base, operations, at=AT)
    second, audit2 = apply_operations(base, operations, at=AT)
    assert first == second
    assert audit1 == audit2
    assert len(audit1) == len(operations)
    assert [a.index for a in audit1] == list(range(len(operations)))
    # counters only grow through tags and merges; ids never repeat
    assert len({b.id for b in first}) == len(first)
    assert Playbook.from_text(first.to_text()).to_text() == first.to_text()


def test_operations_parse_from_json_by_type() -> None:
    ops = OPERATIONS.validate_json(
        '[{"type": "ADD", "section": "S", "content": "c"}, '
        '{"type": "TAG", "bullet_id": "a-00001", "tag": "harmful"}]'
    )
    assert [type(op) for op in ops] == [AddOp, TagOp]
