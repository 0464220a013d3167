"""Eval harness cost: kanawa.evals against pydantic-evals on the same dataset, in one run.

Three measurements (writes bench/results/evals.{json,md}):

1. **harness overhead per case, plain task**: the task is a plain async function that answers at once,
   the scorers are "equals expected" (dataset-wide) and "contains the answer" (per case) in both; overhead per case is the eval's
   wall time minus calling the task directly, divided by the cases. Sequential (concurrency 1), so it
   is the harness's own work per case: building contexts, scoring, collecting the report.
2. **harness overhead per case, agent task**: each case runs the framework's own agent on a scripted
   model (kanawa ``Agent`` + ``FunctionLLM``; pydantic-ai ``Agent`` + ``FunctionModel``); overhead is
   the eval minus the same agent runs made directly. For kanawa this includes what makes each case a
   traced kanawa run (its trace events kept for the report's drill-down).
   Target: kanawa's overhead ≤ 0.5× pydantic-evals'.
3. **1,000 cases at concurrency 50** with a model that takes 50 ms (then 200 ms) per request: the
   eval's wall time against the pure-model time (1,000 × 50 ms / 50 = 1.0 s) and against the same
   1,000 agent runs made directly at concurrency 50, with each case's trace kept (the default, for the
   report's drill-down) and, at 50 ms, without. Target: within 1.2× of the pure-model time.
   A fixed latency keeps the 50 workers in lockstep (every case's CPU work lands in the same few
   milliseconds), so an extra row draws each request's latency from 25–75 ms (uniform, seeded: the
   same draws for the eval and the direct runs, in request order); its pure-model time is the
   makespan of those draws on 50 workers with no other cost. The "asyncio floor" column is the same
   model waits with no framework at all (bare ``asyncio.sleep`` calls at concurrency 50): what the
   machine's timers and scheduler add, which no framework can go below. Load averages are recorded
   with every row (the machine is shared).

Usage: ``python bench/evals.py [--cases 300] [--rounds 5]``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import heapq
import os
import random
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, write_results

COUNTRIES = ["Japan", "France", "Italy", "Spain", "Egypt", "Peru", "Kenya", "Chile", "Cuba", "Iran"]
CITIES = ["Tokyo", "Paris", "Rome", "Madrid", "Cairo", "Lima", "Nairobi", "Santiago", "Havana", "Tehran"]
MODEL_LATENCIES = (0.05, 0.2)
SCALE_CASES, SCALE_CONCURRENCY = 1000, 50
JITTER = (0.025, 0.075)
"""The spread of the extra row's per-request latency (uniform, mean 50 ms)."""


class Latencies:
    """Each model request's latency, in request order: fixed, or drawn once (seeded) per run so the
    eval and the direct runs wait the same. ``restart()`` goes back to the first draw."""

    def __init__(self, latency: float, *, jitter: bool = False, n: int = SCALE_CASES, seed: int = 7) -> None:
        rng = random.Random(seed)
        self.values = [rng.uniform(*JITTER) if jitter else latency for _ in range(n)]
        self.jitter = jitter
        self._next = 0

    def restart(self) -> None:
        self._next = 0

    def take(self) -> float:
        value = self.values[self._next % len(self.values)]
        self._next += 1
        return value

    def makespan(self, concurrency: int) -> float:
        """The pure-model time: these waits on ``concurrency`` workers, in order, with no other cost."""
        free = [0.0] * concurrency
        for value in self.values:
            heapq.heappush(free, heapq.heappop(free) + value)
        return max(free)


def load_average() -> float:
    return round(os.getloadavg()[0], 2)


def rows(n: int) -> list[tuple[str, str, str]]:
    """(name, question, expected answer) for n cases."""
    return [(f"case-{i}", f"What is the capital of {COUNTRIES[i % 10]}?", CITIES[i % 10]) for i in range(n)]


def answer_for(question: str) -> str:
    country = question.removeprefix("What is the capital of ").rstrip("?")
    return CITIES[COUNTRIES.index(country)]


async def plain_task(question: str) -> str:
    return answer_for(question)


# ------------------------------------------------------------------------------------------ kanawa
def kanawa_dataset(n: int) -> Any:
    from kanawa.evals import Case, Contains, Dataset, EqualsExpected

    cases = [
        Case(name=name, inputs=q, expected_output=a, scorers=[Contains(value=a)]) for name, q, a in rows(n)
    ]
    return Dataset(name="capitals", cases=cases, scorers=[EqualsExpected()])


