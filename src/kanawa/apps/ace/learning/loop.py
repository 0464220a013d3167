"""``alearn()`` / ``learn()``: an eval dataset teaches an ACE playbook, epoch by epoch.

The protocol is ACE's offline adaptation (arXiv 2510.04618, §3; seed 004's roles):

1. the cases are split once into training and held-out
   (:func:`~kanawa.apps.ace.learning.split.split_dataset`);
2. epoch 0 scores both splits with the starting playbook (the baseline);
3. each epoch, the Generator answers every training case in order; the dataset's scorers grade the
   answer; a failing case goes to the Reflector with its ground truth (``use_ground_truth``) and the
   failed scorers' reasons as execution feedback, and the Curator turns the reflection into delta
   operations the store applies at once — so the next case already sees what this one taught;
4. after the pass, the held-out split is answered with the playbook as it now stands, read-only.

Held-out labels never reach learning, by construction rather than by care: the held-out cases are
sealed in :class:`~kanawa.apps.ace.learning.split.HeldOut`, whose only reader
(:class:`~kanawa.apps.ace.learning.examine.HeldOutExaminer`) gets the Generator and nothing else and
returns scores without reasons; the Reflector and Curator are only ever called from
:func:`_learn_from`, with a training case's grading. A test checks that a held-out case's expected
output appears in no prompt any role was sent.
"""

from __future__ import annotations

import contextlib
import difflib
import tempfile
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kanawa._sync import run_in_new_loop
from kanawa.apps.ace.curator import Curator
from kanawa.apps.ace.generator import GeneratorAgent
from kanawa.apps.ace.learning.examine import (
    Graded,
    Grader,
    QueryOf,
    eval_report,
    grade_all,
    label_text,
    save_report,
    summarise,
)
from kanawa.apps.ace.learning.metering import MeteredModel, Spend
from kanawa.apps.ace.learning.report import (
    OPERATION_TYPES,
    EpochRecord,
    HeldOutVerdict,
    LearningReport,
    LearningStep,
    Role,
    RoleCost,
    SplitScore,
)
from kanawa.apps.ace.learning.split import Split, split_dataset
from kanawa.apps.ace.playbook import Playbook
from kanawa.apps.ace.prompt_builder import PromptBuilder
from kanawa.apps.ace.reflector import Reflector
from kanawa.apps.ace.search.hybrid import HybridSearch
from kanawa.apps.ace.store.base import PlaybookStore, check_dataset
from kanawa.apps.ace.store.json_store import JsonPlaybookStore
from kanawa.apps.ace.trajectory import Trajectory
from kanawa.evals.cases import Dataset
from kanawa.llm.adapter import LLMAdapter
from kanawa.loop.options import RunOptions

Tick = Callable[[str, int], None]
"""Progress: called with the phase (``"train"`` / ``"held_out"``) and the epoch after each case."""

ROLES: tuple[Role, ...] = ("generator", "reflector", "curator")


def _meter(role: Role, specific: LLMAdapter | str | None, shared: LLMAdapter | str | None) -> MeteredModel:
    chosen = specific if specific is not None else shared
    if chosen is None:
        raise ValueError(f"no model for the {role}: pass model= or {role}_model=")
    if isinstance(chosen, str):
        from kanawa.llm.models import resolve_model

        return MeteredModel(resolve_model(chosen), owned=True)
    return MeteredModel(chosen)


async def _meters(
    specific: dict[Role, LLMAdapter | str | None], shared: LLMAdapter | str | None
) -> dict[Role, MeteredModel]:
    """A meter per role; when one role's model cannot be had, the ones already resolved are closed."""
    meters: dict[Role, MeteredModel] = {}
    try:
        for role in ROLES:
            meters[role] = _meter(role, specific[role], shared)
    except BaseException:
        for meter in meters.values():
            await meter.aclose()
        raise
    return meters


