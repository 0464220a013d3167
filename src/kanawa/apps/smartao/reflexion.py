"""Evaluations kept, cached and learned from (seed 002 §4 EvalAgent, "apply_reflexion" nightly).

:class:`EvalStore` is a SQLite file holding every rubric EvalAgent produced, keyed by
:func:`evaluation_key` (a hash of the rubric version and every input that changes the rubric:
:class:`EvaluationInputs` — the essay, the policy, the style backend and its findings, the models …),
so the same essay in the same run is scored once — the rubric cache — and the day's evaluations can be
read back at night. Everything is kept per *tenant* (the served API key's tenant; ``""`` outside the
server): the tenant is part of the cache key, so one tenant's essay never answers from another's
cache, and each tenant learns its own lessons from its own evaluations.

:func:`apply_reflexion` is the nightly job: it reads one day's evaluations, finds the axes students
scored low on (mean below :data:`LOW_MEAN`) and stores one *lesson* per such axis, for each tenant
that has evaluations that day. EvalAgent adds the tenant's latest lessons to its instructions, so
the next day's feedback stresses what the cohort struggles with. It is a plain function of a
database path and a day — a Celery beat task calls it as it is, and so does
``kanawa smartao reflexion``.
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
    key TEXT PRIMARY KEY, day TEXT NOT NULL, rubric TEXT NOT NULL, tenant TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS tenant_lessons (
    tenant TEXT NOT NULL, day TEXT NOT NULL, axis TEXT NOT NULL, lesson TEXT NOT NULL,
    PRIMARY KEY (tenant, day, axis));
"""
"""The tables (a store written before lessons were per tenant has a ``lessons`` table, no longer read:
the next nightly job learns each tenant's lessons again; its ``evaluations`` gain a ``tenant`` column,
``''`` for its rows)."""


@dataclass(frozen=True, slots=True)
class EvaluationInputs:
    """Everything a rubric depends on, so a cached rubric is reused only for the run it describes.

    Not only the essay and the policy: EvalAgent's evidence counts Style's issues (so the style
    backend that found them, textlint or the Sudachi rules, changes the rubric), Guard's similarity
    and Ref's references, and it reads the latest lessons; its answer depends on its model and on the
    Coordinator's model that hands over to it; the request's kind and school frame the essay.
    """

    essay: str
    tenant: str = ""
    """Whose run it is: a cached rubric never crosses tenants (and the lessons read are the tenant's)."""
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
            columns = {row[1] for row in db.execute("PRAGMA table_info(evaluations)")}
            if "tenant" not in columns:
                db.execute("ALTER TABLE evaluations ADD COLUMN tenant TEXT NOT NULL DEFAULT ''")

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=10)

    def get(self, key: str) -> Rubric | None:
        """The cached rubric for ``key``, if any."""
        with closing(self._connect()) as db:
            row = db.execute("SELECT rubric FROM evaluations WHERE key = ?", (key,)).fetchone()
        return None if row is None else Rubric.model_validate_json(row[0])

    def put(self, key: str, rubric: Rubric, *, day: str | None = None, tenant: str = "") -> None:
        """Keep ``tenant``'s ``rubric`` under ``key`` for ``day`` (default: today, UTC)."""
        with closing(self._connect()) as db, db:
            db.execute(
                "INSERT OR REPLACE INTO evaluations (key, day, rubric, tenant) VALUES (?, ?, ?, ?)",
                (key, day or _today(), rubric.model_dump_json(), tenant),
            )

    def evaluations(self, day: str, *, tenant: str = "") -> list[Rubric]:
        """``tenant``'s evaluations of ``day``."""
        with closing(self._connect()) as db:
            rows = db.execute(
                "SELECT rubric FROM evaluations WHERE day = ? AND tenant = ? ORDER BY key", (day, tenant)
            ).fetchall()
        return [Rubric.model_validate_json(r[0]) for r in rows]

    def tenants(self, day: str) -> list[str]:
        """The tenants with evaluations on ``day``, or lessons saved for it."""
        with closing(self._connect()) as db:
            rows = db.execute(
                "SELECT tenant FROM evaluations WHERE day = ? UNION SELECT tenant FROM tenant_lessons "
                "WHERE day = ? ORDER BY tenant",
                (day, day),
            ).fetchall()
        return [r[0] for r in rows]

    def save_lessons(self, day: str, lessons: dict[str, str], *, tenant: str = "") -> None:
        """``tenant``'s lessons for ``day``, replacing any saved before."""
        with closing(self._connect()) as db, db:
            db.execute("DELETE FROM tenant_lessons WHERE tenant = ? AND day = ?", (tenant, day))
            db.executemany(
                "INSERT INTO tenant_lessons (tenant, day, axis, lesson) VALUES (?, ?, ?, ?)",
                [(tenant, day, axis, lesson) for axis, lesson in lessons.items()],
            )

    def latest_lessons(self, *, tenant: str = "", limit: int = 5) -> tuple[str, ...]:
        """``tenant``'s lessons of the most recent day it has any."""
        with closing(self._connect()) as db:
            row = db.execute("SELECT MAX(day) FROM tenant_lessons WHERE tenant = ?", (tenant,)).fetchone()
            if row is None or row[0] is None:
                return ()
            rows = db.execute(
                "SELECT lesson FROM tenant_lessons WHERE tenant = ? AND day = ? ORDER BY axis LIMIT ?",
                (tenant, row[0], limit),
            ).fetchall()
        return tuple(r[0] for r in rows)


def apply_reflexion(db_path: str | Path, *, day: str | None = None) -> dict[str, dict[str, str]]:
    """The nightly job: learn each tenant's lessons from its own evaluations of ``day`` (default: today,
    UTC) in the store at ``db_path`` and save them; returns ``{tenant: {axis: lesson}}`` for the
    tenants that got any (``""`` is the tenant of runs outside the server). Re-running it for the same
    day replaces that day's lessons."""
    when = day or _today()
    dt.date.fromisoformat(when)  # ValueError for a malformed day, before touching the store
    store = EvalStore(db_path)
    learned: dict[str, dict[str, str]] = {}
    for tenant in store.tenants(when):
        lessons = _lessons(store.evaluations(when, tenant=tenant), when)
        store.save_lessons(when, lessons, tenant=tenant)
        if lessons:
            learned[tenant] = lessons
    return learned


def _lessons(rubrics: list[Rubric], when: str) -> dict[str, str]:
    """One lesson per axis whose mean score in ``rubrics`` is below :data:`LOW_MEAN`."""
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
    return lessons


__all__ = ["LOW_MEAN", "EvalStore", "EvaluationInputs", "apply_reflexion", "evaluation_key"]
