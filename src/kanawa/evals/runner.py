"""Running a dataset: every case (× ``repeat``) is an ordinary kanawa run, scored and gathered.

How the pieces fit:

- **concurrency**: ``concurrency`` workers take case runs from one queue (no task per case, so a
  thousand cases cost a thousand runs, not a thousand idle tasks);
- **repeats**: each case runs ``repeat`` times; results keep the repeat index, so reports show the
  spread and ``compare`` pairs on the per-case mean;
- **timeouts**: a case run over ``timeout`` seconds is cancelled and recorded as an error;
- **budget**: one :class:`~kanawa.agents.budget.TokenGuard` for the whole eval (``budget=`` or the
  ``max_cost_usd``/``max_tokens``/``max_requests`` shortcuts) is a guardrail of every in-process run,
  so a run in flight stops at its next model request once the budget is spent; no new case run starts
  after that (served runs are counted from their usage and cost). The report says why it stopped
  (``stopped_reason``) and which runs never ran or were cut short (``skipped``);
- **traces**: each run's trace events are kept on its result (and written as JSONL under
  ``trace_dir`` when given) for the HTML report's drill-down and ``kanawa trace view``;
- **progress**: a rich progress bar on a terminal (``progress=True`` forces it, ``False`` hides it).
"""

from __future__ import annotations

import asyncio
import re
import time
import uuid
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kanawa.evals.cases import Case, Dataset, ScorerSpec
from kanawa.evals.report import CaseResult, EvalReport
from kanawa.evals.scoring import (
    Assertion,
    NoVerdictError,
    Outcome,
    ScoreContext,
    Scorer,
    as_outcomes,
    open_judge_costs,
)
from kanawa.evals.targets import PromptFn, RunOutput, ServedTarget, Target, as_target
from kanawa.loop.errors import BudgetExceeded
from kanawa.trace.events import new_trace_id
from kanawa.types import JsonValue, Usage

if TYPE_CHECKING:
    from rich.console import Console

    from kanawa.agents.budget import TokenGuard
    from kanawa.testing.recorder import RecordMode


@dataclass(frozen=True)
class _Job:
    index: int
    case: Case[Any, Any]
    repeat: int


