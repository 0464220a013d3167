"""Loop overhead: the same scripted conversation through kanawa and its peers, in one run.

Conversation (identical for every system): turn 1 asks for one tool call, turn 2 for two parallel tool
calls, turn 3 answers with text — 3 model requests and 3 tool executions per run. The model is scripted
at each framework's model-class level (no network, no tokens), so what is measured is each framework's
own cost: building requests, parsing tool calls, validating arguments, running tools, keeping history.

Two workloads: the tools are ``async def`` ("async") or plain ``def`` ("sync"). Every framework runs a
plain-``def`` tool in a worker thread by default, so the event loop is never blocked by user code;
kanawa's ``@tool(inline=True)`` runs a sync tool the user declared cheap on the event loop instead
(row ``kanawa_inline``, sync workload only).

Systems: kanawa; ``floor``, the same conversation as a bare asyncio loop (dict messages, ``json.loads``
of the arguments, ``asyncio.gather`` for a turn's parallel calls, sync tools called inline: the least
any tool loop pays); peers pydantic-ai (``FunctionModel``), the OpenAI Agents SDK (a scripted ``Model``,
tracing disabled) and Agno 3.x (a scripted ``agno.models.base.Model`` subclass, telemetry off).

The machine is shared, so every (system, workload) runs in ROUNDS interleaved rounds, each in a fresh
interpreter: warm-up, then sequential runs for about TIMED_SECONDS (median and p90 per run). The ratio
targets are checked in every round. Once per system, also in its own interpreter: 100 and 1,000
concurrent runs of the async workload (wall time per run) and peak RSS; cold import time (median of
5 fresh processes).

Usage: ``python bench/loop_overhead.py`` (writes bench/results/loop_overhead.{json,md});
``--name loop_overhead_before`` writes another name (e.g. with PYTHONPATH at an older tree), and
``--before bench/results/loop_overhead_before.json`` adds a before/after section to the Markdown.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import resource
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import RESULTS, machine, run_child, summary_ms, write_results

SYSTEMS = ("kanawa", "kanawa_inline", "floor", "pydantic_ai", "openai_agents", "agno")
RATIO_PEERS = ("pydantic_ai", "openai_agents")
IMPORTS = {
    "kanawa": "import kanawa; from kanawa import Agent, tool",
    "kanawa_bare": "import kanawa",
    "pydantic_ai": "import pydantic_ai; from pydantic_ai import Agent",
    "openai_agents": "import agents; from agents import Agent, Runner",
    "agno": "import agno; from agno.agent import Agent",
}
WARMUP, RUNS, MAX_RUNS, TIMED_SECONDS, ROUNDS = 50, 300, 20_000, 1.5, 5
FINAL_TEXT = "1+2=3, 3+4=7, 5*6=30."

RunOnce = Callable[[], Awaitable[str]]


# ----------------------------------------------------------------------------------------- systems
def _arithmetic(sync: bool) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """The two tools, as plain ``def`` (sync) or ``async def`` functions, typed and documented."""
    if sync:

        def add(a: int, b: int) -> int:
            """Add two integers."""
            return a + b

        def mul(a: int, b: int) -> int:
            """Multiply two integers."""
            return a * b

        return add, mul

    async def aadd(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    async def amul(a: int, b: int) -> int:
        """Multiply two integers."""
        return a * b

    aadd.__name__, amul.__name__ = "add", "mul"
    return aadd, amul


def build_kanawa(sync: bool, inline: bool = False) -> RunOnce:
    from kanawa import Agent, tool
    from kanawa.llm.testing import FunctionLLM, ModelRequest
    from kanawa.types import AssistantMessage, ToolCall

    add, mul = _arithmetic(sync)
    decorate = tool(inline=True) if inline else tool  # type: ignore[call-overload]
    tools = [decorate(add), decorate(mul)]

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
    agent = Agent("bench", instructions="Do the arithmetic.", tools=tools, model=model)

    async def run_once() -> str:
        result = await agent.arun("Compute 1+2, then 3+4 and 5*6.")
        if len(model.requests) > 300:
            model.requests.clear()  # the test model records requests; keep the bench's memory flat
        return str(result.output)

    return run_once


def build_kanawa_inline(sync: bool) -> RunOnce:
    return build_kanawa(sync, inline=True)


def build_floor(sync: bool) -> RunOnce:
    """The conversation as a bare asyncio loop: what any tool loop pays at least."""
    add, mul = _arithmetic(sync)
    tools = {"add": add, "mul": mul}

    def call(call_id: str, name: str, args: str) -> dict[str, str]:
        return {"id": call_id, "name": name, "arguments": args}

    async def model(messages: list[dict[str, Any]]) -> dict[str, Any]:
        turn = sum(1 for m in messages if m["role"] == "assistant")
        if turn == 0:
            return {"role": "assistant", "tool_calls": [call("c1", "add", '{"a": 1, "b": 2}')]}
        if turn == 1:
            return {
                "role": "assistant",
                "tool_calls": [call("c2", "add", '{"a": 3, "b": 4}'), call("c3", "mul", '{"a": 5, "b": 6}')],
            }
        return {"role": "assistant", "content": FINAL_TEXT}

    async def run_tool(c: dict[str, str]) -> dict[str, str]:
        output = tools[c["name"]](**json.loads(c["arguments"]))
        if not sync:
            output = await output
        return {"role": "tool", "tool_call_id": c["id"], "content": str(output)}

    async def run_once() -> str:
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": "Do the arithmetic."},
            {"role": "user", "content": "Compute 1+2, then 3+4 and 5*6."},
        ]
        while True:
            reply = await model(messages)
            messages.append(reply)
            calls = reply.get("tool_calls")
            if not calls:
                return str(reply["content"])
            if len(calls) == 1:
                messages.append(await run_tool(calls[0]))
            else:
                messages.extend(await asyncio.gather(*(run_tool(c) for c in calls)))

    return run_once


def build_pydantic_ai(sync: bool) -> RunOnce:
    from pydantic_ai import Agent, Tool
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

    add, mul = _arithmetic(sync)
    agent = Agent(
        FunctionModel(respond),
        instructions="Do the arithmetic.",
        tools=[Tool(add, takes_ctx=False), Tool(mul, takes_ctx=False)],
    )

    async def run_once() -> str:
        result = await agent.run("Compute 1+2, then 3+4 and 5*6.")
        return str(result.output)

    return run_once


def build_openai_agents(sync: bool) -> RunOnce:
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

    add, mul = _arithmetic(sync)
    tools = [function_tool(add), function_tool(mul)]
    agent = Agent(name="bench", instructions="Do the arithmetic.", tools=tools, model=ScriptedModel())

    async def run_once() -> str:
        result = await Runner.run(agent, "Compute 1+2, then 3+4 and 5*6.")
        return str(result.final_output)

    return run_once


def build_agno(sync: bool) -> RunOnce:
    """Agno 3.x with a scripted model: a subclass of its model base class whose ``ainvoke`` answers
    from the conversation, as a provider's model would after parsing its response (tool calls in
    the OpenAI dict form Agno's own providers produce). Telemetry is off; no database, no memory."""
    from dataclasses import dataclass

    from agno.agent import Agent
    from agno.models.base import Model
    from agno.models.response import ModelResponse

    def call(call_id: str, name: str, args: str) -> dict[str, Any]:
        return {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}

    @dataclass
    class ScriptedModel(Model):
        id: str = "scripted"
        name: str = "Scripted"
        provider: str = "bench"

        def _respond(self, messages: list[Any]) -> ModelResponse:
            turn = sum(1 for m in messages if m.role == "assistant")
            if turn == 0:
                return ModelResponse(role="assistant", tool_calls=[call("c1", "add", '{"a": 1, "b": 2}')])
            if turn == 1:
                return ModelResponse(
                    role="assistant",
                    tool_calls=[call("c2", "add", '{"a": 3, "b": 4}'), call("c3", "mul", '{"a": 5, "b": 6}')],
                )
            return ModelResponse(role="assistant", content=FINAL_TEXT)

        def invoke(self, messages: list[Any], **kwargs: Any) -> ModelResponse:  # type: ignore[override]
            return self._respond(messages)

        async def ainvoke(self, messages: list[Any], **kwargs: Any) -> ModelResponse:  # type: ignore[override]
            return self._respond(messages)

        def invoke_stream(self, *args: Any, **kwargs: Any) -> Any:
            raise RuntimeError("the benchmark does not stream")

        def ainvoke_stream(self, *args: Any, **kwargs: Any) -> Any:
            raise RuntimeError("the benchmark does not stream")

        def _parse_provider_response(self, response: Any, **kwargs: Any) -> ModelResponse:
            return response  # type: ignore[no-any-return]

        def _parse_provider_response_delta(self, response: Any) -> ModelResponse:
            return response  # type: ignore[no-any-return]

    add, mul = _arithmetic(sync)
    agent = Agent(
        name="bench",
        model=ScriptedModel(),
        instructions="Do the arithmetic.",
        tools=[add, mul],
        telemetry=False,
    )

    async def run_once() -> str:
        result = await agent.arun("Compute 1+2, then 3+4 and 5*6.")
        return str(result.content)

    return run_once


