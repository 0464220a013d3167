"""Seed 004 "Trajectoryモデル" and Correctness Properties 1 and 2."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from kanawa.apps.ace.trajectory import Trajectory

SEED_JSON = """{
  "query": "APIのレート制限を実装する方法",
  "dataset": "appworld",
  "generated_answer": "レート制限の実装には...",
  "reasoning_steps": [
    "Playbookから関連知識を検索",
    "API使用パターンのBulletを参照",
    "レート制限の実装方法を生成"
  ],
  "used_bullet_ids": ["shr-00001", "aup-00003"],
  "status": "success",
  "error_message": null,
  "created_at": "2025-01-15T10:30:00"
}"""

trajectories = st.builds(
    Trajectory,
    query=st.text(max_size=80),
    dataset=st.text(),
    generated_answer=st.text(max_size=200),
    reasoning_steps=st.lists(st.text(), max_size=5),
    used_bullet_ids=st.lists(st.from_regex(r"[a-z]{2,4}-\d{5}", fullmatch=True), max_size=5),
    status=st.sampled_from(["success", "failure"]),
    error_message=st.none() | st.text(),
    created_at=st.datetimes(min_value=datetime(1970, 1, 2), max_value=datetime(2100, 1, 1)),
)


# Feature: generator-agent, Property 1: Trajectoryシリアライゼーションのラウンドトリップ
@settings(deadline=None)
@given(trajectories)
def test_property_1_json_round_trip(trajectory: Trajectory) -> None:
    assert Trajectory.model_validate_json(trajectory.model_dump_json()) == trajectory


_VALID: dict[str, Any] = {
    "query": "q",
    "dataset": "d",
    "generated_answer": "a",
    "reasoning_steps": [],
    "used_bullet_ids": [],
    "status": "success",
}
_WRONG: dict[str, st.SearchStrategy[Any]] = {
    "query": st.integers() | st.none() | st.lists(st.text(), max_size=2),
    "dataset": st.integers() | st.none() | st.floats(allow_nan=False),
    "generated_answer": st.integers() | st.none() | st.dictionaries(st.text(), st.text(), max_size=2),
    "reasoning_steps": st.text() | st.integers() | st.lists(st.integers(), min_size=1, max_size=3),
    "used_bullet_ids": st.text() | st.integers() | st.lists(st.integers(), min_size=1, max_size=3),
    "status": st.text().filter(lambda s: s not in ("success", "failure")) | st.integers(),
    "error_message": st.integers() | st.lists(st.text(), max_size=2),
    "created_at": st.text(alphabet="xyz!?", min_size=1) | st.lists(st.integers(), max_size=2),
}


# Feature: generator-agent, Property 2: Trajectoryの型バリデーション
@settings(deadline=None)
@given(st.sampled_from(sorted(_WRONG)).flatmap(lambda field: st.tuples(st.just(field), _WRONG[field])))
def test_property_2_wrong_types_raise_validation_error(case: tuple[str, Any]) -> None:
    field, value = case
    with pytest.raises(ValidationError):
        Trajectory(**{**_VALID, field: value})


def test_reads_the_seeds_json_example() -> None:
    trajectory = Trajectory.model_validate_json(SEED_JSON)
    assert trajectory.used_bullet_ids == ["shr-00001", "aup-00003"]
    assert trajectory.created_at == datetime(2025, 1, 15, 10, 30)
    assert trajectory.error_message is None


def test_fields_are_exactly_the_seeds() -> None:
    assert list(Trajectory.model_fields) == [
        "query",
        "dataset",
        "generated_answer",
        "reasoning_steps",
        "used_bullet_ids",
        "status",
        "error_message",
        "created_at",
    ]
