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
   1,000 agent runs made directly at concurrency 50. Target: within 1.2× of the pure-model time.

Usage: ``python bench/evals.py [--cases 300] [--rounds 5]``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
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


def kanawa_agent(latency: float = 0.0) -> Any:
    from kanawa import Agent
    from kanawa.llm.testing import FunctionLLM, ModelRequest

    async def respond(request: ModelRequest) -> str:
        if latency:
            await asyncio.sleep(latency)
        return answer_for(request.last_user_text)

    model = FunctionLLM(respond)
    agent = Agent("capitals", instructions="Answer with the city only.", model=model)
    return agent, model


async def kanawa_eval(dataset: Any, target: Any, concurrency: int) -> Any:
    from kanawa.evals.runner import Eval

    return await Eval(dataset, target, concurrency=concurrency, progress=False).arun()


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
    """The same task calls with no harness: a semaphore at the eval's concurrency."""
    gate = asyncio.Semaphore(concurrency)

    async def one(question: str) -> None:
        async with gate:
            await task(question)

    if concurrency == 1:
        for _, q, _ in rows(n):
            await task(q)
    else:
        await asyncio.gather(*(one(q) for _, q, _ in rows(n)))


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
    return results


async def scale(latency: float, rounds: int) -> dict[str, Any]:
    """1,000 cases at concurrency 50 with a model taking ``latency`` s per request: eval vs direct runs
    vs pure-model time (medians over ``rounds``, eval and direct alternating)."""
    from kanawa.evals.targets import AgentTarget

    data = kanawa_dataset(SCALE_CASES)
    agent, model = kanawa_agent(latency)

    async def task(q: str) -> Any:
        return await agent.arun(q)

    await kanawa_eval(kanawa_dataset(100), AgentTarget(agent), SCALE_CONCURRENCY)  # warm-up
    evals, directs = [], []
    for _ in range(rounds):
        model.requests.clear()
        evals.append(await timed(lambda: kanawa_eval(data, AgentTarget(agent), SCALE_CONCURRENCY)))
        model.requests.clear()
        directs.append(await timed(lambda: direct(task, SCALE_CASES, SCALE_CONCURRENCY)))
    model.requests.clear()
    report = await kanawa_eval(data, AgentTarget(agent), SCALE_CONCURRENCY)
    assert report.pass_rate == 1.0, report.pass_rate
    pure = SCALE_CASES * latency / SCALE_CONCURRENCY
    eval_s, direct_s = statistics.median(evals), statistics.median(directs)
    return {
        "cases": SCALE_CASES,
        "concurrency": SCALE_CONCURRENCY,
        "model_latency_ms": latency * 1000,
        "pure_model_s": pure,
        "direct_runs_s": round(direct_s, 3),
        "eval_s": round(eval_s, 3),
        "eval_over_pure_model": round(eval_s / pure, 3),
        "eval_over_direct_runs": round(eval_s / direct_s, 3),
        "rounds": rounds,
    }


def table(data: dict[str, Any]) -> str:
    o = data["overhead"]
    lines = [
        "# Eval harness cost: kanawa.evals vs pydantic-evals",
        "",
        f"Harness overhead per case ({data['cases']} cases, sequential, median of {data['rounds']} rounds; "
        "the eval's wall time minus the same task calls made directly):",
        "",
        "| Task | kanawa (µs/case) | pydantic-evals (µs/case) | kanawa / pydantic-evals |",
        "|---|---:|---:|---:|",
    ]
    for scenario, label in (
        ("plain_task", "plain async function"),
        ("agent_task", "agent on a scripted model"),
    ):
        row = o[scenario]
        lines.append(
            f"| {label} | {row['kanawa']['overhead_us_per_case_median']} | "
            f"{row['pydantic_evals']['overhead_us_per_case_median']} | {row['ratio_kanawa_to_pydantic_evals']} |"
        )
    lines += [
        "",
        f"{SCALE_CASES} cases at concurrency {SCALE_CONCURRENCY} (median of {data['rounds']} rounds):",
        "",
        "| Model latency | Pure-model time | Direct agent runs | kanawa eval | eval / pure-model | eval / direct |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for s in data["scale"]:
        lines.append(
            f"| {s['model_latency_ms']:.0f} ms | {s['pure_model_s']:.3f} s | {s['direct_runs_s']:.3f} s | "
            f"{s['eval_s']:.3f} s | {s['eval_over_pure_model']} | {s['eval_over_direct_runs']} |"
        )
    lines += [
        "",
        f"Machine: {data['machine']}. Targets: overhead ratio ≤ 0.5; eval ≤ 1.2× pure-model time.",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    import importlib.metadata as md

    data: dict[str, Any] = {
        "cases": args.cases,
        "rounds": args.rounds,
        "machine": machine(),
        "versions": {
            "pydantic_evals": md.version("pydantic-evals"),
            "pydantic_ai_slim": md.version("pydantic-ai-slim"),
        },
        "overhead": asyncio.run(overhead(args.cases, args.rounds)),
        "scale": [asyncio.run(scale(latency, args.rounds)) for latency in MODEL_LATENCIES],
    }
    data["kanawa"] = {
        "overhead_us_per_case_plain": data["overhead"]["plain_task"]["kanawa"]["overhead_us_per_case_median"],
        "overhead_us_per_case_agent": data["overhead"]["agent_task"]["kanawa"]["overhead_us_per_case_median"],
        "scale_eval_over_pure_model": {
            str(s["model_latency_ms"]): s["eval_over_pure_model"] for s in data["scale"]
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