BUILDERS: dict[str, Callable[[bool], RunOnce]] = {
    "kanawa": build_kanawa,
    "kanawa_inline": build_kanawa_inline,
    "floor": build_floor,
    "pydantic_ai": build_pydantic_ai,
    "openai_agents": build_openai_agents,
    "agno": build_agno,
}
WORKLOADS_OF = {system: ("async", "sync") for system in BUILDERS} | {"kanawa_inline": ("sync",)}


# ------------------------------------------------------------------------------------- measurement
async def sequential(system: str, workload: str) -> dict[str, Any]:
    """One round: warm-up, then sequential runs for about TIMED_SECONDS."""
    run_once = BUILDERS[system](workload == "sync")
    first = await run_once()
    if first != FINAL_TEXT:
        raise RuntimeError(f"{system} ({workload}) produced {first!r}, expected {FINAL_TEXT!r}")
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
    return dict(summary_ms(times))


async def concurrent(system: str) -> dict[str, Any]:
    """The async workload at 100 and 1,000 concurrent runs: wall time per run, peak RSS after each."""
    run_once = BUILDERS[system](False)
    for _ in range(WARMUP):
        await run_once()
    out: dict[str, Any] = {}
    for n in (100, 1000):
        walls: list[float] = []
        level_start = time.perf_counter()
        while len(walls) < 3 or (time.perf_counter() - level_start < TIMED_SECONDS and len(walls) < 50):
            start = time.perf_counter()
            results = await asyncio.gather(*(run_once() for _ in range(n)))
            walls.append(time.perf_counter() - start)
            assert all(r == FINAL_TEXT for r in results)
        out[f"concurrent_{n}_per_run_ms"] = round(statistics.median(walls) * 1000 / n, 4)
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
    elif args.mode == "concurrent":
        print(json.dumps(asyncio.run(concurrent(args.system))))
    else:
        print(json.dumps(asyncio.run(sequential(args.system, args.workload))))