def playbook_key(name: str) -> str:
    """A store key from a dataset name (letters, digits, ``_ . -``; other characters become ``-``)."""
    cleaned = "".join(ch if (ch.isalnum() and ch.isascii()) or ch in "_.-" else "-" for ch in name)
    cleaned = cleaned.strip("-.") or "learned"
    return check_dataset(cleaned[:64].replace("..", "-"))


@contextlib.asynccontextmanager
async def _opened(store: PlaybookStore | None) -> AsyncIterator[PlaybookStore]:
    if store is not None:
        yield store
        return
    with tempfile.TemporaryDirectory(prefix="kanawa-ace-learn-") as directory:
        yield JsonPlaybookStore(root=Path(directory))


def _costs(meters: dict[Role, MeteredModel], since: dict[Role, Spend] | None = None) -> list[RoleCost]:
    rows = []
    for role in ROLES:
        spent = meters[role].spent if since is None else meters[role].spent.minus(since[role])
        rows.append(
            RoleCost(
                role=role,
                model=meters[role].model,
                requests=spent.usage.requests,
                input_tokens=spent.usage.input_tokens,
                output_tokens=spent.usage.output_tokens,
                cost_usd=spent.cost_usd,
            )
        )
    return rows


def _diff(before: str, after: str, epoch: int) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"playbook before epoch {epoch}",
        tofile=f"playbook after epoch {epoch}",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


class _Learner:
    """One learning run's parts; the Reflector and Curator are reachable only through :meth:`learn_from`."""

    def __init__(
        self,
        store: PlaybookStore,
        key: str,
        generator: GeneratorAgent,
        reflector: Reflector,
        curator: Curator,
        *,
        use_ground_truth: bool,
    ) -> None:
        self.store = store
        self.key = key
        self.generator = generator
        self._reflector = reflector
        self._curator = curator
        self.use_ground_truth = use_ground_truth

    async def generate(self, query: str, options: RunOptions) -> Trajectory:
        return await self.generator.arun(query, self.key, options=options)

    async def learn_from(self, graded: Graded, *, epoch: int, index: int) -> LearningStep:
        """Reflect on one training case and curate; an error is recorded, never raised."""
        feedback = graded.feedback or "the case failed its scorers"
        step = LearningStep(
            epoch=epoch, index=index, case=graded.case.name, score=graded.score, feedback=feedback
        )
        trajectory = graded.trajectory
        try:
            playbook = await self.store.aload(self.key)
            bullets = [b for b in (playbook.get(i) for i in trajectory.used_bullet_ids) if b is not None]
            truth = label_text(graded.case.expected_output) if self.use_ground_truth else None
            reflection = await self._reflector.reflect(
                trajectory, bullets=bullets, ground_truth=truth, feedback=feedback
            )
            step.key_insight = reflection.key_insight
            result = await self._curator.update(self.store, self.key, reflection, trajectory)
            step.audit = result.audit
        except Exception as exc:  # one bad case must not end a learning run
            step.error = f"{type(exc).__name__}: {' '.join(str(exc).split())}"[:500]
        return step

    async def aclose(self) -> None:
        await self.generator.aclose()
        await self._reflector.aclose()
        await self._curator.aclose()


