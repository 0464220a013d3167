"""Import cost and peak memory: what each framework loads for one scripted agent run, in one run.

Workload (identical for every system, the loop_overhead conversation): turn 1 asks for one tool call,
turn 2 for two parallel tool calls, turn 3 answers with text — 3 model requests and 3 tool executions
per run, with a scripted model (no network, no tokens).

Each system runs in its own fresh interpreter, which imports nothing before the measurement but
``sys``, ``time`` and ``resource`` (the harness must not lift every system's floor), and records:
  - the framework's import (``from kanawa import Agent, tool`` and the peers' equivalents): wall time,
    modules in ``sys.modules``, peak RSS;
  - after building the agent and one run: modules and peak RSS (what a first run adds);
  - after 100 sequential and 100 concurrent runs: peak RSS (the loop_overhead figure).

Bytecode: a production install has compiled ``.pyc`` files (pip writes them). This repository's
environment runs with ``PYTHONDONTWRITEBYTECODE=1`` over a venv installed without them, so every
import there compiles from source, which costs every system time and peak memory in proportion to how
much source it loads. The headline figures are therefore taken with a bytecode cache: each child runs
with ``PYTHONPYCACHEPREFIX`` pointing at a private cache under the system temp directory, filled by one
warm-up child per system first; the same figures compiling from source are shown alongside.

Rounds are interleaved (system by system within a round) and every figure is the median over the
rounds; import time also shows the best round, as the machine is shared.

Beside the peers: ``floor`` (asyncio plus pydantic with one arguments model, no agent: what any loop
validating tool arguments with pydantic pays) and, with ``--base SRC``, kanawa from another source tree
(e.g. a worktree of main) in the same rounds, for before/after figures.

Usage: ``python bench/import_memory.py [--rounds 5] [--base ../main/src]`` (writes
bench/results/import_memory.{json,md}).
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # the child must not import typing before it measures
if TYPE_CHECKING:
    from typing import Any

SYSTEMS = ("kanawa", "pydantic_ai", "openai_agents", "agno")
PEERS = SYSTEMS[1:]
REFERENCES = ("kanawa_base", "floor")
"""``kanawa_base``: kanawa from another source tree (``--base``, e.g. main), measured in the same rounds.
``floor``: what kanawa's two runtime dependencies cost on their own — asyncio plus pydantic with one
arguments model validated in an event loop (pydantic's plugin scan included) — no agent at all."""
IMPORTS = {
    "kanawa": "from kanawa import Agent, tool",
    "kanawa_base": "from kanawa import Agent, tool",
    "floor": "import asyncio; from pydantic import BaseModel, ConfigDict, create_model",
    "pydantic_ai": "from pydantic_ai import Agent",
    "openai_agents": "from agents import Agent, Runner",
    "agno": "from agno.agent import Agent",
}
FINAL_TEXT = "1+2=3, 3+4=7, 5*6=30."
PROMPT = "Compute 1+2, then 3+4 and 5*6."
SEQUENTIAL, CONCURRENT = 100, 100


# ----------------------------------------------------------------------------------------- systems
# Each builder returns an async function running the conversation once. Imports stay inside the
# builders: the child imports a framework only when it measures it.
def build_kanawa() -> Any:
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
        result = await agent.arun(PROMPT)
        model.requests.clear()  # the test model records requests; keep memory to the framework's own
        return str(result.output)

    return run_once


def build_pydantic_ai() -> Any:
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
        result = await agent.run(PROMPT)
        return str(result.output)

    return run_once


def build_openai_agents() -> Any:
    from agents.models.interface import Model
    from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

    from agents import Agent, ModelResponse, Runner, Usage, function_tool, set_tracing_disabled

    set_tracing_disabled(True)

    def call(call_id: str, name: str, arguments: str) -> ResponseFunctionToolCall:
        return ResponseFunctionToolCall(
            type="function_call", call_id=call_id, name=name, arguments=arguments, id=call_id
        )

    class ScriptedModel(Model):
        async def get_response(self, system_instructions, input, *args: Any, **kwargs: Any):  # type: ignore[no-untyped-def]
            items = input if isinstance(input, list) else []
            turn = sum(1 for i in items if isinstance(i, dict) and i.get("type") == "function_call")
            if turn == 0:
                output: list[Any] = [call("c1", "add", '{"a": 1, "b": 2}')]
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

        def stream_response(self, *args: Any, **kwargs: Any):  # type: ignore[no-untyped-def]
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
        result = await Runner.run(agent, PROMPT)
        return str(result.final_output)

    return run_once


def build_agno() -> Any:
    from dataclasses import dataclass

    from agno.agent import Agent
    from agno.models.base import Model
    from agno.models.response import ModelResponse

    def call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
        return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}

    @dataclass
    class ScriptedModel(Model):
        """A scripted Agno model: the same three turns, no client, no network."""

        def _respond(self, messages: list[Any]) -> ModelResponse:
            turn = sum(1 for m in messages if m.role == "assistant" and m.tool_calls)
            if turn == 0:
                return ModelResponse(role="assistant", tool_calls=[call("c1", "add", '{"a": 1, "b": 2}')])
            if turn == 1:
                return ModelResponse(
                    role="assistant",
                    tool_calls=[call("c2", "add", '{"a": 3, "b": 4}'), call("c3", "mul", '{"a": 5, "b": 6}')],
                )
            return ModelResponse(role="assistant", content=FINAL_TEXT)

        def invoke(self, messages: list[Any], *args: Any, **kwargs: Any) -> ModelResponse:
            return self._respond(messages)

        async def ainvoke(self, messages: list[Any], *args: Any, **kwargs: Any) -> ModelResponse:
            return self._respond(messages)

        def invoke_stream(self, *args: Any, **kwargs: Any) -> Any:
            raise RuntimeError("the benchmark does not stream")

        def ainvoke_stream(self, *args: Any, **kwargs: Any) -> Any:
            raise RuntimeError("the benchmark does not stream")

        def _parse_provider_response(self, response: Any, **kwargs: Any) -> ModelResponse:
            return response  # type: ignore[no-any-return]

        def _parse_provider_response_delta(self, response: Any) -> ModelResponse:
            return response  # type: ignore[no-any-return]

    async def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    async def mul(a: int, b: int) -> int:
        """Multiply two integers."""
        return a * b

    agent = Agent(
        model=ScriptedModel(id="scripted", provider="bench"),
        instructions="Do the arithmetic.",
        tools=[add, mul],
        telemetry=False,
    )

    async def run_once() -> str:
        result = await agent.arun(PROMPT)
        return str(result.content)

    return run_once


