"""Loop overhead: the same scripted conversation through kanawa and its peers, in one run.

Conversation (identical for every system): turn 1 asks for one tool call, turn 2 for two parallel tool
calls, turn 3 answers with text — 3 model requests and 3 tool executions per run. The model is a
scripted function (no network, no tokens), so what is measured is each framework's own cost: building
requests, parsing tool calls, validating arguments, running tools, keeping history.

Each system runs in its own fresh interpreter (so import time and peak RSS are its own):
  - cold import time (median of 5 fresh processes),
  - sequential runs after warm-up: median and p90 per run,
  - 100 concurrent runs (and 1,000 for kanawa): wall time per run,
  - peak RSS of the benchmark process.

Peers: pydantic-ai (FunctionModel) and the OpenAI Agents SDK (a scripted Model, tracing disabled).
Usage: ``python bench/loop_overhead.py`` (writes bench/results/loop_overhead.{json,md}).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import resource
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, run_child, summary_ms, write_results

SYSTEMS = ("kanawa", "pydantic_ai", "openai_agents")
IMPORTS = {
    "kanawa": "import kanawa; from kanawa import Agent, tool",
    "kanawa_bare": "import kanawa",
    "pydantic_ai": "import pydantic_ai; from pydantic_ai import Agent",
    "openai_agents": "import agents; from agents import Agent, Runner",
}
WARMUP, RUNS, MAX_RUNS, TIMED_SECONDS = 50, 500, 20_000, 3.0
FINAL_TEXT = "1+2=3, 3+4=7, 5*6=30."

RunOnce = Callable[[], Awaitable[str]]


# ----------------------------------------------------------------------------------------- systems
def build_kanawa() -> RunOnce:
    from kanawa import Agent, tool
    from kanawa.llm.testing import FunctionLLM, ModelRequest
    from kanawa.types import AssistantMessage, ToolCall

    @tool
    async def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @tool
    async def mul(a: int, b: int) -> int:
        """Multiply two integers."""
        return a * b

    def respond(request: ModelRequest) -> AssistantMessage | str:
        turn = sum(1 for m in request.messages if m.role == "assistant")
        if turn == 0:
            return AssistantMessage(tool_calls=(ToolCall("c1", "add", '{"a": 1, "b": 2}'),))
        if turn == 1:
            return AssistantMessage(
                tool_calls=(
                    ToolCall("c2", "add", '{"a": 3, "b": 4}'),
                    ToolCall("c3", "mul", '{"a": 5, "b": 6}'),
                )
            )
        return FINAL_TEXT

    model = FunctionLLM(respond)
    agent = Agent("bench", instructions="Do the arithmetic.", tools=[add, mul], model=model)

    async def run_once() -> str:
        result = await agent.arun("Compute 1+2, then 3+4 and 5*6.")
        if len(model.requests) > 300:
            model.requests.clear()  # the test model records requests; keep the bench's memory flat
        return str(result.output)

    return run_once


def build_pydantic_ai() -> RunOnce:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        turn = sum(1 for m in messages if isinstance(m, ModelResponse))
        if turn == 0:
            return ModelResponse(parts=[ToolCallPart("add", {"a": 1, "b": 2}, tool_call_id="c1")])
        if turn == 1:
            return ModelResponse(
                parts=[
                    ToolCallPart("add", {"a": 3, "b": 4}, tool_call_id="c2"),
                    ToolCallPart("mul", {"a": 5, "b": 6}, tool_call_id="c3"),
                ]
            )
        return ModelResponse(parts=[TextPart(FINAL_TEXT)])

    agent = Agent(FunctionModel(respond), instructions="Do the arithmetic.")

    @agent.tool_plain
    async def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @agent.tool_plain
    async def mul(a: int, b: int) -> int:
        """Multiply two integers."""
        return a * b

    async def run_once() -> str:
        result = await agent.run("Compute 1+2, then 3+4 and 5*6.")
        return str(result.output)

    return run_once


def build_openai_agents() -> RunOnce:
    from agents.models.interface import Model
    from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

    from agents import Agent, ModelResponse, Runner, Usage, function_tool, set_tracing_disabled

    set_tracing_disabled(True)

    def call(call_id: str, name: str, args: str) -> ResponseFunctionToolCall:
        return ResponseFunctionToolCall(
            type="function_call", call_id=call_id, name=name, arguments=args, id=call_id
        )

    class ScriptedModel(Model):
        async def get_response(
            self,
            system_instructions,
            input,
            model_settings,
            tools,
            output_schema,
            handoffs,  # type: ignore[no-untyped-def]
            tracing,
            *,
            previous_response_id=None,
            conversation_id=None,
            prompt=None,
        ):
            items = input if isinstance(input, list) else []
            turn = sum(1 for i in items if isinstance(i, dict) and i.get("type") == "function_call")
            if turn == 0:
                output = [call("c1", "add", '{"a": 1, "b": 2}')]
            elif turn == 1:
                output = [call("c2", "add", '{"a": 3, "b": 4}'), call("c3", "mul", '{"a": 5, "b": 6}')]
            else:
                text = ResponseOutputText(type="output_text", text=FINAL_TEXT, annotations=[])
                output = [
                    ResponseOutputMessage(
                        id="m1", type="message", role="assistant", status="completed", content=[text]
                    )
                ]
            return ModelResponse(output=output, usage=Usage(), response_id=None)

        def stream_response(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            raise RuntimeError("the benchmark does not stream")

    @function_tool
    async def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @function_tool
    async def mul(a: int, b: int) -> int:
        """Multiply two integers."""
        return a * b

    agent = Agent(name="bench", instructions="Do the arithmetic.", tools=[add, mul], model=ScriptedModel())

    async def run_once() -> str:
        result = await Runner.run(agent, "Compute 1+2, then 3+4 and 5*6.")
        return str(result.final_output)

    return run_once


BUILDERS = {"kanawa": build_kanawa, "pydantic_ai": build_pydantic_ai, "openai_agents": build_openai_agents}


# ------------------------------------------------------------------------------------- measurement
async def measure(system: str) -> dict[str, object]:
    run_once = BUILDERS[system]()
    first = await run_once()
    if first != FINAL_TEXT:
        raise RuntimeError(f"{system} produced {first!r}, expected {FINAL_TEXT!r}")
    warm_start = time.perf_counter()
    for _ in range(WARMUP):
        await run_once()
    per_run = (time.perf_counter() - warm_start) / WARMUP
    # Time every system for about the same wall time (>= RUNS runs), so a burst of noise on the
    # machine cannot cover most of a fast system's short sample.
    runs = max(RUNS, min(MAX_RUNS, int(TIMED_SECONDS / per_run)))
    gc.collect()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        await run_once()
        times.append(time.perf_counter() - start)
    out: dict[str, object] = summary_ms(times)
    levels = (100, 1000)
    for n in levels:
        walls: list[float] = []
        level_start = time.perf_counter()
        while len(walls) < 3 or (time.perf_counter() - level_start < TIMED_SECONDS and len(walls) < 50):
            start = time.perf_counter()
            results = await asyncio.gather(*(run_once() for _ in range(n)))
            walls.append(time.perf_counter() - start)
            assert all(r == FINAL_TEXT for r in results)
        out[f"concurrent_{n}_per_run_ms"] = round(statistics.median(walls) * 1000 / n, 4)
        out[f"concurrent_{n}_wall_ms"] = round(statistics.median(walls) * 1000, 2)
        # Peak RSS after sequential runs + 100 concurrent, and again after 1,000 concurrent.
        key = "peak_rss_mib" if n == 100 else f"peak_rss_after_{n}_mib"
        out[key] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return out


def import_time(system: str) -> float:
    start = time.perf_counter()
    exec(IMPORTS[system], {})
    return time.perf_counter() - start


def child(args: argparse.Namespace) -> None:
    if args.mode == "import":
        print(json.dumps({"import_s": import_time(args.system)}))
    else:
        print(json.dumps(asyncio.run(measure(args.system))))


def parent() -> None:
    script = Path(__file__).resolve()
    results: dict[str, dict[str, object]] = {}
    for system in SYSTEMS:
        print(f"... {system}", file=sys.stderr)
        data = run_child(script, "--system", system, "--mode", "run")
        imports = [run_child(script, "--system", system, "--mode", "import")["import_s"] for _ in range(5)]
        data["import_ms"] = round(statistics.median(imports) * 1000, 1)
        results[system] = data
    bare = [run_child(script, "--system", "kanawa_bare", "--mode", "import")["import_s"] for _ in range(5)]
    results["kanawa"]["import_bare_ms"] = round(statistics.median(bare) * 1000, 1)

    def num(system: str, key: str) -> float:
        return float(results[system][key])  # type: ignore[arg-type]

    peers = [s for s in SYSTEMS if s != "kanawa"]
    fastest = min(peers, key=lambda s: num(s, "median_ms"))
    lightest = min(peers, key=lambda s: num(s, "peak_rss_mib"))
    k = results["kanawa"]
    ratios = {
        "median_vs_fastest_peer": round(num("kanawa", "median_ms") / num(fastest, "median_ms"), 4),
        "rss_vs_lightest_peer": round(num("kanawa", "peak_rss_mib") / num(lightest, "peak_rss_mib"), 3),
        "concurrency_1000_vs_100_per_run": {
            system: round(
                num(system, "concurrent_1000_per_run_ms") / num(system, "concurrent_100_per_run_ms"), 3
            )
            for system in SYSTEMS
        },
        "fastest_peer": fastest,
        "lightest_peer": lightest,
    }
    payload = {**results, "ratios": ratios, "machine": machine(), "min_runs": RUNS, "warmup": WARMUP}
    rows = [
        "| system | median ms/run | p90 ms/run | 100 concurrent, ms/run | 1,000 concurrent, ms/run "
        "| import ms | peak RSS MiB (after 100 / 1,000 concurrent) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for system in SYSTEMS:
        r = results[system]
        rows.append(
            f"| {system} | {r['median_ms']} | {r['p90_ms']} | {r['concurrent_100_per_run_ms']} "
            f"| {r['concurrent_1000_per_run_ms']} | {r['import_ms']} | {r['peak_rss_mib']} / {r['peak_rss_after_1000_mib']} |"
        )
    table = "\n".join(
        [
            "# Loop overhead (3 model requests + 3 tool calls per run, scripted model)",
            "",
            *rows,
            "",
            f"- kanawa median per run / fastest peer ({fastest}): **{ratios['median_vs_fastest_peer']}** "
            "(target ≤ 0.1)",
            f"- kanawa peak RSS / lightest peer ({lightest}): **{ratios['rss_vs_lightest_peer']}** (target < 0.5)",
            "- per-run cost at 1,000 concurrent runs / at 100 (flat ≈ 1): "
            + ", ".join(
                f"{name} {ratio}" for name, ratio in ratios["concurrency_1000_vs_100_per_run"].items()
            )  # type: ignore[attr-defined]
            + " — what growth there is comes from CPython's full (generation 2) garbage collections, which "
            "scan every live object while 1,000 runs are in flight",
            f"- `import kanawa`: {k['import_bare_ms']} ms; `from kanawa import Agent, tool`: {k['import_ms']} ms "
            "(target < 150 ms)",
            f"- Python {payload['machine']['python']} on {payload['machine']['machine']}; "  # type: ignore[index]
            f"at least {RUNS} timed runs (about {TIMED_SECONDS:.0f} s of runs) after {WARMUP} warm-up runs, "
            "each system in its own process.",
            "",
        ]
    )
    write_results("loop_overhead", payload, table)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--system", choices=[*SYSTEMS, "kanawa_bare"])
    parser.add_argument("--mode", choices=["run", "import"], default="run")
    args = parser.parse_args()
    if args.system:
        child(args)
    else:
        parent()


if __name__ == "__main__":
    main()