class Eval:
    """A dataset, a target and how to run them. ``run()`` is sync, ``arun()`` async.

    ``target`` is an ``Agent`` (or team), a function of the case inputs, a ``module:attr`` string,
    or a :class:`~kanawa.evals.targets.Target` such as
    :class:`~kanawa.evals.targets.ServedTarget`. ``scorers`` apply to every case besides the
    dataset's and each case's own.
    """

    def __init__(
        self,
        dataset: Dataset[Any, Any],
        target: Any,
        *,
        scorers: Sequence[Scorer | ScorerSpec] = (),
        name: str | None = None,
        concurrency: int = 8,
        repeat: int = 1,
        timeout: float | None = None,
        budget: TokenGuard | None = None,
        max_cost_usd: float | None = None,
        max_tokens: int | None = None,
        max_requests: int | None = None,
        trace_dir: str | Path | None = None,
        keep_traces: bool = True,
        progress: bool | None = None,
        console: Console | None = None,
        prompt: PromptFn | None = None,
        cassette: str | Path | None = None,
        record: RecordMode = "none",
    ) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        if repeat < 1:
            raise ValueError("repeat must be at least 1")
        if timeout is not None and timeout <= 0:
            raise ValueError("timeout must be a positive number of seconds")
        if budget is not None and any(v is not None for v in (max_cost_usd, max_tokens, max_requests)):
            raise ValueError("give budget= or the max_* shortcuts, not both")
        self.dataset = dataset
        self.target: Target = as_target(target, prompt=prompt)
        self.name = name or dataset.name
        self.concurrency = concurrency
        self.repeat = repeat
        self.timeout = timeout
        if budget is None and any(v is not None for v in (max_cost_usd, max_tokens, max_requests)):
            from kanawa.agents.budget import TokenGuard

            budget = TokenGuard(
                max_cost_usd=max_cost_usd,
                max_tokens=max_tokens,
                max_requests=max_requests,
                session=f"eval-{uuid.uuid4().hex}",
                warn_at=None,
                name="eval_budget",
            )
        self.budget = budget
        self.trace_dir = Path(trace_dir) if trace_dir is not None else None
        self.keep_traces = keep_traces
        self.progress = progress
        self.console = console
        self.cassette = Path(cassette) if cassette is not None else None
        self.record = record
        self._scorers = [_built(s) for s in (*dataset.scorers, *scorers)]
        self._case_scorers: dict[str, list[Scorer]] = {
            c.name: [_built(s) for s in c.scorers] for c in dataset.cases
        }

    def run(self) -> EvalReport:
        """:meth:`arun` for scripts (its own event loop)."""
        from kanawa._sync import run_in_new_loop

        return run_in_new_loop(self.arun, twin="Eval.arun")

    async def arun(self) -> EvalReport:
        """Run every case ``repeat`` times and return the report (also when the budget stops it).

        With ``cassette``, the provider traffic is replayed from that file (``record="none"``, the
        default: nothing reaches the network, an unrecorded request fails its case) or recorded
        into it (``"once"``, ``"new_episodes"``, ``"all"``; :mod:`kanawa.testing`). Requests are
        matched by body too, so concurrent cases and repeats replay the answers they recorded."""
        if self.cassette is None:
            return await self._arun()
        from kanawa.testing import use_cassette

        with use_cassette(
            self.cassette,
            record=self.record,
            match_on=("method", "path", "query", "body"),
        ) as cassette:
            report = await self._arun()
        report.metadata["cassette"] = {
            "path": str(self.cassette),
            "record": self.record,
            "misses": len(cassette.misses),
        }
        return report

    async def _arun(self) -> EvalReport:
        report = EvalReport(name=self.name, target=self.target.description, repeat=self.repeat)
        report.metadata["concurrency"] = self.concurrency
        if self.timeout is not None:
            report.metadata["timeout_s"] = self.timeout
        jobs = [
            _Job(index, case, repeat)
            for index, case in enumerate(self.dataset.cases)
            for repeat in range(self.repeat)
        ]
        if self.trace_dir is not None:
            self.trace_dir.mkdir(parents=True, exist_ok=True)
        state = _RunState(jobs)
        judge_costs = open_judge_costs()
        opened = isinstance(self.target, ServedTarget)
        if opened:
            await self.target.aopen()  # type: ignore[attr-defined]
        try:
            with self._progress(len(jobs)) as advance:
                workers = [
                    asyncio.create_task(self._worker(state, advance))
                    for _ in range(min(self.concurrency, len(jobs)) or 1)
                ]
                await asyncio.gather(*workers)
        finally:
            if opened:
                await self.target.aclose()  # type: ignore[attr-defined]
        order = {id(job): (job.index, job.repeat) for job in jobs}
        report.results = [r for _, r in sorted(state.done, key=lambda item: order[id(item[0])])]
        report.stopped_reason = state.stopped_reason
        report.skipped = [
            f"{job.case.name}#{job.repeat}" for job in sorted(state.skipped, key=lambda j: order[id(j)])
        ]
        report.judge_cost_usd = judge_costs.usd
        if judge_costs.unpriced:
            report.metadata["judge_unpriced_verdicts"] = judge_costs.unpriced
        if self.budget is not None:
            totals = await self.budget.totals()
            report.metadata["budget"] = {
                "max_cost_usd": self.budget.limits.max_cost_usd,
                "max_tokens": self.budget.limits.max_tokens,
                "max_requests": self.budget.limits.max_requests,
                "spent_usd": totals.cost_usd,
                "spent_tokens": totals.tokens,
                "spent_requests": totals.requests,
            }
        report.finished_at = datetime.now(UTC)
        return report

    # --- workers ------------------------------------------------------------------------------------

    async def _worker(self, state: _RunState, advance: Any) -> None:
        budgeted = self.budget is not None
        while state.queue:
            reason = await self._budget_spent(state) if budgeted else state.stopped_reason
            if reason is not None:
                state.stop(reason)
                return
            job = state.queue.popleft()
            result, interrupted = await self._run_job(job)
            if interrupted is not None:
                state.skipped.append(job)
                state.stop(interrupted)
            else:
                state.done.append((job, result))
                if budgeted:  # what the budget check reads (the report sums the results itself)
                    state.usage = state.usage + result.usage
                    state.cost += result.cost_usd or 0.0
            advance(job.case.name)

    async def _budget_spent(self, state: _RunState) -> str | None:
        """Why no new case run may start (``None``: it may)."""
        if state.stopped_reason is not None:
            return state.stopped_reason
        guard = self.budget
        if guard is None:
            return None
        limits = guard.limits
        totals = await guard.totals()
        tokens = max(totals.tokens, state.usage.total_tokens)
        cost = max(totals.cost_usd, state.cost)
        requests = max(totals.requests, state.usage.requests)
        done = len(state.done)
        if limits.max_cost_usd is not None and cost >= limits.max_cost_usd:
            return f"budget: ${cost:.4f} of ${limits.max_cost_usd:.4f} spent after {done} case run(s)"
        if limits.max_tokens is not None and tokens >= limits.max_tokens:
            return f"budget: {tokens} of {limits.max_tokens} tokens spent after {done} case run(s)"
        if limits.max_requests is not None and requests >= limits.max_requests:
            return f"budget: {requests} of {limits.max_requests} requests spent after {done} case run(s)"
        return None

    async def _run_job(self, job: _Job) -> tuple[CaseResult, str | None]:
        """One case run, scored. The second item is set when the budget cut the run short (the run
        is then not a result: it did not fail, it was not allowed to finish)."""
        from kanawa.trace.memory import InMemoryTraceSink

        sink = InMemoryTraceSink() if (self.keep_traces or self.trace_dir) else None
        sinks = (sink,) if sink is not None else ()
        guardrails = (self.budget,) if self.budget is not None else ()
        run_id = new_trace_id()
        started = time.perf_counter()
        error: str | None = None
        try:
            if self.timeout is None:
                out = await self.target.arun_case(job.case, run_id=run_id, sinks=sinks, guardrails=guardrails)
            else:
                async with asyncio.timeout(self.timeout):
                    out = await self.target.arun_case(
                        job.case, run_id=run_id, sinks=sinks, guardrails=guardrails
                    )
        except BudgetExceeded as exc:
            return CaseResult(job.case.name, job.repeat, None, ""), f"budget: {exc}"
        except TimeoutError:
            error = f"timed out after {self.timeout:g} s"
            out = RunOutput(None, "", run_id=run_id)
        except Exception as exc:  # a case's failure is its result, never the eval's crash
            error = f"{type(exc).__name__}: {exc}"
            out = RunOutput(None, "", run_id=run_id)
        duration_ms = (time.perf_counter() - started) * 1000.0
        error = error or out.error
        ctx = ScoreContext(
            case=job.case,
            output=out.output,
            text=out.text,
            events=out.events,
            usage=out.usage,
            cost_usd=out.cost_usd,
            duration_ms=duration_ms,
            run_id=out.run_id or run_id,
            error=error,
        )
        scorer_errors: dict[str, str] = {}
        outcomes = await self._score(
            ctx, [*self._scorers, *self._case_scorers.get(job.case.name, [])], scorer_errors
        )
        result = CaseResult(
            case=job.case.name,
            repeat=job.repeat,
            output=out.output,
            text=out.text,
            outcomes=outcomes,
            usage=out.usage,
            cost_usd=out.cost_usd,
            duration_ms=duration_ms,
            error=error,
            scorer_errors=scorer_errors,
            run_id=out.run_id or run_id,
        )
        if out.trace is not None:
            result.trace = out.trace
        elif sink is not None:
            result.keep_trace_events(sink.events)
        if self.trace_dir is not None and result.trace:
            result.trace_path = str(_write_trace(self.trace_dir, job, result.trace))
        if not self.keep_traces:
            result.trace = None
        return result, None

    async def _score(self, ctx: ScoreContext, scorers: list[Scorer], errors: dict[str, str]) -> list[Outcome]:
        """Every scorer's outcomes, in order. One after another: cases already run concurrently, and a
        task per scorer would cost more than most scorers do. A scorer that could not reach a verdict
        (:class:`NoVerdictError`, e.g. a judge whose provider failed) goes into ``errors`` instead."""
        outcomes: list[Outcome] = []
        for scorer in scorers:
            try:
                outcomes.extend(as_outcomes(await scorer.ascore(ctx)))
            except NoVerdictError as exc:
                errors[scorer.name] = f"{type(exc).__name__}: {exc}"
            except Exception as exc:  # a broken scorer fails its case with the reason, the eval goes on
                reason = f"the scorer raised {type(exc).__name__}: {exc}"
                outcomes.append(Assertion(scorer.name, False, reason))
        return outcomes

    # --- progress -----------------------------------------------------------------------------------

    def _progress(self, total: int) -> Any:
        """A context manager yielding ``advance(case_name)``; rich is imported only to draw a bar."""
        from contextlib import contextmanager

        show = self.progress
        if show is None:
            show = self.console.is_terminal if self.console is not None else _stderr_is_terminal()

        @contextmanager
        def bar() -> Any:
            if not show:
                yield lambda name: None
                return
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            with Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("{task.fields[last]}"),
                console=self.console or Console(stderr=True),
                transient=False,
            ) as progress:
                ticks = _Ticks(progress, progress.add_task(self.name, total=total, last=""))
                try:
                    yield ticks.advance
                finally:
                    ticks.flush()

        return bar()