def kanawa_agent(latency: float | Latencies = 0.0) -> Any:
    from kanawa import Agent
    from kanawa.llm.testing import FunctionLLM, ModelRequest

    async def respond(request: ModelRequest) -> str:
        wait = latency.take() if isinstance(latency, Latencies) else latency
        if wait:
            await asyncio.sleep(wait)
        return answer_for(request.last_user_text)

    model = FunctionLLM(respond)
    agent = Agent("capitals", instructions="Answer with the city only.", model=model)
    return agent, model


async def kanawa_eval(dataset: Any, target: Any, concurrency: int, *, keep_traces: bool = True) -> Any:
    from kanawa.evals.runner import Eval

    return await Eval(
        dataset, target, concurrency=concurrency, progress=False, keep_traces=keep_traces
    ).arun()


# ----------------------------------------------------------------------------------- pydantic-evals
def peer_dataset(n: int) -> Any:
    from pydantic_evals import Case, Dataset
    from pydantic_evals.evaluators import Contains, EqualsExpected

    cases = [
        Case(name=name, inputs=q, expected_output=a, evaluators=(Contains(value=a),))
        for name, q, a in rows(n)
    ]
    return Dataset(name="capitals", cases=cases, evaluators=[EqualsExpected()])


def peer_agent(latency: float = 0.0) -> Any:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, UserPromptPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    async def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if latency:
            await asyncio.sleep(latency)
        last = messages[-1]
        assert isinstance(last, ModelRequest)
        prompt = next(p.content for p in last.parts if isinstance(p, UserPromptPart))
        return ModelResponse(parts=[TextPart(answer_for(str(prompt)))])

    return Agent(FunctionModel(respond), instructions="Answer with the city only.")


async def peer_eval(dataset: Any, task: Callable[[str], Awaitable[str]], concurrency: int) -> Any:
    return await dataset.evaluate(task, max_concurrency=concurrency, progress=False)


# ------------------------------------------------------------------------------------------ timing
async def timed(make: Callable[[], Awaitable[Any]]) -> float:
    gc.collect()
    start = time.perf_counter()
    await make()
    return time.perf_counter() - start


async def direct(task: Callable[[str], Awaitable[Any]], n: int, concurrency: int) -> None:
    """The same task calls with no harness, the cheapest way: ``concurrency`` workers taking the
    questions in order (the eval's own shape; a task per call behind a semaphore costs more, which
    would flatter the eval)."""
    questions = iter([q for _, q, _ in rows(n)])

    async def worker() -> None:
        for question in questions:
            await task(question)

    if concurrency == 1:
        await worker()
    else:
        await asyncio.gather(*(worker() for _ in range(concurrency)))


async def overhead(n: int, rounds: int) -> dict[str, Any]:
    """Per-case harness overhead (µs) for both harnesses, plain task and agent task, sequential."""
    k_data, p_data = kanawa_dataset(n), peer_dataset(n)
    k_agent, k_model = kanawa_agent()
    p_agent = peer_agent()

    async def k_agent_task(q: str) -> str:
        return str((await k_agent.arun(q)).output)

    async def p_agent_task(q: str) -> str:
        return str((await p_agent.run(q)).output)

    from kanawa.evals.targets import AgentTarget, FunctionTarget

    plans: dict[str, dict[str, tuple[Callable[[], Awaitable[Any]], Callable[[], Awaitable[Any]]]]] = {
        "plain_task": {
            "kanawa": (
                lambda: kanawa_eval(k_data, FunctionTarget(plain_task), 1),
                lambda: direct(plain_task, n, 1),
            ),
            "pydantic_evals": (lambda: peer_eval(p_data, plain_task, 1), lambda: direct(plain_task, n, 1)),
        },
        "agent_task": {
            "kanawa": (
                lambda: kanawa_eval(k_data, AgentTarget(k_agent), 1),
                lambda: direct(k_agent_task, n, 1),
            ),
            "pydantic_evals": (
                lambda: peer_eval(p_data, p_agent_task, 1),
                lambda: direct(p_agent_task, n, 1),
            ),
        },
    }
    results: dict[str, Any] = {}
    for scenario, systems in plans.items():
        per: dict[str, list[float]] = {s: [] for s in systems}
        for with_harness, _ in systems.values():
            await with_harness()  # warm-up (imports, caches)
        for _ in range(rounds):
            for name, (with_harness, without) in systems.items():
                k_model.requests.clear()
                harness = await timed(with_harness)
                bare = await timed(without)
                per[name].append(max(0.0, harness - bare) / n * 1e6)
        results[scenario] = {
            name: {
                "overhead_us_per_case_median": round(statistics.median(v), 1),
                "rounds": [round(x, 1) for x in v],
            }
            for name, v in per.items()
        }
        k, p = (results[scenario][s]["overhead_us_per_case_median"] for s in ("kanawa", "pydantic_evals"))
        results[scenario]["ratio_kanawa_to_pydantic_evals"] = round(k / p, 3) if p else None
        # each round measures both harnesses back to back, so a per-round ratio shares the machine's load
        paired = [a / b for a, b in zip(per["kanawa"], per["pydantic_evals"], strict=True) if b]
        results[scenario]["ratio_median_of_rounds"] = round(statistics.median(paired), 3) if paired else None
    return results