def build_floor() -> Any:
    from pydantic import BaseModel, ConfigDict, create_model

    class Arguments(BaseModel):
        model_config = ConfigDict(extra="forbid")

    add = create_model("add", __base__=Arguments, a=(int, ...), b=(int, ...))
    add.model_json_schema()

    async def run_once() -> str:
        for raw in ('{"a": 1, "b": 2}', '{"a": 3, "b": 4}', '{"a": 5, "b": 6}'):
            add.model_validate_json(raw)
        return FINAL_TEXT

    return run_once


BUILDERS = {
    "kanawa": build_kanawa,
    "kanawa_base": build_kanawa,
    "floor": build_floor,
    "pydantic_ai": build_pydantic_ai,
    "openai_agents": build_openai_agents,
    "agno": build_agno,
}


# ------------------------------------------------------------------------------------------ child
def child(system: str) -> None:
    """Measure one system in this (fresh) interpreter and print one JSON line."""
    import resource
    import time

    def peak_mib() -> float:
        return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)

    with open("/proc/self/statm") as statm:  # resident now: ru_maxrss starts at the parent's peak
        start_rss = int(statm.read().split()[1]) * resource.getpagesize() / 2**20
    out: dict[str, Any] = {"start_rss_mib": round(start_rss, 1), "start_modules": len(sys.modules)}
    start = time.perf_counter()
    exec(IMPORTS[system], {})
    out["import_ms"] = round((time.perf_counter() - start) * 1000, 1)
    out["import_modules"] = len(sys.modules)
    out["import_rss_mib"] = peak_mib()

    import asyncio

    run_once = BUILDERS[system]()
    first = asyncio.run(run_once())
    if first != FINAL_TEXT:
        raise RuntimeError(f"{system} produced {first!r}, expected {FINAL_TEXT!r}")
    out["import_and_first_run_ms"] = round((time.perf_counter() - start) * 1000, 1)
    out["first_run_modules"] = len(sys.modules)
    out["first_run_rss_mib"] = peak_mib()

    async def many() -> None:
        for _ in range(SEQUENTIAL):
            await run_once()
        results = await asyncio.gather(*(run_once() for _ in range(CONCURRENT)))
        if any(r != FINAL_TEXT for r in results):
            raise RuntimeError(f"{system}: a concurrent run went wrong")

    asyncio.run(many())
    out["after_runs_rss_mib"] = peak_mib()
    import json

    print(json.dumps(out))