class _Ticks:
    """Finished case runs, handed to the progress bar at most every :data:`TICK_S` seconds: the bar
    redraws ten times a second anyway, and one ``Progress.update`` per case (a lock, a speed
    sample) cost a tenth of a traced case run."""

    TICK_S = 0.05

    def __init__(self, progress: Any, task: Any) -> None:
        self._progress = progress
        self._task = task
        self._pending = 0
        self._last = ""
        self._flushed = time.monotonic()

    def advance(self, name: str) -> None:
        self._pending += 1
        self._last = name
        now = time.monotonic()
        if now - self._flushed >= self.TICK_S:
            self._flushed = now
            self.flush()

    def flush(self) -> None:
        if self._pending:
            self._progress.update(self._task, advance=self._pending, last=self._last)
            self._pending = 0


def _stderr_is_terminal() -> bool:
    import sys

    return bool(getattr(sys.stderr, "isatty", lambda: False)())


class _RunState:
    """The queue and what came of it, shared by the workers (one event loop: no locks needed)."""

    def __init__(self, jobs: list[_Job]) -> None:
        self.queue: deque[_Job] = deque(jobs)
        self.done: list[tuple[_Job, CaseResult]] = []
        self.skipped: list[_Job] = []
        self.stopped_reason: str | None = None
        self.usage = Usage()
        self.cost = 0.0

    def stop(self, reason: str) -> None:
        if self.stopped_reason is None:
            self.stopped_reason = reason
        self.skipped.extend(self.queue)
        self.queue.clear()


def _built(scorer: Scorer | ScorerSpec) -> Scorer:
    return scorer.build() if isinstance(scorer, ScorerSpec) else scorer


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def _write_trace(directory: Path, job: _Job, records: list[dict[str, JsonValue]]) -> Path:
    from kanawa.trace.serialize import dumps_record

    path = directory / f"{job.index:04d}-{_UNSAFE.sub('_', job.case.name)[:60]}-r{job.repeat}.jsonl"
    path.write_text("".join(dumps_record(r) + "\n" for r in records), encoding="utf-8")
    return path


async def arun_eval(dataset: Dataset[Any, Any], target: Any, **options: Any) -> EvalReport:
    """``Eval(dataset, target, **options).arun()`` in one call."""
    return await Eval(dataset, target, **options).arun()


def run_eval(dataset: Dataset[Any, Any], target: Any, **options: Any) -> EvalReport:
    """``Eval(dataset, target, **options).run()`` in one call."""
    return Eval(dataset, target, **options).run()


__all__ = ["Eval", "arun_eval", "run_eval"]