async def floor(waits: Latencies, concurrency: int) -> None:
    """The model's waits alone: bare ``asyncio.sleep`` calls on ``concurrency`` workers, no framework."""
    calls = iter(range(SCALE_CASES))

    async def worker() -> None:
        for _ in calls:
            await asyncio.sleep(waits.take())

    await asyncio.gather(*(worker() for _ in range(concurrency)))


async def scale(
    latency: float, rounds: int, keep_traces: bool = True, *, jitter: bool = False
) -> dict[str, Any]:
    """1,000 cases at concurrency 50 with a model taking ``latency`` s per request (or, ``jitter``,
    25–75 ms drawn per request): eval vs direct runs vs the asyncio floor vs pure-model time
    (medians over ``rounds``; eval, direct and floor alternate within each round)."""
    from kanawa.evals.targets import AgentTarget

    data = kanawa_dataset(SCALE_CASES)
    waits = Latencies(latency, jitter=jitter)
    agent, model = kanawa_agent(waits)

    async def task(q: str) -> Any:
        return await agent.arun(q)

    await kanawa_eval(kanawa_dataset(100), AgentTarget(agent), SCALE_CONCURRENCY)  # warm-up
    evals, directs, floors, loads = [], [], [], [load_average()]

    async def fresh(make: Callable[[], Awaitable[Any]]) -> float:
        model.requests.clear()
        waits.restart()
        return await timed(make)

    for _ in range(rounds):
        evals.append(
            await fresh(
                lambda: kanawa_eval(data, AgentTarget(agent), SCALE_CONCURRENCY, keep_traces=keep_traces)
            )
        )
        directs.append(await fresh(lambda: direct(task, SCALE_CASES, SCALE_CONCURRENCY)))
        floors.append(await fresh(lambda: floor(waits, SCALE_CONCURRENCY)))
        loads.append(load_average())
    model.requests.clear()
    waits.restart()
    report = await kanawa_eval(data, AgentTarget(agent), SCALE_CONCURRENCY)
    assert report.pass_rate == 1.0, report.pass_rate
    pure = waits.makespan(SCALE_CONCURRENCY)
    eval_s, direct_s, floor_s = (
        statistics.median(evals),
        statistics.median(directs),
        statistics.median(floors),
    )
    return {
        "cases": SCALE_CASES,
        "concurrency": SCALE_CONCURRENCY,
        "model_latency_ms": latency * 1000,
        "latency": f"uniform {JITTER[0] * 1000:.0f}-{JITTER[1] * 1000:.0f} ms" if jitter else "fixed",
        "pure_model_s": round(pure, 3),
        "asyncio_floor_s": round(floor_s, 3),
        "direct_runs_s": round(direct_s, 3),
        "eval_s": round(eval_s, 3),
        "eval_over_pure_model": round(eval_s / pure, 3),
        "eval_over_direct_runs": round(eval_s / direct_s, 3),
        "floor_over_pure_model": round(floor_s / pure, 3),
        "direct_over_pure_model": round(direct_s / pure, 3),
        "eval_rounds_s": [round(x, 3) for x in evals],
        "direct_rounds_s": [round(x, 3) for x in directs],
        "rounds": rounds,
        "traces_kept": keep_traces,
        "load_average_1min": loads,
    }