# ----------------------------------------------------------------------------------------- parent
def run_child(system: str, env: dict[str, str]) -> dict[str, Any]:
    import json
    import subprocess
    from pathlib import Path

    proc = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--child", system],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"{system} child failed:\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def medians(samples: list[dict[str, Any]]) -> dict[str, Any]:
    import statistics

    keys = samples[0].keys()
    out: dict[str, Any] = {k: round(statistics.median(s[k] for s in samples), 1) for k in keys}
    out["import_ms_best"] = min(s["import_ms"] for s in samples)
    out["rounds"] = len(samples)
    return out


def parent(rounds: int, base: str | None, base_label: str | None) -> None:
    import os
    import resource
    import tempfile
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _common import machine, write_results

    cache = Path(tempfile.gettempdir()) / f"kanawa-bench-pycache-{os.getuid()}"
    cached = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    cached["PYTHONPYCACHEPREFIX"] = str(cache)
    source = {k: v for k, v in os.environ.items() if k != "PYTHONPYCACHEPREFIX"}
    source["PYTHONDONTWRITEBYTECODE"] = "1"
    modes = {"bytecode": cached, "source": source}
    systems = (*SYSTEMS, *(("kanawa_base",) if base else ()), "floor")

    def env_for(system: str, mode: str) -> dict[str, str]:
        if system != "kanawa_base" or base is None:
            return modes[mode]
        return {**modes[mode], "PYTHONPATH": base}

    for system in systems:  # fill the bytecode cache (the first import writes it)
        run_child(system, env_for(system, "bytecode"))
    samples: dict[str, dict[str, list[dict[str, Any]]]] = {m: {s: [] for s in systems} for m in modes}
    for round_no in range(rounds):
        for mode in modes:
            for system in systems:
                print(f"... round {round_no + 1}/{rounds} {mode} {system}", file=sys.stderr)
                samples[mode][system].append(run_child(system, env_for(system, mode)))
    results = {system: {mode: medians(samples[mode][system]) for mode in modes} for system in systems}
    keys = (
        "import_rss_mib",
        "first_run_rss_mib",
        "after_runs_rss_mib",
        "import_ms",
        "import_and_first_run_ms",
    )
    ratios = {
        mode: {
            f"{system}_vs_{peer}": {
                key: round(results[system][mode][key] / results[peer][mode][key], 3) for key in keys
            }
            for system in ("kanawa", *REFERENCES)
            if system in results
            for peer in PEERS
        }
        for mode in modes
    }
    load = os.getloadavg()
    payload = {
        **results,
        "ratios": ratios,
        "machine": machine(),
        "load_average": [round(x, 2) for x in load],
        "rounds": rounds,
        "base": base_label or base,
        "parent_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "workload": {"sequential": SEQUENTIAL, "concurrent": CONCURRENT},
    }
    write_results("import_memory", payload, table(results, ratios, payload))