# ------------------------------------------------------------------------------------------ report
def load_average() -> list[float]:
    return [round(value, 2) for value in os.getloadavg()]


def fastest_peer(rounds: dict[str, dict[str, list[float]]], workload: str, index: int) -> tuple[str, float]:
    """The faster of the established peers (pydantic-ai, OpenAI Agents SDK) in one round."""
    name = min(RATIO_PEERS, key=lambda s: rounds[s][workload][index])
    return name, rounds[name][workload][index]


def ratios(rounds: dict[str, dict[str, list[float]]]) -> dict[str, Any]:
    """Every round's ratios: kanawa / faster established peer, kanawa / Agno, kanawa / floor."""
    out: dict[str, Any] = {}
    for system in (s for s in ("kanawa", "kanawa_inline") if s in rounds):
        for workload in WORKLOADS_OF[system]:
            mine = rounds[system][workload]
            per_round = []
            for index, value in enumerate(mine):
                peer, peer_ms = fastest_peer(rounds, workload, index)
                per_round.append(
                    {
                        "fastest_peer": peer,
                        "vs_fastest_peer": round(value / peer_ms, 4),
                        "vs_agno": round(value / rounds["agno"][workload][index], 4),
                        "vs_floor": round(value / rounds["floor"][workload][index], 2),
                    }
                )
            out[f"{system}/{workload}"] = per_round
    return out


def span(values: list[float], digits: int = 3) -> str:
    low, high = min(values), max(values)
    return (
        f"{low:.{digits}f}"
        if round(low, digits) == round(high, digits)
        else f"{low:.{digits}f}–{high:.{digits}f}"
    )


