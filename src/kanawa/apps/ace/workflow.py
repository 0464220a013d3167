"""``AdaptationWorkflow``: Generator → Reflector → Curator over a dataset (ACE's adaptation loop).

- **offline** (:meth:`AdaptationWorkflow.run_offline`) — ``epochs`` passes over training samples; after
  each sample the playbook is updated, so later samples (and later epochs) see what earlier ones taught.
- **online** (:meth:`AdaptationWorkflow.run_online`) — one pass over a stream of tasks: each is answered
  with the playbook as it stands (that answer is what counts), then reflected on and curated.

Samples are JSON lines: ``{"question": ..., "answer": ...}`` (ground truth) and/or ``"feedback"``
(execution feedback), optionally ``"id"``; ``"query"``/``"task"`` and ``"ground_truth"`` are accepted
too. Correctness is judged by ``evaluator`` (default: the normalised ground truth occurs in the
answer). A sample whose generation, reflection or curation fails is recorded with its error and the
run goes on.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from pydantic import BaseModel, Field, model_validator

from kanawa.apps.ace.curator import Curator
from kanawa.apps.ace.generator import GeneratorAgent
from kanawa.apps.ace.operations import AuditRecord
from kanawa.apps.ace.reflector import Reflection, Reflector
from kanawa.apps.ace.store.base import PlaybookStore
from kanawa.apps.ace.trajectory import Trajectory

Evaluator = Callable[[str, str], bool]
StepCallback = Callable[["StepRecord"], None]


class Sample(BaseModel):
    """One task of an adaptation dataset."""

    question: str
    answer: str | None = None
    feedback: str | None = None
    id: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _aliases(cls, data: object) -> object:
        if isinstance(data, dict):
            data = dict(data)
            for alias in ("query", "task"):
                if "question" not in data and alias in data:
                    data["question"] = data.pop(alias)
            if "answer" not in data and "ground_truth" in data:
                data["answer"] = data.pop("ground_truth")
            if data.get("answer") is not None and not isinstance(data["answer"], str):
                data["answer"] = json.dumps(data["answer"], ensure_ascii=False)
        return data


class StepRecord(BaseModel):
    epoch: int
    index: int
    sample_id: str | None
    trajectory: Trajectory
    correct: bool | None
    reflection: Reflection | None = None
    audit: list[AuditRecord] = Field(default_factory=list)
    error: str | None = None


class EpochSummary(BaseModel):
    epoch: int
    samples: int
    correct: int
    judged: int
    bullets_after: int
    operations: dict[str, int]

    @property
    def accuracy(self) -> float | None:
        return None if self.judged == 0 else self.correct / self.judged


class AdaptationReport(BaseModel):
    dataset: str
    mode: str
    bullets_before: int
    bullets_after: int
    epochs: list[EpochSummary]
    steps: list[StepRecord]


def load_jsonl(path: str | Path, *, text: str | None = None) -> list[Sample]:
    """Read samples from ``path`` (UTF-8), or parse ``text`` already read from it; a bad line raises
    ``ValueError`` naming the file and line number."""
    samples = []
    content = Path(path).read_text(encoding="utf-8") if text is None else text
    for number, line in enumerate(content.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            samples.append(Sample.model_validate_json(line))
        except ValueError as exc:
            raise ValueError(f"{path}:{number}: not a sample ({str(exc).splitlines()[0]})") from None
    return samples


def normalise_answer(text: str) -> str:
    return re.sub(r"[\s,、。.]+", "", text.casefold())


def contains_answer(answer: str, truth: str) -> bool:
    """Default evaluator: the normalised ground truth occurs in the normalised answer."""
    expected = normalise_answer(truth)
    return bool(expected) and expected in normalise_answer(answer)


class AdaptationWorkflow:
    """Runs the ACE loop (see the module docstring).

    Args:
        generator: the Generator role.
        reflector: the Reflector role.
        curator: the Curator role.
        store: the playbook store the curator updates (the generator's store, normally).
        evaluator: ``(answer, ground_truth) -> bool``.
        on_step: called after each sample (progress bars, logs).
    """

    def __init__(
        self,
        generator: GeneratorAgent,
        reflector: Reflector,
        curator: Curator,
        store: PlaybookStore,
        *,
        evaluator: Evaluator = contains_answer,
        on_step: StepCallback | None = None,
    ) -> None:
        self.generator = generator
        self.reflector = reflector
        self.curator = curator
        self.store = store
        self.evaluator = evaluator
        self.on_step = on_step

    async def step(self, dataset: str, sample: Sample, *, epoch: int = 1, index: int = 0) -> StepRecord:
        """Generate, judge, reflect, curate one sample."""
        trajectory = await self.generator.arun(sample.question, dataset)
        correct = (
            self.evaluator(trajectory.generated_answer, sample.answer)
            if sample.answer is not None and trajectory.status == "success"
            else (False if sample.answer is not None else None)
        )
        record = StepRecord(
            epoch=epoch, index=index, sample_id=sample.id, trajectory=trajectory, correct=correct
        )
        try:
            playbook = await self.store.aload(dataset)
            bullets = [b for b in (playbook.get(i) for i in trajectory.used_bullet_ids) if b is not None]
            feedback = sample.feedback
            if trajectory.status == "failure":
                feedback = f"{feedback or ''}\nThe attempt failed: {trajectory.error_message}".strip()
            reflection = await self.reflector.reflect(
                trajectory, bullets=bullets, ground_truth=sample.answer, feedback=feedback
            )
            record.reflection = reflection
            result = await self.curator.update(self.store, dataset, reflection, trajectory)
            record.audit = result.audit
        except Exception as exc:  # one bad sample must not end an adaptation run
            record.error = f"{type(exc).__name__}: {' '.join(str(exc).split())}"[:500]
        if self.on_step is not None:
            self.on_step(record)
        return record

    async def run_offline(
        self, dataset: str, samples: Sequence[Sample], *, epochs: int = 1
    ) -> AdaptationReport:
        """``epochs`` passes over ``samples``, updating the playbook after each."""
        if epochs < 1:
            raise ValueError("epochs must be >= 1")
        return await self._run(dataset, samples, epochs=epochs, mode="offline")

    async def run_online(self, dataset: str, samples: Iterable[Sample]) -> AdaptationReport:
        """One pass: answer each task with the current playbook, then learn from it."""
        return await self._run(dataset, list(samples), epochs=1, mode="online")

    async def _run(
        self, dataset: str, samples: Sequence[Sample], *, epochs: int, mode: str
    ) -> AdaptationReport:
        before = len(await self.store.aload(dataset))
        steps: list[StepRecord] = []
        summaries: list[EpochSummary] = []
        for epoch in range(1, epochs + 1):
            records = [
                await self.step(dataset, sample, epoch=epoch, index=i) for i, sample in enumerate(samples)
            ]
            steps.extend(records)
            counts: dict[str, int] = {}
            for record in records:
                for entry in record.audit:
                    if entry.status == "applied":
                        counts[entry.type] = counts.get(entry.type, 0) + 1
            judged = [r for r in records if r.correct is not None]
            summaries.append(
                EpochSummary(
                    epoch=epoch,
                    samples=len(records),
                    correct=sum(1 for r in judged if r.correct),
                    judged=len(judged),
                    bullets_after=len(await self.store.aload(dataset)),
                    operations=counts,
                )
            )
        after = len(await self.store.aload(dataset))
        return AdaptationReport(
            dataset=dataset,
            mode=mode,
            bullets_before=before,
            bullets_after=after,
            epochs=summaries,
            steps=steps,
        )


__all__ = [
    "AdaptationReport",
    "AdaptationWorkflow",
    "EpochSummary",
    "Sample",
    "StepRecord",
    "contains_answer",
    "load_jsonl",
]