async def alearn(
    dataset: Dataset[Any, Any],
    *,
    model: LLMAdapter | str | None = None,
    generator_model: LLMAdapter | str | None = None,
    reflector_model: LLMAdapter | str | None = None,
    curator_model: LLMAdapter | str | None = None,
    epochs: int = 3,
    held_out: float = 0.3,
    seed: int = 0,
    split: Split | None = None,
    playbook: Playbook | None = None,
    store: PlaybookStore | None = None,
    playbook_name: str | None = None,
    search: HybridSearch | None = None,
    top_k: int = 10,
    prompts_dir: str | Path | None = None,
    pass_threshold: float = 1.0,
    concurrency: int = 4,
    use_ground_truth: bool = True,
    learn_from_passes: bool = False,
    max_new_bullets: int = 3,
    token_budget: int | None = 20_000,
    query_of: QueryOf | None = None,
    on_case: Tick | None = None,
    eval_reports: str | Path | None = None,
) -> LearningReport:
    """Teach a playbook from ``dataset`` for ``epochs`` epochs and report the learning curve.

    Args:
        dataset: a :class:`kanawa.evals.Dataset` whose scorers say what a good answer is.
        model: the model of every role (a model string or an adapter); ``generator_model``,
            ``reflector_model`` and ``curator_model`` override it per role.
        epochs: training passes (each followed by a held-out evaluation); epoch 0 is the baseline.
        held_out: the fraction set aside when no case names its split (``metadata["split"]``);
            ``seed`` makes the split repeatable; ``split`` passes one made with
            :func:`~kanawa.apps.ace.learning.split_dataset`.
        playbook: the starting playbook (saved into ``store`` under ``playbook_name`` first); without
            it, learning continues from what ``store`` holds (an empty playbook in a fresh store).
        store: where the playbook lives (default: a temporary directory, gone afterwards — the
            report keeps the final playbook's text).
        playbook_name: the store key (default: the dataset's name, made a valid key).
        search: bullet retrieval (default: BM25 only, :class:`HybridSearch` with no embedder).
        top_k: bullets the Generator is shown per case.
        prompts_dir: Generator templates (default: the shipped ones).
        pass_threshold: the least value a numeric score needs for its case to pass.
        concurrency: held-out and baseline cases answered at once (training is sequential).
        use_ground_truth: give the Reflector a training case's expected output; ``False`` is ACE's
            label-free setting (scorer reasons only).
        learn_from_passes: reflect on passing training cases too (feedback ``"every scorer
            passed"``), as the ACE paper does for every sample: the bullets that helped collect
            helpful votes. Off by default: only failures teach.
        max_new_bullets, token_budget: the Curator's limits.
        query_of: the Generator's task text from a case (default: its string inputs, or a
            ``question``/``query``/``task``/``input``/``prompt`` field, else the inputs as JSON).
        on_case: progress callback, ``(phase, epoch)`` after each case.
        eval_reports: a directory for each epoch's :class:`kanawa.evals.EvalReport` of each split
            (``train-epoch-<k>.json``, ``held-out-epoch-<k>.json``), so ``kanawa eval compare`` can
            say whether the held-out change between two epochs is real or noise.
    """
    if epochs < 1:
        raise ValueError("epochs must be at least 1")
    chosen = split or split_dataset(dataset, held_out=held_out, seed=seed)
    grader = Grader(dataset, pass_threshold=pass_threshold, query_of=query_of)
    reports_dir = Path(eval_reports) if eval_reports is not None else None
    examiner = chosen.held_out.examiner(
        dataset, grader=grader, concurrency=concurrency, reports_dir=reports_dir
    )
    key = playbook_key(playbook_name or dataset.name)
    meters = await _meters(
        {"generator": generator_model, "reflector": reflector_model, "curator": curator_model}, model
    )
    started = datetime.now(UTC)
    async with _opened(store) as opened:
        if playbook is not None:
            await opened.asave(key, playbook)
        retrieval = search or HybridSearch(embedder=None, store=opened)
        learner = _Learner(
            opened,
            key,
            GeneratorAgent(opened, retrieval, meters["generator"], PromptBuilder(prompts_dir), top_k=top_k),
            Reflector(meters["reflector"]),
            Curator(
                meters["curator"],
                search=retrieval,
                token_budget=token_budget,
                max_new_bullets=max_new_bullets,
            ),
            use_ground_truth=use_ground_truth,
        )

        def tick(phase: str, epoch: int) -> Callable[[], None] | None:
            return None if on_case is None else (lambda: on_case(phase, epoch))

        try:
            initial = await opened.aload(key)
            records: list[EpochRecord] = []
            for epoch in range(epochs + 1):
                since = {role: meters[role].spent.copy() for role in ROLES}
                epoch_started = datetime.now(UTC)
                before = await opened.aload(key)
                steps: list[LearningStep] = []
                if epoch == 0:
                    graded = await grade_all(
                        grader, chosen.train, learner.generate,
                        concurrency=concurrency, on_done=tick("train", 0),
                    )  # fmt: skip
                else:
                    graded = []
                    for index, case in enumerate(chosen.train):
                        result = await grader.agrade(case, learner.generate)
                        graded.append(result)
                        if on_case is not None:
                            on_case("train", epoch)
                        if learn_from_passes or not result.passed:
                            steps.append(await learner.learn_from(result, epoch=epoch, index=index))
                if reports_dir is not None:
                    train_report = eval_report(f"train, epoch {epoch}", graded, started=epoch_started)
                    save_report(train_report, reports_dir / f"train-epoch-{epoch}.json")
                held = await examiner.aexamine(learner.generate, epoch=epoch, on_done=tick("held_out", epoch))
                after = await opened.aload(key)
                counts = {kind: 0 for kind in OPERATION_TYPES}
                for step in steps:
                    for entry in step.audit:
                        if entry.status == "applied":
                            counts[entry.type] += 1
                records.append(
                    EpochRecord(
                        epoch=epoch,
                        train=summarise("train", [g.as_score(with_feedback=True) for g in graded], graded),
                        held_out=held,
                        bullets=len(after),
                        operations=counts,
                        steps=steps,
                        playbook_diff=_diff(before.to_text(), after.to_text(), epoch),
                        cost=_costs(meters, since),
                    )
                )
            final = await opened.aload(key)
        finally:
            await learner.aclose()
            for meter in meters.values():
                await meter.aclose()
    return LearningReport(
        dataset=dataset.name,
        playbook=key,
        started_at=started,
        finished_at=datetime.now(UTC),
        settings={
            "epochs": epochs,
            "seed": seed,
            "held_out": held_out,
            "pass_threshold": pass_threshold,
            "use_ground_truth": use_ground_truth,
            "learn_from_passes": learn_from_passes,
            "top_k": top_k,
            "max_new_bullets": max_new_bullets,
            "token_budget": token_budget,
        },
        train_cases=[case.name for case in chosen.train],
        held_out_cases=chosen.held_out.names,
        epochs=records,
        initial_playbook=initial.to_text(),
        final_playbook=final.to_text(),
        cost=_costs(meters),
        held_out_verdict=held_out_verdict(records[0], records[-1]),
    )