def summary_lines(payload: dict[str, Any]) -> list[str]:
    lines = []
    for key, per_round in payload["ratios"].items():
        system, workload = key.split("/")
        peer = span([r["vs_fastest_peer"] for r in per_round])
        agno = span([r["vs_agno"] for r in per_round])
        floor = span([r["vs_floor"] for r in per_round], 1)
        worst = max(r["vs_fastest_peer"] for r in per_round)
        lines.append(
            f"| {system} | {workload} | {peer} | {'yes' if worst <= 0.1 else 'no'} | {agno} | {floor} |"
        )
    return lines


def table(payload: dict[str, Any], before: dict[str, Any] | None) -> str:
    rounds = payload["rounds"]
    systems = [s for s in SYSTEMS if s in rounds]
    rows = [
        "| system | workload | median ms/run, each round | best round: median / p90 ms "
        "| 100 concurrent, ms/run | 1,000 concurrent, ms/run | import ms | peak RSS MiB (after 100 / 1,000) |",
        "|---|---|---|---:|---:|---:|---:|---:|",
    ]
    for system in systems:
        for workload in WORKLOADS_OF[system]:
            medians = rounds[system][workload]
            best = min(payload["round_details"][system][workload], key=lambda r: r["median_ms"])
            extra = payload.get("once", {}).get(system, {})
            concurrent_cells = (
                f"{extra['concurrent_100_per_run_ms']} | {extra['concurrent_1000_per_run_ms']} | "
                f"{extra.get('import_ms', '—')} | {extra['peak_rss_mib']} / {extra['peak_rss_after_1000_mib']}"
                if workload == "async" and "concurrent_100_per_run_ms" in extra
                else "— | — | — | —"
            )
            rows.append(
                f"| {system} | {workload} | {' · '.join(f'{m:.4f}' for m in medians)} "
                f"| {best['median_ms']:.4f} / {best['p90_ms']:.4f} | {concurrent_cells} |"
            )
    lines = [
        "# Loop overhead (3 model requests + 3 tool calls per run, scripted model)",
        "",
        *rows,
        "",
        "Ratios, every round (median per run; the range over the rounds):",
        "",
        "| kanawa | tools | / faster of pydantic-ai and OpenAI Agents (target ≤ 0.10) | ≤ 0.10 in every round "
        "| / Agno | / bare-asyncio floor (target ≤ 5× with async tools) |",
        "|---|---|---:|---|---:|---:|",
        *summary_lines(payload),
        "",
        f"- load average (1, 5, 15 min) at the start: {payload['load_average_start']}, at the end: "
        f"{payload['load_average_end']}; {ROUNDS} interleaved rounds, each (system, workload) in a fresh "
        f"interpreter per round: {WARMUP} warm-up runs, then at least {RUNS} runs (about "
        f"{TIMED_SECONDS:.1f} s of runs).",
        "- `kanawa` runs plain-`def` tools in a worker thread, as every peer does; `kanawa_inline` is the "
        "same agent with `@tool(inline=True)`, which runs a sync tool the user declared cheap on the event "
        "loop. `floor` is the bare asyncio loop (sync tools called inline).",
        f"- Versions: {payload['versions']}; Python {payload['machine']['python']} on "
        f"{payload['machine']['machine']}.",
    ]
    if before is not None:
        lines += ["", *before_after(payload, before)]
    return "\n".join(lines) + "\n"


