"""Seed 002 §4 EvalAgent: the rubric JSON (cached), the evaluation store, and ``apply_reflexion`` as a
plain function and as ``kanawa smartao reflexion``."""

from __future__ import annotations

import dataclasses
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kanawa.apps.smartao.reflexion import EvalStore, EvaluationInputs, apply_reflexion, evaluation_key
from kanawa.apps.smartao.rubric import AXES, AxisScore, Rubric, heuristic_scores, load_rubric
from kanawa.cli import app


def rubric(score: int, *, low: str | None = None) -> Rubric:
    return Rubric(
        scores=[AxisScore(axis=a, score=1 if a == low else score, reason="理由") for a in AXES], summary=""
    )


def test_rubric_json_is_loaded_once_and_lists_the_seven_axes() -> None:
    assert load_rubric() is load_rubric()
    assert [a["name"] for a in load_rubric()["axes"]] == list(AXES)


def test_evaluation_key_depends_on_everything_that_changes_the_rubric() -> None:
    base = EvaluationInputs(
        essay="a",
        tenant="acme",
        policy="p",
        kind="志望理由書",
        style_backend="textlint",
        style_issues=("ja-no-mixed-period@3-4",),
        plagiarism_score=0.1,
        references=2,
        lessons=("具体例を",),
        models=("demo", "demo"),
    )
    assert evaluation_key(base) == evaluation_key(dataclasses.replace(base))
    changed = [
        dataclasses.replace(base, **{field.name: value})
        for field, value in zip(
            dataclasses.fields(EvaluationInputs),
            ("b", "globex", "q", "小論文", "某大学", "某学部", "sudachi", (), 0.3, 3, (), ("o:x", "demo")),
            strict=True,
        )
    ]
    keys = {evaluation_key(inputs) for inputs in changed}
    assert len(keys) == len(changed)  # each input on its own changes the key
    assert evaluation_key(base) not in keys


def test_store_caches_rubrics_by_key(tmp_path: Path) -> None:
    store = EvalStore(tmp_path / "e.sqlite3")
    assert store.get("k") is None
    store.put("k", rubric(4))
    assert store.get("k") == rubric(4)
    assert EvalStore(tmp_path / "e.sqlite3").get("k") == rubric(4)


def test_apply_reflexion_learns_a_lesson_for_each_axis_the_day_scored_low(tmp_path: Path) -> None:
    db = tmp_path / "e.sqlite3"
    store = EvalStore(db)
    for n in range(3):
        store.put(f"day1-{n}", rubric(4, low="具体性"), day="2026-11-22")
    store.put("day2", rubric(1), day="2026-11-23")
    learned = apply_reflexion(db, day="2026-11-22")
    assert list(learned) == [""]  # the tenant of runs outside the server
    lessons = learned[""]
    assert list(lessons) == ["具体性"]
    assert "平均が1.0点（3件）" in lessons["具体性"]
    assert store.latest_lessons() == (lessons["具体性"],)
    assert apply_reflexion(db, day="2026-11-22") == learned  # re-running replaces, never duplicates
    assert len(store.latest_lessons()) == 1
    assert apply_reflexion(db, day="2026-01-01") == {}
    with pytest.raises(ValueError, match="isoformat"):
        apply_reflexion(db, day="yesterday")


def test_each_tenant_learns_its_own_lessons_from_its_own_evaluations(tmp_path: Path) -> None:
    db = tmp_path / "e.sqlite3"
    store = EvalStore(db)
    for n in range(2):
        store.put(f"acme-{n}", rubric(4, low="具体性"), day="2026-11-22", tenant="acme")
        store.put(f"globex-{n}", rubric(4, low="独自性"), day="2026-11-22", tenant="globex")
    learned = apply_reflexion(db, day="2026-11-22")
    assert {tenant: list(lessons) for tenant, lessons in learned.items()} == {
        "acme": ["具体性"],
        "globex": ["独自性"],
    }
    assert store.latest_lessons(tenant="acme") == (learned["acme"]["具体性"],)
    assert store.latest_lessons(tenant="globex") == (learned["globex"]["独自性"],)
    assert store.latest_lessons() == ()  # nothing learned outside a tenant
    assert len(store.evaluations("2026-11-22", tenant="acme")) == 2


def test_a_store_written_before_tenants_opens_and_keeps_its_evaluations(tmp_path: Path) -> None:
    db = tmp_path / "old.sqlite3"
    with closing(sqlite3.connect(db)) as old, old:
        old.executescript(
            "CREATE TABLE evaluations (key TEXT PRIMARY KEY, day TEXT NOT NULL, rubric TEXT NOT NULL);"
            "CREATE TABLE lessons (day TEXT NOT NULL, axis TEXT NOT NULL, lesson TEXT NOT NULL,"
            " PRIMARY KEY (day, axis));"
        )
        old.execute("INSERT INTO evaluations VALUES ('k', '2026-11-20', ?)", (rubric(2).model_dump_json(),))
    store = EvalStore(db)
    assert store.get("k") == rubric(2)
    assert store.evaluations("2026-11-20") == [rubric(2)]
    store.put("k2", rubric(3), day="2026-11-20", tenant="acme")
    assert store.evaluations("2026-11-20", tenant="acme") == [rubric(3)]


def test_lessons_reach_the_rubric_evidence_eval_agent_reads() -> None:
    scored = heuristic_scores(
        "本文です。", policy="地域の課題", style_issue_count=0, plagiarism_score=0.0, lessons=("具体例を",)
    )
    assert "具体例を" in scored.summary
    assert [s.axis for s in scored.scores] == list(AXES)


def test_cli_reflexion_prints_the_lessons(tmp_path: Path) -> None:
    db = tmp_path / "e.sqlite3"
    EvalStore(db).put("x", rubric(2), day="2026-11-20")
    runner = CliRunner()
    result = runner.invoke(app, ["smartao", "reflexion", "--db", str(db), "--day", "2026-11-20"])
    assert result.exit_code == 0, result.output
    assert all(axis in result.output for axis in AXES)
    missing = runner.invoke(app, ["smartao", "reflexion", "--db", str(tmp_path / "none.sqlite3")])
    assert missing.exit_code == 1
    bad = runner.invoke(app, ["smartao", "reflexion", "--db", str(db), "--day", "20-11"])
    assert bad.exit_code == 2
    assert "Traceback" not in bad.output