def table(results: dict[str, Any], ratios: dict[str, Any], payload: dict[str, Any]) -> str:
    rows = [
        "| system | import ms (best) | import + first run ms | modules after import / first run "
        "| peak RSS MiB: import | first run | after 100 + 100 concurrent runs "
        "| same three, compiling from source |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    labels = {"kanawa_base": f"kanawa at `{payload['base']}`", "floor": "floor: asyncio + pydantic, no agent"}
    for system in results:
        b, s = results[system]["bytecode"], results[system]["source"]
        rows.append(
            f"| {labels.get(system, system)} | {b['import_ms']} ({b['import_ms_best']}) "
            f"| {b['import_and_first_run_ms']} "
            f"| {int(b['import_modules'])} / {int(b['first_run_modules'])} "
            f"| {b['import_rss_mib']} | {b['first_run_rss_mib']} | {b['after_runs_rss_mib']} "
            f"| {s['import_rss_mib']} / {s['first_run_rss_mib']} / {s['after_runs_rss_mib']} |"
        )
    vs = ratios["bytecode"]["kanawa_vs_pydantic_ai"]
    lines = [
        "# Import cost and peak memory (the loop_overhead conversation, scripted model)",
        "",
        *rows,
        "",
        f"- kanawa / pydantic_ai peak RSS: **{vs['first_run_rss_mib']}** after one run, "
        f"{vs['after_runs_rss_mib']} after 100 + 100 concurrent runs, {vs['import_rss_mib']} after the import "
        "(target < 0.5)"
        + (
            f"; kanawa at the base: {ratios['bytecode']['kanawa_base_vs_pydantic_ai']['first_run_rss_mib']}"
            if "kanawa_base" in results
            else ""
        )
        + f"; the floor alone: {ratios['bytecode']['floor_vs_pydantic_ai']['first_run_rss_mib']} after one run",
        f"- `from kanawa import Agent, tool`: {results['kanawa']['bytecode']['import_ms']} ms median, "
        f"{results['kanawa']['bytecode']['import_ms_best']} ms best (target < 150 ms); "
        f"compiling from source {results['kanawa']['source']['import_ms']} ms",
        "- peak RSS is `ru_maxrss`, which Linux carries over `exec` from the forking parent (here about "
        f"{payload['parent_rss_mib']} MiB, below every figure above); a bare interpreter holds "
        f"{results['kanawa']['bytecode']['start_rss_mib']} MiB and {int(results['kanawa']['bytecode']['start_modules'])} "
        "modules when the harness starts, and it imports nothing else before the measurement.",
        "- Each system in its own fresh interpreter; bytecode columns use a warmed `PYTHONPYCACHEPREFIX` cache "
        "(as a pip install has `.pyc` files), the last column compiles every module from source "
        "(`PYTHONDONTWRITEBYTECODE=1` over a venv without `.pyc`, as this repository's environment runs).",
        f"- Python {payload['machine']['python']} on {payload['machine']['machine']}; "
        f"medians of {payload['rounds']} interleaved rounds; load average at the end "
        f"{', '.join(str(x) for x in payload['load_average'])} (2 shared cores).",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--child":  # no argparse in the measured interpreter
        child(sys.argv[2])
        return
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--child", choices=[*SYSTEMS, *REFERENCES], help="measure one system in this interpreter"
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--base", help="another kanawa source tree (its src directory) to measure beside")
    parser.add_argument("--base-label", help="what to call it in the table (a branch and commit)")
    args = parser.parse_args()
    parent(args.rounds, args.base, args.base_label)


if __name__ == "__main__":
    main()
