"""An eval's results: one :class:`CaseResult` per case and repeat, gathered in an :class:`EvalReport`.

The report is plain data that round-trips through JSON (``save``/``load``) so ``kanawa eval compare``
can read two runs made on different days, machines or branches. :meth:`EvalReport.per_case_scores`
is the shape ``compare`` pairs on: scorer → case → one value per repeat (assertions as 1.0/0.0).
Rendering (table, Markdown, HTML) lives in :mod:`kanawa.evals.render`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic_core import to_jsonable_python

from kanawa.evals.scoring import Assertion, Outcome, Score, outcome_value
from kanawa.types import JsonValue, Usage

if TYPE_CHECKING:
    from kanawa.trace.events import TraceEvent

REPORT_FORMAT = 1
"""Bumped when the JSON shape changes incompatibly; ``load`` refuses a newer one with a clear error."""


class ReportFileError(ValueError):
    """A report file is unreadable, not a kanawa eval report, or from a newer format."""


class _TraceRecords:
    """``CaseResult.trace``: the run's trace records, made from the events it emitted the first time
    they are read.

    The runner hands a result the events its run emitted (the list the run's trace sink already
    holds) rather than records: making a JSON-ready dict of every event while the eval runs cost more
    than the rest of the harness's work per case, and a report reads a case's records only when it
    is rendered or saved."""

    def __get__(
        self, result: CaseResult | None, owner: type | None = None
    ) -> list[dict[str, JsonValue]] | None:
        if result is None:
            return None  # the field's default
        state = result.__dict__
        records: list[dict[str, JsonValue]] | None = state.get("_trace")
        events: Sequence[TraceEvent] | None = state.get("_trace_events")
        if records is None and events is not None:
            from kanawa.trace.serialize import event_to_record

            records = state["_trace"] = [event_to_record(e) for e in events]
            state["_trace_events"] = None
        return records

    def __set__(self, result: CaseResult, records: list[dict[str, JsonValue]] | None) -> None:
        result.__dict__["_trace"] = records
        result.__dict__["_trace_events"] = None


@dataclass
class CaseResult:
    """One run of one case (``repeat`` counts from 0): what came back, how it scored, what it cost,
    and where its trace is (``trace_path``/``run_id``) for the drill-down."""

    case: str
    repeat: int
    output: Any
    text: str
    _: KW_ONLY
    outcomes: list[Outcome] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = None
    duration_ms: float = 0.0
    error: str | None = None
    trace_path: str | None = None
    run_id: str | None = None
    scorer_errors: dict[str, str] = field(default_factory=dict)
    """Scorers that could not give a verdict (a judge whose provider failed), name → why: the case is
    errored for them, not failed, and ``compare`` leaves it out of their paired tests."""
    trace: _TraceRecords = _TraceRecords()
    """The run's trace records (as a JSONL trace line each), for the HTML drill-down."""

    def keep_trace_events(self, events: Sequence[TraceEvent]) -> None:
        """Keep the run's trace as the events it emitted (not copied); :attr:`trace` makes the
        records when it is first read."""
        self.__dict__["_trace"] = None
        self.__dict__["_trace_events"] = events

    @property
    def passed(self) -> bool:
        """No error, every scorer gave a verdict and every assertion passed (scores do not fail a
        case)."""
        return (
            self.error is None
            and not self.scorer_errors
            and all(o.passed for o in self.outcomes if isinstance(o, Assertion))
        )

    @property
    def errored(self) -> bool:
        """The run failed, or a scorer could not judge it: neither a pass nor a fail."""
        return self.error is not None or bool(self.scorer_errors)

    def to_dict(self) -> dict[str, Any]:
        return {
            "case": self.case,
            "repeat": self.repeat,
            "output": to_jsonable_python(self.output, fallback=repr),
            "text": self.text,
            "outcomes": [_outcome_to_dict(o) for o in self.outcomes],
            "usage": _usage_to_dict(self.usage),
            "cost_usd": self.cost_usd,
            "duration_ms": self.duration_ms,
            "error": self.error,
            "scorer_errors": dict(self.scorer_errors),
            "trace_path": self.trace_path,
            "run_id": self.run_id,
            "trace": self.trace,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CaseResult:
        return cls(
            case=str(data["case"]),
            repeat=int(data.get("repeat", 0)),
            output=data.get("output"),
            text=str(data.get("text", "")),
            outcomes=[_outcome_from_dict(o) for o in data.get("outcomes", [])],
            usage=Usage(
                **{k: int(v) for k, v in dict(data.get("usage") or {}).items() if k in _USAGE_FIELDS}
            ),
            cost_usd=_opt_float(data.get("cost_usd")),
            duration_ms=float(data.get("duration_ms", 0.0)),
            error=data.get("error"),
            scorer_errors={str(k): str(v) for k, v in dict(data.get("scorer_errors") or {}).items()},
            trace_path=data.get("trace_path"),
            run_id=data.get("run_id"),
            trace=list(data["trace"]) if isinstance(data.get("trace"), list) else None,
        )


@dataclass
class EvalReport:
    """All results of one eval run.

    ``stopped_reason`` says why the eval ended early (e.g. the budget was used up) and ``skipped``
    lists the case runs that never started, so a partial report is honest about where it stopped.
    ``judge_cost_usd`` is what LLM judges cost on top of the runs themselves.
    """

    name: str
    target: str
    _: KW_ONLY
    started_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    results: list[CaseResult] = field(default_factory=list)
    stopped_reason: str | None = None
    judge_cost_usd: float = 0.0
    skipped: list[str] = field(default_factory=list)
    finished_at: datetime | None = None
    repeat: int = 1
    metadata: dict[str, Any] = field(default_factory=dict)

    # --- summaries ---------------------------------------------------------------------------------

    def case_names(self) -> list[str]:
        """Case names in first-seen order."""
        return list(dict.fromkeys(r.case for r in self.results))

    def scorer_names(self) -> list[str]:
        """Scorer (outcome) names in first-seen order."""
        return list(dict.fromkeys(o.name for r in self.results for o in r.outcomes))

    def per_case_scores(self) -> dict[str, dict[str, list[float]]]:
        """scorer → case → values over repeats; assertions count as 1.0/0.0 (``compare``'s input)."""
        table: dict[str, dict[str, list[float]]] = {}
        for result in sorted(self.results, key=lambda r: r.repeat):
            for outcome in result.outcomes:
                table.setdefault(outcome.name, {}).setdefault(result.case, []).append(outcome_value(outcome))
        return table

    def unjudged(self) -> dict[str, set[str]]:
        """scorer → the cases it could not judge in some run (``CaseResult.scorer_errors``)."""
        table: dict[str, set[str]] = {}
        for result in self.results:
            for name in result.scorer_errors:
                table.setdefault(name, set()).add(result.case)
        return table

    @property
    def total_cost_usd(self) -> float:
        """Runs plus judges (unpriced runs count 0)."""
        return sum(r.cost_usd or 0.0 for r in self.results) + self.judge_cost_usd

    @property
    def total_usage(self) -> Usage:
        total = Usage()
        for result in self.results:
            total = total + result.usage
        return total

    @property
    def pass_rate(self) -> float:
        """Share of case runs with no error and every assertion passed (0 when nothing ran)."""
        return sum(r.passed for r in self.results) / len(self.results) if self.results else 0.0

    # --- JSON --------------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        return {
            "kanawa_eval_report": REPORT_FORMAT,
            "name": self.name,
            "target": self.target,
            "started_at": self.started_at.isoformat(),
            "finished_at": self.finished_at.isoformat() if self.finished_at else None,
            "repeat": self.repeat,
            "stopped_reason": self.stopped_reason,
            "skipped": list(self.skipped),
            "judge_cost_usd": self.judge_cost_usd,
            "metadata": to_jsonable_python(self.metadata, fallback=repr),
            "results": [r.to_dict() for r in self.results],
        }

    def to_json(self, *, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=indent)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EvalReport:
        version = data.get("kanawa_eval_report")
        if not isinstance(version, int):
            raise ReportFileError("not a kanawa eval report (no 'kanawa_eval_report' format field)")
        if version > REPORT_FORMAT:
            raise ReportFileError(
                f"report format {version} is newer than this kanawa reads ({REPORT_FORMAT})"
            )
        try:
            finished = data.get("finished_at")
            return cls(
                name=str(data["name"]),
                target=str(data.get("target", "")),
                started_at=datetime.fromisoformat(str(data["started_at"])),
                finished_at=datetime.fromisoformat(str(finished)) if finished else None,
                repeat=int(data.get("repeat", 1)),
                results=[CaseResult.from_dict(r) for r in data.get("results", [])],
                stopped_reason=data.get("stopped_reason"),
                skipped=[str(s) for s in data.get("skipped", [])],
                judge_cost_usd=float(data.get("judge_cost_usd", 0.0)),
                metadata=dict(data.get("metadata") or {}),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ReportFileError(f"malformed eval report: {exc!r}") from None

    @classmethod
    def from_json(cls, text: str) -> EvalReport:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ReportFileError(f"not JSON (line {exc.lineno}: {exc.msg})") from None
        if not isinstance(data, dict):
            raise ReportFileError("not a kanawa eval report (not a JSON object)")
        return cls.from_dict(data)

    def save(self, path: str | os.PathLike[str]) -> Path:
        file = Path(path)
        file.write_text(self.to_json() + "\n", encoding="utf-8")
        return file

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> EvalReport:
        file = Path(path)
        try:
            text = file.read_text(encoding="utf-8")
        except OSError as exc:
            raise ReportFileError(f"cannot read {file}: {exc.strerror or exc}") from None
        try:
            return cls.from_json(text)
        except ReportFileError as exc:
            raise ReportFileError(f"{file}: {exc}") from None


_USAGE_FIELDS = (
    "input_tokens",
    "output_tokens",
    "reasoning_tokens",
    "cached_tokens",
    "requests",
    "cache_write_tokens",
)


def _usage_to_dict(usage: Usage) -> dict[str, int]:
    return {name: int(getattr(usage, name)) for name in _USAGE_FIELDS}


def _opt_float(value: Any) -> float | None:
    return None if value is None else float(value)


def _outcome_to_dict(outcome: Outcome) -> dict[str, Any]:
    if isinstance(outcome, Assertion):
        return {"kind": "assertion", "name": outcome.name, "passed": outcome.passed, "reason": outcome.reason}
    return {"kind": "score", "name": outcome.name, "value": outcome.value, "reason": outcome.reason}


def _outcome_from_dict(data: Mapping[str, Any]) -> Outcome:
    if data.get("kind") == "assertion":
        return Assertion(str(data["name"]), bool(data["passed"]), str(data.get("reason", "")))
    if data.get("kind") == "score":
        return Score(str(data["name"]), float(data["value"]), str(data.get("reason", "")))
    raise ValueError(f"unknown outcome kind {data.get('kind')!r}")


__all__ = ["REPORT_FORMAT", "CaseResult", "EvalReport", "ReportFileError"]
