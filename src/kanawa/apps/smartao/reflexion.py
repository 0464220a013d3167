"""Evaluations kept, cached and learned from (seed 002 §4 EvalAgent, "apply_reflexion" nightly).

:class:`EvalStore` is a SQLite file holding every rubric EvalAgent produced, keyed by
:func:`evaluation_key` (a hash of the rubric version and every input that changes the rubric:
:class:`EvaluationInputs` — the essay, the policy, the style backend and its findings, the models …),
so the same essay in the same run is scored once — the rubric cache — and the day's evaluations can be
read back at night.

:func:`apply_reflexion` is the nightly job: it reads one day's evaluations, finds the axes students
scored low on (mean below :data:`LOW_MEAN`) and stores one *lesson* per such axis. EvalAgent adds the
latest lessons to its instructions, so the next day's feedback stresses what the cohort struggles
with. It is a plain function of a database path and a day — a Celery beat task calls it as it is, and
so does ``kanawa smartao reflexion``.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json
import sqlite3
from collections import defaultdict
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from kanawa.apps.smartao.rubric import AXES, Rubric, load_rubric

LOW_MEAN = 3.0
"""Axes whose mean score for the day is below this get a lesson."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS evaluations (
    key TEXT PRIMARY KEY, day TEXT NOT NULL, rubric TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS lessons (
    day TEXT NOT NULL, axis TEXT NOT NULL, lesson TEXT NOT NULL, PRIMARY KEY (day, axis));
"""


@dataclass(frozen=True, slots=True)
class EvaluationInputs:
    """Everything a rubric depends on, so a cached rubric is reused only for the run it describes.

    Not only the essay and the policy: EvalAgent's evidence counts Style's issues (so the style
    backend that found them, textlint or the Sudachi rules, changes the rubric), Guard's similarity
    and Ref's references, and it reads the latest lessons; its answer depends on its model and on the
    Coordinator's model that hands over to it; the request's kind and school frame the essay.
    """

    essay: str
    policy: str = ""
    kind: str = ""
    university: str = ""
    faculty: str = ""
    style_backend: str = ""
    """``textlint``, ``sudachi``, or empty when StyleAgent did not run."""
    style_issues: tuple[str, ...] = ()
    """Each issue Style found, as ``rule@start-end``."""
    plagiarism_score: float | None = None
    references: int = 0
    lessons: tuple[str, ...] = ()
    models: tuple[str, ...] = ()
    """The models that write the rubric (EvalAgent's, the Coordinator's), as ``provider:model``."""


def evaluation_key(inputs: EvaluationInputs) -> str:
    """The cache key of one evaluation: the rubric's version and every field of ``inputs``."""
    parts = {"rubric_version": str(load_rubric()["version"]), **dataclasses.asdict(inputs)}
    text = json.dumps(parts, ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def _today() -> str:
    return dt.datetime.now(dt.UTC).date().isoformat()


class EvalStore:
    """``EvalStore(path)``: evaluations and lessons in one SQLite file (created on first use).

    Each method opens and closes its own connection, so a store is safe to share between threads and
    processes (a web worker writes, the nightly job reads)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with closing(self._connect()) as db, db:
            db.executescript(_SCHEMA)

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=10)

    def get(self, key: str) -> Rubric | None:
        """The cached rubric for ``key``, if any."""
        with closing(self._connect()) as db:
            row = db.execute("SELECT rubric FROM evaluations WHERE key = ?", (key,)).fetchone()
        return None if row is None else Rubric.model_validate_json(row[0])

    def put(self, key: str, rubric: Rubric, *, day: str | None = None) -> None:
        """Keep ``rubric`` under ``key`` for ``day`` (default: today, UTC)."""
        with closing(self._connect()) as db, db:
            db.execute(
                "INSERT OR REPLACE INTO evaluations (key, day, rubric) VALUES (?, ?, ?)",
                (key, day or _today(), rubric.model_dump_json()),
            )

    def evaluations(self, day: str) -> list[Rubric]:
        with closing(self._connect()) as db:
            rows = db.execute("SELECT rubric FROM evaluations WHERE day = ? ORDER BY key", (day,)).fetchall()
        return [Rubric.model_validate_json(r[0]) for r in rows]

    def save_lessons(self, day: str, lessons: dict[str, str]) -> None:
        with closing(self._connect()) as db, db:
            db.execute("DELETE FROM lessons WHERE day = ?", (day,))
            db.executemany(
                "INSERT INTO lessons (day, axis, lesson) VALUES (?, ?, ?)",
                [(day, axis, lesson) for axis, lesson in lessons.items()],
            )

    def latest_lessons(self, *, limit: int = 5) -> tuple[str, ...]:
        """The lessons of the most recent day that has any."""
        with closing(self._connect()) as db:
            row = db.execute("SELECT MAX(day) FROM lessons").fetchone()
            if row is None or row[0] is None:
                return ()
            rows = db.execute(
                "SELECT lesson FROM lessons WHERE day = ? ORDER BY axis LIMIT ?", (row[0], limit)
            ).fetchall()
        return tuple(r[0] for r in rows)


def apply_reflexion(db_path: str | Path, *, day: str | None = None) -> dict[str, str]:
    """The nightly job: learn lessons from ``day``'s evaluations (default: today, UTC) in the store at
    ``db_path`` and save them; returns ``{axis: lesson}`` (empty when no axis was low or nothing was
    evaluated). Re-running it for the same day replaces that day's lessons."""
    when = day or _today()
    dt.date.fromisoformat(when)  # ValueError for a malformed day, before touching the store
    store = EvalStore(db_path)
    rubrics = store.evaluations(when)
    totals: dict[str, list[int]] = defaultdict(list)
    for rubric in rubrics:
        for score in rubric.scores:
            totals[score.axis].append(score.score)
    lessons: dict[str, str] = {}
    for axis in AXES:
        scores = totals.get(axis)
        if not scores:
            continue
        mean = sum(scores) / len(scores)
        if mean < LOW_MEAN:
            lessons[axis] = (
                f"{when}: 「{axis}」の平均が{mean:.1f}点（{len(scores)}件）。"
                "この観点は理由を具体的に示し、書き直しの例を一つ添えること。"
            )
    store.save_lessons(when, lessons)
    return lessons


__all__ = ["LOW_MEAN", "EvalStore", "EvaluationInputs", "apply_reflexion", "evaluation_key"]