def before_after(after: dict[str, Any], before: dict[str, Any]) -> list[str]:
    rows = [
        "## Before / after (same session, back to back)",
        "",
        f"Before: {before.get('label', 'before')} (load average at its start {before['load_average_start']}, "
        f"end {before['load_average_end']}); after: this run.",
        "",
        "| kanawa | tools | median ms/run, rounds (before) | (after) | / fastest established peer (before) "
        "| (after) | / Agno (before) | (after) | / floor (before) | (after) |",
        "|---|---|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for key, per_round in after["ratios"].items():
        system, workload = key.split("/")
        was = before["ratios"].get(key)
        was_ms = before["rounds"].get(system, {}).get(workload)

        def cell(values: list[dict[str, Any]] | None, field: str, digits: int) -> str:
            return span([r[field] for r in values], digits) if values else "n/a"

        rows.append(
            f"| {system} | {workload} | {span(was_ms, 4) if was_ms else 'n/a'} "
            f"| {span(after['rounds'][system][workload], 4)} "
            f"| {cell(was, 'vs_fastest_peer', 3)} | {cell(per_round, 'vs_fastest_peer', 3)} "
            f"| {cell(was, 'vs_agno', 3)} | {cell(per_round, 'vs_agno', 3)} "
            f"| {cell(was, 'vs_floor', 1)} | {cell(per_round, 'vs_floor', 1)} |"
        )
    return rows


def versions() -> str:
    from importlib.metadata import PackageNotFoundError, version

    found = []
    for package in ("pydantic-ai-slim", "openai-agents", "agno"):
        try:
            found.append(f"{package} {version(package)}")
        except PackageNotFoundError:
            found.append(f"{package} (not installed)")
    return ", ".join(found)


def inline_supported(script: Path) -> bool:
    """Whether the kanawa under test has ``@tool(inline=True)`` (an older tree, measured as the
    "before" of a change, may not)."""
    try:
        run_child(script, "--system", "kanawa_inline", "--workload", "sync", "--mode", "probe")
    except RuntimeError:
        return False
    return True


def parent(args: argparse.Namespace) -> None:
    script = Path(__file__).resolve()
    load_start = load_average()
    systems = [s for s in SYSTEMS if s != "kanawa_inline" or inline_supported(script)]
    pairs = [(system, workload) for system in systems for workload in WORKLOADS_OF[system]]
    details: dict[str, dict[str, list[dict[str, Any]]]] = {
        s: {w: [] for w in WORKLOADS_OF[s]} for s in systems
    }
    # Rounds interleave every (system, workload): a slow spell on the machine hits all of them alike.
    for index in range(ROUNDS):
        for system, workload in pairs:
            print(f"... round {index + 1}/{ROUNDS}: {system} {workload}", file=sys.stderr)
            details[system][workload].append(
                run_child(script, "--system", system, "--workload", workload, "--mode", "run")
            )
    once: dict[str, dict[str, Any]] = {}
    if not args.skip_concurrency:
        for system in (s for s in systems if s not in ("kanawa_inline", "floor")):
            print(f"... {system}: concurrency, imports", file=sys.stderr)
            data = run_child(script, "--system", system, "--mode", "concurrent")
            imports = [
                run_child(script, "--system", system, "--mode", "import")["import_s"] for _ in range(5)
            ]
            data["import_ms"] = round(statistics.median(imports) * 1000, 1)
            once[system] = data
    rounds = {s: {w: [r["median_ms"] for r in details[s][w]] for w in details[s]} for s in systems}
    payload: dict[str, Any] = {
        "label": args.label,
        "rounds": rounds,
        "round_details": details,
        "once": once,
        "ratios": ratios(rounds),
        "machine": machine(),
        "versions": versions(),
        "load_average_start": load_start,
        "load_average_end": load_average(),
        "rounds_count": ROUNDS,
        "min_runs": RUNS,
        "warmup": WARMUP,
    }
    raw = RESULTS / f"{args.name}.json"
    raw.write_text(json.dumps(payload, indent=2, sort_keys=True) + "\n")  # kept even if the table fails
    before = json.loads(Path(args.before).read_text()) if args.before else None
    write_results(args.name, payload, table(payload, before))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--system", choices=[*SYSTEMS, "kanawa_bare"])
    parser.add_argument("--workload", choices=["async", "sync"], default="async")
    parser.add_argument("--mode", choices=["run", "concurrent", "import", "probe"], default="run")
    parser.add_argument("--name", default="loop_overhead", help="results file name (bench/results/NAME.*)")
    parser.add_argument("--label", default="after", help="what this run measures (kept in the JSON)")
    parser.add_argument("--before", help="a JSON of an earlier run: adds a before/after section")
    parser.add_argument("--skip-concurrency", action="store_true", help="rounds only")
    args = parser.parse_args()
    if args.system and args.mode == "probe":
        BUILDERS[args.system](True)
        print(json.dumps({"ok": True}))
    elif args.system:
        child(args)
    else:
        parent(args)


if __name__ == "__main__":
    main()
