"""Part 1: bullets, ids, section prefixes, the in-memory playbook and its JSON form."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from kanawa.apps.ace.playbook import APPWORLD_PREFIXES, Bullet, Playbook, default_prefix, section_key


def test_bullet_id_is_section_prefix_and_five_digit_counter() -> None:
    bullet = Bullet(id="shr-00001", section="STRATEGIES AND HARD RULES", content="x")
    assert (bullet.prefix, bullet.counter) == ("shr", 1)
    for bad in ("shr-1", "SHR-00001", "shr00001", "-00001", "shr-0001"):
        with pytest.raises(ValidationError, match="is not '<prefix>-<5 digits>'"):
            Bullet(id=bad, section="S", content="x")


def test_bullet_rejects_empty_content_and_negative_counters() -> None:
    with pytest.raises(ValidationError, match="must not be empty"):
        Bullet(id="shr-00001", section="S", content="  \n ")
    with pytest.raises(ValidationError):
        Bullet(id="shr-00001", section="S", content="x", helpful=-1)


def test_confidence_is_helpful_over_helpful_plus_harmful() -> None:
    assert Bullet(id="a-00001", section="S", content="x").confidence is None
    assert Bullet(id="a-00001", section="S", content="x", helpful=3, harmful=1).confidence == 0.75


def test_published_appworld_prefixes() -> None:
    assert set(APPWORLD_PREFIXES.values()) == {"shr", "api", "code", "cms", "psw", "vc", "ts", "misc"}
    assert default_prefix("Strategies and hard rules") == "shr"
    assert section_key("STRATEGIES AND HARD RULES") == "strategies_and_hard_rules"


def test_user_defined_section_prefix_from_initials_like_the_seeds_aup() -> None:
    assert default_prefix("API USAGE PATTERNS") == "aup"
    assert Playbook(sections=["API USAGE PATTERNS"]).prefix_for("API USAGE PATTERNS") == "aup"


def test_counter_is_shared_across_sections(playbook: Playbook) -> None:
    assert playbook.next_counter == 6
    assert playbook.sections == [
        "STRATEGIES AND HARD RULES",
        "APIS TO USE FOR SPECIFIC INFORMATION",
        "API USAGE PATTERNS",
    ]


def test_playbook_from_bullets_rejects_duplicate_ids() -> None:
    bullet = Bullet(id="shr-00001", section="S", content="x")
    with pytest.raises(ValidationError, match="duplicate bullet id"):
        Playbook(bullets=[bullet, bullet])


def test_json_export_round_trips_everything(playbook: Playbook) -> None:
    again = Playbook.model_validate_json(playbook.model_dump_json())
    assert again == playbook
    assert again.bullets[0].created_at == playbook.bullets[0].created_at