def _per_case(split: SplitScore) -> dict[str, dict[str, list[float]]]:
    scores: dict[str, dict[str, list[float]]] = {}
    for case in split.cases:
        for scorer, value in case.by_scorer.items():
            scores.setdefault(scorer, {})[case.name] = [value]
    return scores


def held_out_verdict(baseline: EpochRecord, final: EpochRecord) -> HeldOutVerdict:
    """``kanawa.evals``' paired comparison of the held-out split, baseline against the last epoch."""
    from kanawa.evals.compare import compare_scores

    comparison = compare_scores(
        _per_case(baseline.held_out),
        _per_case(final.held_out),
        baseline_name=f"held-out, epoch {baseline.epoch}",
        candidate_name=f"held-out, epoch {final.epoch}",
    )
    return HeldOutVerdict(
        baseline_epoch=baseline.epoch,
        final_epoch=final.epoch,
        improved=comparison.improved,
        regressed=comparison.regressed,
        comparison=comparison.to_dict(),
    )


def learn(dataset: Dataset[Any, Any], **options: Any) -> LearningReport:
    """:func:`alearn` in an event loop of its own (inside a running loop, ``await alearn(...)``)."""
    return run_in_new_loop(
        lambda: alearn(dataset, **options),
        twin="kanawa.apps.ace.learning.alearn",
        receiver="kanawa.apps.ace.learning",
    )


__all__ = ["alearn", "learn", "playbook_key"]
