"""EvalAgent's rubric (seed 002 §4: "Rubric JSON をキャッシュ"; issue 12 part 6).

- :func:`load_rubric` reads ``rubric.json`` (the seven axes and their guides) once per process.
- :class:`Rubric` is EvalAgent's structured answer: a 1–5 score and a reason per axis.
- :func:`heuristic_scores` scores an essay without a model, from the tool results: the style findings
  (表記・形式), the plagiarism score (独自性), admission-policy keyword overlap (適合), numbers and
  concrete scenes (具体性), connectives and paragraphing (論理性), future-tense goals (将来像). The
  demo model answers with it; a real model gets it as evidence.
- The store of evaluations, their cache and ``apply_reflexion`` live in :mod:`kanawa.apps.smartao.reflexion`.
"""

from __future__ import annotations

import json
import re
from functools import cache
from importlib import resources
from typing import TypedDict

from pydantic import BaseModel, Field

AXES: tuple[str, ...] = (
    "志望動機の明確さ",
    "大学・アドミッションポリシーとの適合",
    "具体性",
    "論理性・一貫性",
    "独自性",
    "将来像",
    "表記・形式",
)


class RubricAxis(TypedDict):
    name: str
    name_en: str
    """The axis's name on the page in English (the rubric itself, and EvalAgent, use ``name``)."""
    guide: str


class RubricDefinition(TypedDict):
    version: int
    scale: dict[str, int]
    axes: list[RubricAxis]


@cache
def load_rubric() -> RubricDefinition:
    """The rubric definition shipped with the package (read once, then cached)."""
    text = resources.files("kanawa.apps.smartao").joinpath("rubric.json").read_text(encoding="utf-8")
    definition: RubricDefinition = json.loads(text)
    if tuple(axis["name"] for axis in definition["axes"]) != AXES:
        raise ValueError("rubric.json does not list the seven SmartAO axes in order")
    return definition


class AxisScore(BaseModel):
    """One axis: ``score`` 1–5 and the ``reason`` a student can act on."""

    axis: str
    score: int = Field(ge=1, le=5)
    reason: str


class Rubric(BaseModel):
    """EvalAgent's answer: one :class:`AxisScore` per axis (in :data:`AXES` order) and a summary."""

    scores: list[AxisScore]
    summary: str = ""

    def by_axis(self) -> dict[str, AxisScore]:
        return {s.axis: s for s in self.scores}

    @property
    def total(self) -> int:
        return sum(s.score for s in self.scores)


_CONNECTIVES = ("なぜなら", "第一に", "第二に", "しかし", "したがって", "そのため", "以上", "一方", "また")
_FUTURE = ("将来", "卒業後", "目標", "なりたい", "取り組みたい")
_WHY = ("志望する理由", "志望します", "志望した", "学びたい", "したいと考え")


def _clamp(value: float) -> int:
    return max(1, min(5, round(value)))


def policy_keywords(policy: str) -> set[str]:
    """Two-to-twelve-character kanji/katakana words of the admission policy (what 適合 looks for)."""
    return {
        w for w in re.findall(r"[\u4e00-\u9fff\u30a0-\u30ff]{2,12}", policy) if w not in ("本学部", "学生")
    }


def heuristic_scores(
    essay: str, *, policy: str, style_issue_count: int, plagiarism_score: float, lessons: tuple[str, ...] = ()
) -> Rubric:
    """Scores from evidence only (no model): see the module docstring for what feeds each axis."""
    chars = max(1, len(essay))
    numbers = len(re.findall(r"[0-9０-９一二三四五六七八九十百千]+(?:年|か月|人|回|日|件|円|%|％|割)", essay))
    keywords = policy_keywords(policy)
    shared = sorted(k for k in keywords if k in essay)
    fit = len(shared) / max(1, len(keywords))
    connectives = sum(essay.count(c) for c in _CONNECTIVES)
    paragraphs = len([p for p in essay.split("\n") if p.strip()])
    why = sum(essay.count(w) for w in _WHY)
    future = sum(essay.count(w) for w in _FUTURE)
    per_1000 = style_issue_count * 1000 / chars
    items = [
        (
            AXES[0],
            2 + min(3, why),
            f"志望理由を述べる表現が{why}か所あります。経験→関心→大学の順につながっているか確認しましょう。",
        ),
        (
            AXES[1],
            1 + fit * 8,
            f"アドミッション・ポリシーの語のうち{len(shared)}/{len(keywords)}語に触れています"
            f"（例: {'、'.join(shared[:4]) or 'なし'}）。",
        ),
        (
            AXES[2],
            1 + numbers,
            f"数や期間など具体的な記述が{numbers}か所です。場面・人数・結果を数字で示すと説得力が増します。",
        ),
        (
            AXES[3],
            1 + connectives / 2 + min(1, paragraphs / 5),
            f"論理をつなぐ接続語が{connectives}個、段落が{paragraphs}個あります。",
        ),
        (
            AXES[4],
            5 - plagiarism_score * 10,
            f"既存の文章との一致率は{plagiarism_score:.0%}です。自分だけの経験を中心に書きましょう。",
        ),
        (
            AXES[5],
            1 + min(4, future),
            f"将来の目標に触れる表現が{future}か所あります。大学での学びとの結びつきを明確にしましょう。",
        ),
        (
            AXES[6],
            5 - per_1000 / 2,
            f"表記上の指摘が{style_issue_count}件（1,000字あたり{per_1000:.1f}件）あります。",
        ),
    ]
    scores = [AxisScore(axis=axis, score=_clamp(value), reason=reason) for axis, value, reason in items]
    summary = "評価の観点: " + "、".join(f"{s.axis} {s.score}" for s in scores)
    if lessons:
        summary += "。過去の評価からの注意: " + " / ".join(lessons)
    return Rubric(scores=scores, summary=summary)


__all__ = ["AXES", "AxisScore", "Rubric", "heuristic_scores", "load_rubric", "policy_keywords"]