def table(data: dict[str, Any]) -> str:
    o = data["overhead"]
    lines = [
        "# Eval harness cost: kanawa.evals vs pydantic-evals",
        "",
        f"Harness overhead per case ({data['cases']} cases, sequential, median of {data['rounds']} rounds; "
        "the eval's wall time minus the same task calls made directly):",
        "",
        "| Task | kanawa (µs/case) | pydantic-evals (µs/case) | kanawa / pydantic-evals | per-round ratio (median) |",
        "|---|---:|---:|---:|---:|",
    ]
    for scenario, label in (
        ("plain_task", "plain async function"),
        ("agent_task", "agent on a scripted model"),
    ):
        row = o[scenario]
        lines.append(
            f"| {label} | {row['kanawa']['overhead_us_per_case_median']} | "
            f"{row['pydantic_evals']['overhead_us_per_case_median']} | {row['ratio_kanawa_to_pydantic_evals']} | "
            f"{row['ratio_median_of_rounds']} |"
        )
    lines += [
        "",
        f"{SCALE_CASES} cases at concurrency {SCALE_CONCURRENCY} (median of {data['rounds']} rounds):",
        "",
        "| Model latency | Traces kept | Pure-model time | asyncio floor | Direct agent runs | kanawa eval "
        "| eval / pure-model | eval / direct | floor / pure-model | load average (1 min) |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for s in data["scale"]:
        latency = f"{s['model_latency_ms']:.0f} ms" if s["latency"] == "fixed" else s["latency"]
        loads = ", ".join(f"{x:.1f}" for x in s["load_average_1min"])
        lines.append(
            f"| {latency} | {'yes' if s['traces_kept'] else 'no'} | {s['pure_model_s']:.3f} s "
            f"| {s['asyncio_floor_s']:.3f} s | {s['direct_runs_s']:.3f} s | {s['eval_s']:.3f} s "
            f"| {s['eval_over_pure_model']} | {s['eval_over_direct_runs']} | {s['floor_over_pure_model']} | {loads} |"
        )
    lines += [
        "",
        f"Machine: {data['machine']}, load average (1 min) {data['load_average_1min'][0]} at the start and "
        f"{data['load_average_1min'][1]} at the end (shared by other jobs). Targets: overhead ratio ≤ 0.5; "
        "eval ≤ 1.2× pure-model time; eval ≤ 1.05× the direct runs.",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    import importlib.metadata as md

    started_load = load_average()
    data: dict[str, Any] = {
        "cases": args.cases,
        "rounds": args.rounds,
        "machine": machine(),
        "versions": {
            "pydantic_evals": md.version("pydantic-evals"),
            "pydantic_ai_slim": md.version("pydantic-ai-slim"),
        },
        "overhead": asyncio.run(overhead(args.cases, args.rounds)),
        "scale": [
            *(asyncio.run(scale(latency, args.rounds)) for latency in MODEL_LATENCIES),
            asyncio.run(scale(MODEL_LATENCIES[0], args.rounds, keep_traces=False)),
            asyncio.run(scale(MODEL_LATENCIES[0], args.rounds, jitter=True)),
        ],
    }
    data["load_average_1min"] = [started_load, load_average()]
    data["kanawa"] = {
        "overhead_us_per_case_plain": data["overhead"]["plain_task"]["kanawa"]["overhead_us_per_case_median"],
        "overhead_us_per_case_agent": data["overhead"]["agent_task"]["kanawa"]["overhead_us_per_case_median"],
        "scale_eval_over_pure_model": {
            f"{s['model_latency_ms']} {s['latency']} traces={s['traces_kept']}": s["eval_over_pure_model"]
            for s in data["scale"]
        },
    }
    data["pydantic_evals"] = {
        "overhead_us_per_case_plain": data["overhead"]["plain_task"]["pydantic_evals"][
            "overhead_us_per_case_median"
        ],
        "overhead_us_per_case_agent": data["overhead"]["agent_task"]["pydantic_evals"][
            "overhead_us_per_case_median"
        ],
    }
    write_results("evals", data, table(data))


if __name__ == "__main__":
    main()
