"""The learning report: the curve (score by epoch, train and held-out), the playbook's growth, the
cost per role, and every step that changed the playbook.

Epoch 0 is the baseline: both splits answered with the starting playbook, nothing learned. Epoch *k*
(k ≥ 1) has the training pass — each training case scored with the playbook as it stood when the case
was answered, then, when it failed, reflected on and curated — and the held-out split re-scored with
the playbook the pass left. Held-out :class:`CaseScore` entries never carry feedback (see
:mod:`kanawa.apps.ace.learning.examine`).

:class:`LearningReport` is plain data (JSON via ``save``/``load``); :mod:`kanawa.apps.ace.learning.render`
draws it as Markdown, a rich table and an HTML page.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from kanawa.apps.ace.operations import AuditRecord

Role = Literal["generator", "reflector", "curator"]
OPERATION_TYPES = ("ADD", "UPDATE", "TAG", "REMOVE", "MERGE")


class CaseScore(BaseModel):
    """One case in one epoch. ``feedback`` (the failed scorers' reasons) is set for training cases only."""

    name: str
    score: float
    passed: bool
    output: str
    error: str | None = None
    feedback: str | None = None
    used_bullet_ids: list[str] = Field(default_factory=list)
    by_scorer: dict[str, float] = Field(default_factory=dict)
    """Each scorer's value for this case (an assertion counts 1 or 0): what ``compare`` pairs."""


class SplitScore(BaseModel):
    """A split's result in one epoch: mean case score, pass rate and each scorer's mean."""

    split: Literal["train", "held_out"]
    cases: list[CaseScore]
    mean: float
    pass_rate: float
    by_scorer: dict[str, float] = Field(default_factory=dict)


class LearningStep(BaseModel):
    """One training case (a failed one, or any with ``learn_from_passes``) turned into playbook
    operations (the audit says what each did)."""

    epoch: int
    index: int
    case: str
    score: float
    feedback: str
    key_insight: str = ""
    audit: list[AuditRecord] = Field(default_factory=list)
    error: str | None = None


class RoleCost(BaseModel):
    """What one role spent; ``cost_usd`` is ``None`` when its model has no known price."""

    role: Role
    model: str
    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = 0.0


class EpochRecord(BaseModel):
    epoch: int
    train: SplitScore
    held_out: SplitScore
    bullets: int
    operations: dict[str, int] = Field(default_factory=dict)
    steps: list[LearningStep] = Field(default_factory=list)
    playbook_diff: str = ""
    cost: list[RoleCost] = Field(default_factory=list)


class CurvePoint(BaseModel):
    epoch: int
    train: float
    held_out: float
    train_pass_rate: float
    held_out_pass_rate: float
    bullets: int


class HeldOutVerdict(BaseModel):
    """Whether the held-out change from the baseline to the last epoch is real:
    :func:`kanawa.evals.compare.compare_scores` over the held-out cases, paired per case and scorer
    (``comparison`` is its ``to_dict()``: means, the change with its confidence interval, p-values and
    a verdict per scorer — improved, worse or no-real-change)."""

    baseline_epoch: int
    final_epoch: int
    improved: bool
    regressed: bool
    comparison: dict[str, Any]


class LearningReport(BaseModel):
    """Everything :func:`~kanawa.apps.ace.learning.alearn` did (see the module docstring)."""

    dataset: str
    playbook: str
    started_at: datetime
    finished_at: datetime
    settings: dict[str, Any] = Field(default_factory=dict)
    train_cases: list[str]
    held_out_cases: list[str]
    epochs: list[EpochRecord]
    initial_playbook: str
    final_playbook: str
    cost: list[RoleCost] = Field(default_factory=list)
    held_out_verdict: HeldOutVerdict | None = None

    @property
    def curve(self) -> list[CurvePoint]:
        """The learning curve, epoch 0 (baseline) first."""
        return [
            CurvePoint(
                epoch=e.epoch,
                train=e.train.mean,
                held_out=e.held_out.mean,
                train_pass_rate=e.train.pass_rate,
                held_out_pass_rate=e.held_out.pass_rate,
                bullets=e.bullets,
            )
            for e in self.epochs
        ]

    @property
    def total_cost_usd(self) -> float | None:
        total = 0.0
        for role in self.cost:
            if role.cost_usd is None:
                return None
            total += role.cost_usd
        return total

    def to_json(self) -> str:
        return self.model_dump_json(indent=2)

    @classmethod
    def from_json(cls, text: str) -> LearningReport:
        return cls.model_validate_json(text)

    def save(self, path: str | Path) -> Path:
        """Write JSON (``.json``), Markdown (``.md``) or HTML (``.html``) by the file's suffix."""
        from kanawa.apps.ace.learning.render import to_html, to_markdown

        target = Path(path)
        suffix = target.suffix.lower()
        if suffix == ".md":
            text = to_markdown(self)
        elif suffix in (".html", ".htm"):
            text = to_html(self)
        elif suffix == ".json":
            text = self.to_json() + "\n"
        else:
            raise ValueError(f"{target.name}: a learning report is saved as .json, .md or .html")
        target.write_text(text, encoding="utf-8")
        return target

    @classmethod
    def load(cls, path: str | Path) -> LearningReport:
        return cls.from_json(Path(path).read_text(encoding="utf-8"))


__all__ = [
    "OPERATION_TYPES",
    "CaseScore",
    "CurvePoint",
    "EpochRecord",
    "HeldOutVerdict",
    "LearningReport",
    "LearningStep",
    "Role",
    "RoleCost",
    "SplitScore",
]
