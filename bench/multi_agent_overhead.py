"""Multi-agent overhead: what guardrails and a handoff add to a run, next to each system's plain loop.

Every scenario is built on the loop_overhead conversation (turn 1 asks for one tool call, turn 2 for two
parallel tool calls, turn 3 answers with text: 3 model requests and 3 tool executions), with a scripted
model (no network, no tokens), so what is measured is each framework's own cost:

  plain     the conversation as it is;
  guarded   the same with one guardrail on the input and the output (a regex and a custom function)
            and one on every tool call's arguments and every tool result (a regex and a custom
            function): 8 checks per run, all passing;
  handoff   a triage agent hands off to a specialist that runs the plain conversation; the triage's
            model then answers with the specialist's result;
  delegation  the same round trip through an ordinary tool that awaits the specialist's run (for
            kanawa, what the handoff machinery itself costs: events, depth, the handed-over history).

Peers, where they have the feature:
  - OpenAI Agents SDK: input/output guardrails (``run_in_parallel=False``, so the input is checked
    before the model runs, as in kanawa) and tool input/output guardrails on both tools. Its handoff is
    one-way (the specialist's answer ends the run: 4 model requests, not 5), so the round trip is also
    measured with ``specialist.as_tool()`` ("delegation").
  - pydantic-ai has no handoffs and no guardrails: "handoff" is agent delegation (a tool that awaits
    the specialist's ``run``); "guarded" is a ``Hooks`` capability (``before_run`` on the prompt,
    ``before_tool_execute`` on arguments, ``after_tool_execute`` on results) plus an output validator.

Each (system, scenario) runs in its own fresh interpreter (import cost and peak RSS are its own): a
first run checked for the final text and the number of model requests and checks, warm-up, sequential
runs (median and p90 per run), 100 concurrent runs (wall time per run), peak RSS. The machine is shared,
so every (system, scenario) runs in 5 interleaved rounds and the figures are those of its least-disturbed
round (lowest median; see ``combine``), next to the median over the rounds.

Usage: ``python bench/multi_agent_overhead.py`` (writes bench/results/multi_agent_overhead.{json,md}).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import re
import resource
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, run_child, summary_ms, write_results

SYSTEMS = ("kanawa", "pydantic_ai", "openai_agents")
SCENARIOS = ("plain", "guarded", "handoff", "delegation")
RUNS_OF = {
    "kanawa": ("plain", "guarded", "handoff", "delegation"),
    "pydantic_ai": ("plain", "guarded", "handoff"),
    "openai_agents": ("plain", "guarded", "handoff", "delegation"),
}
HOW = {
    ("kanawa", "guarded"): "2 `Guardrail`s (input+output; tool_call+tool_result)",
    ("kanawa", "handoff"): "`handoffs=[specialist]` (`transfer_to_specialist`), back to the triage",
    ("kanawa", "delegation"): "a tool awaiting `specialist.run` (no handoff events, depth or history)",
    ("pydantic_ai", "guarded"): "`Hooks` (before_run, before/after_tool_execute) + output validator",
    ("pydantic_ai", "handoff"): "no handoffs: delegation (a tool awaiting `specialist.run`)",
    ("openai_agents", "guarded"): "input + output guardrails (sequential) + tool input/output guardrails",
    ("openai_agents", "handoff"): "native handoff, one-way: the specialist's answer ends the run",
    ("openai_agents", "delegation"): "`specialist.as_tool()`, back to the triage",
}
WARMUP, RUNS, MAX_RUNS, TIMED_SECONDS, CONCURRENT, ROUNDS = 50, 500, 20_000, 2.0, 100, 5
PROMPT = "Compute 1+2, then 3+4 and 5*6."
FINAL_TEXT = "1+2=3, 3+4=7, 5*6=30."
ARITHMETIC = ("add", "mul")
# What the guardrails check (the same for every system): no card number (regex) and a size limit
# (custom function) on the input, the output, every tool call's arguments and every tool result.
CARD = re.compile(r"\b(?:\d[ -]?){13,16}\b")
LIMIT = 10_000


class Counters:
    """Per-run counts that prove a scenario ran its whole shape (requests reached the scripted models,
    guardrail checks ran); read after the first run, then reset."""

    def __init__(self) -> None:
        self.requests = 0
        self.checks = 0

    def within_limit(self, data: object) -> bool:
        self.checks += 1
        return len(str(data)) < LIMIT


def script_turn(arithmetic_calls_seen: int) -> int:
    """The specialist's position in the conversation from the add/mul calls already in it: 0 → one
    call, 1 → two parallel calls, 3 → the answer (robust to a handoff's own call in the history)."""
    return {0: 0, 1: 1}.get(arithmetic_calls_seen, 2)


RunOnce = Callable[[], Awaitable[str]]


# ------------------------------------------------------------------------------------------ kanawa
def build_kanawa(scenario: str, counters: Counters) -> RunOnce:
    from kanawa import Agent, tool
    from kanawa.agents.guardrails import Guardrail
    from kanawa.agents.handoffs import transfer_tool_name
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

    def specialist_respond(request: ModelRequest) -> AssistantMessage | str:
        counters.requests += 1
        seen = sum(
            1
            for m in request.messages
            if isinstance(m, AssistantMessage)
            for call in m.tool_calls
            if call.name in ARITHMETIC
        )
        turn = script_turn(seen)
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

    guardrails = []
    if scenario == "guarded":
        guardrails = [
            Guardrail(regex_blocks={"card number": CARD}, custom_funcs=[counters.within_limit], name="io"),
            Guardrail(
                regex_blocks={"card number": CARD},
                custom_funcs=[counters.within_limit],
                stages=("tool_call", "tool_result"),
                name="tools",
            ),
        ]
    models = [FunctionLLM(specialist_respond)]
    specialist = Agent(
        "specialist",
        instructions="Do the arithmetic.",
        tools=[add, mul],
        model=models[0],
        guardrails=guardrails,
    )
    agent = specialist
    if scenario in ("handoff", "delegation"):
        handing_off = scenario == "handoff"
        call = (
            ToolCall("h1", transfer_tool_name("specialist"), "{}")
            if handing_off
            else ToolCall("h1", "ask_specialist", json.dumps({"request": PROMPT}))
        )

        def triage_respond(request: ModelRequest) -> AssistantMessage | str:
            counters.requests += 1
            if request.tool_results:
                return request.tool_results[-1].text
            return AssistantMessage(tool_calls=(call,))

        @tool
        async def ask_specialist(request: str) -> str:
            """Hand the request to the arithmetic specialist."""
            return str((await specialist.arun(request)).output)

        models.append(FunctionLLM(triage_respond))
        agent = Agent(
            "triage",
            instructions="Route the request.",
            model=models[1],
            tools=[] if handing_off else [ask_specialist],
            handoffs=[specialist] if handing_off else [],
        )

    async def run_once() -> str:
        result = await agent.arun(PROMPT)
        for model in models:
            if len(model.requests) > 300:
                model.requests.clear()  # the test model records requests; keep the bench's memory flat
        return str(result.output)

    return run_once


# ------------------------------------------------------------------------------------- pydantic-ai
def build_pydantic_ai(scenario: str, counters: Counters) -> RunOnce:
    from pydantic_ai import Agent, ModelRetry, RunContext
    from pydantic_ai.capabilities import Hooks
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    def passes(data: object) -> bool:
        return not CARD.search(str(data)) and counters.within_limit(data)

    def specialist_respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        counters.requests += 1
        seen = sum(
            1
            for m in messages
            if isinstance(m, ModelResponse)
            for part in m.parts
            if isinstance(part, ToolCallPart) and part.tool_name in ARITHMETIC
        )
        turn = script_turn(seen)
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

    capabilities = []
    if scenario == "guarded":
        hooks: Hooks[None] = Hooks()

        @hooks.on.before_run
        async def check_input(ctx: RunContext[None]) -> None:
            if not passes(ctx.prompt):
                raise ValueError("input blocked")

        @hooks.on.before_tool_execute
        async def check_call(ctx: RunContext[None], *, call: Any, tool_def: Any, args: Any) -> Any:
            if not passes(call.args_as_json_str()):
                raise ValueError("tool call blocked")
            return args

        @hooks.on.after_tool_execute
        async def check_result(
            ctx: RunContext[None], *, call: Any, tool_def: Any, args: Any, result: Any
        ) -> Any:
            if not passes(result):
                raise ValueError("tool result blocked")
            return result

        capabilities.append(hooks)

    specialist = Agent(
        FunctionModel(specialist_respond), instructions="Do the arithmetic.", capabilities=capabilities
    )

    @specialist.tool_plain
    async def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @specialist.tool_plain
    async def mul(a: int, b: int) -> int:
        """Multiply two integers."""
        return a * b

    if scenario == "guarded":

        @specialist.output_validator
        async def check_output(output: str) -> str:
            if not passes(output):
                raise ModelRetry("output blocked")
            return output

    agent = specialist
    if scenario == "handoff":

        def triage_respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            counters.requests += 1
            returns = [
                part
                for m in messages
                if not isinstance(m, ModelResponse)
                for part in m.parts
                if isinstance(part, ToolReturnPart)
            ]
            if returns:
                return ModelResponse(parts=[TextPart(str(returns[-1].content))])
            return ModelResponse(
                parts=[ToolCallPart("ask_specialist", {"request": PROMPT}, tool_call_id="h1")]
            )

        triage = Agent(FunctionModel(triage_respond), instructions="Route the request.")

        async def ask_specialist(ctx: RunContext[None], request: str) -> str:
            """Hand the request to the arithmetic specialist."""
            result = await specialist.run(request, usage=ctx.usage)
            return result.output

        # pydantic-ai reads the annotations to see that the tool takes the context; this module's
        # postponed annotations name a type imported locally, so give it the objects themselves.
        ask_specialist.__annotations__ = {"ctx": RunContext[None], "request": str, "return": str}
        triage.tool(ask_specialist)
        agent = triage

    async def run_once() -> str:
        result = await agent.run(PROMPT)
        return str(result.output)

    return run_once


# ------------------------------------------------------------------------------- OpenAI Agents SDK
def build_openai_agents(scenario: str, counters: Counters) -> RunOnce:
    from agents.models.interface import Model
    from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

    from agents import (
        Agent,
        GuardrailFunctionOutput,
        ModelResponse,
        Runner,
        ToolGuardrailFunctionOutput,
        Usage,
        function_tool,
        input_guardrail,
        output_guardrail,
        set_tracing_disabled,
        tool_input_guardrail,
        tool_output_guardrail,
    )

    set_tracing_disabled(True)

    def passes(data: object) -> bool:
        return not CARD.search(str(data)) and counters.within_limit(data)

    def call(call_id: str, name: str, args: str) -> ResponseFunctionToolCall:
        return ResponseFunctionToolCall(
            type="function_call", call_id=call_id, name=name, arguments=args, id=call_id
        )

    def message(text: str) -> ResponseOutputMessage:
        content = ResponseOutputText(type="output_text", text=text, annotations=[])
        return ResponseOutputMessage(
            id="m1", type="message", role="assistant", status="completed", content=[content]
        )

    def items_of(input: Any) -> list[dict[str, Any]]:
        return [i for i in input if isinstance(i, dict)] if isinstance(input, list) else []

    class ScriptedModel(Model):
        def __init__(self, respond: Callable[[list[dict[str, Any]], Any, Any], list[Any]]) -> None:
            self.respond = respond

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
            counters.requests += 1
            output = self.respond(items_of(input), tools, handoffs)
            return ModelResponse(output=output, usage=Usage(), response_id=None)

        def stream_response(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            raise RuntimeError("the benchmark does not stream")

    def specialist_respond(items: list[dict[str, Any]], tools: Any, handoffs: Any) -> list[Any]:
        seen = sum(1 for i in items if i.get("type") == "function_call" and i.get("name") in ARITHMETIC)
        turn = script_turn(seen)
        if turn == 0:
            return [call("c1", "add", '{"a": 1, "b": 2}')]
        if turn == 1:
            return [call("c2", "add", '{"a": 3, "b": 4}'), call("c3", "mul", '{"a": 5, "b": 6}')]
        return [message(FINAL_TEXT)]

    guarded = scenario == "guarded"

    @tool_input_guardrail
    def check_call(data: Any) -> ToolGuardrailFunctionOutput:
        ok = passes(data.context.tool_arguments)
        return ToolGuardrailFunctionOutput.allow() if ok else ToolGuardrailFunctionOutput.raise_exception()

    @tool_output_guardrail
    def check_result(data: Any) -> ToolGuardrailFunctionOutput:
        ok = passes(data.output)
        return ToolGuardrailFunctionOutput.allow() if ok else ToolGuardrailFunctionOutput.raise_exception()

    tool_guards: dict[str, Any] = (
        {"tool_input_guardrails": [check_call], "tool_output_guardrails": [check_result]} if guarded else {}
    )

    @function_tool(**tool_guards)
    async def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @function_tool(**tool_guards)
    async def mul(a: int, b: int) -> int:
        """Multiply two integers."""
        return a * b

    @input_guardrail(run_in_parallel=False)
    async def check_input(ctx: Any, agent: Any, input: Any) -> GuardrailFunctionOutput:
        return GuardrailFunctionOutput(output_info=None, tripwire_triggered=not passes(input))

    @output_guardrail
    async def check_output(ctx: Any, agent: Any, output: Any) -> GuardrailFunctionOutput:
        return GuardrailFunctionOutput(output_info=None, tripwire_triggered=not passes(output))

    specialist: Agent[Any] = Agent(
        name="specialist",
        instructions="Do the arithmetic.",
        tools=[add, mul],
        model=ScriptedModel(specialist_respond),
        input_guardrails=[check_input] if guarded else [],
        output_guardrails=[check_output] if guarded else [],
    )
    agent = specialist
    if scenario == "handoff":

        def triage_handoff(items: list[dict[str, Any]], tools: Any, handoffs: Any) -> list[Any]:
            return [call("h1", handoffs[0].tool_name, "{}")]

        agent = Agent(
            name="triage",
            instructions="Route the request.",
            handoffs=[specialist],
            model=ScriptedModel(triage_handoff),
        )
    elif scenario == "delegation":

        def triage_delegate(items: list[dict[str, Any]], tools: Any, handoffs: Any) -> list[Any]:
            outputs = [i for i in items if i.get("type") == "function_call_output"]
            if outputs:
                return [message(str(outputs[-1]["output"]))]
            return [call("h1", "ask_specialist", json.dumps({"input": PROMPT}))]

        agent = Agent(
            name="triage",
            instructions="Route the request.",
            tools=[
                specialist.as_tool(
                    tool_name="ask_specialist", tool_description="Hand the request to the specialist."
                )
            ],
            model=ScriptedModel(triage_delegate),
        )

    async def run_once() -> str:
        result = await Runner.run(agent, PROMPT)
        return str(result.final_output)

    return run_once


BUILDERS = {"kanawa": build_kanawa, "pydantic_ai": build_pydantic_ai, "openai_agents": build_openai_agents}


# ------------------------------------------------------------------------------------- measurement
async def measure(system: str, scenario: str) -> dict[str, object]:
    counters = Counters()
    run_once = BUILDERS[system](scenario, counters)
    first = await run_once()
    if first != FINAL_TEXT:
        raise RuntimeError(f"{system}/{scenario} produced {first!r}, expected {FINAL_TEXT!r}")
    shape = {"model_requests_per_run": counters.requests, "checks_per_run": counters.checks}
    warm_start = time.perf_counter()
    for _ in range(WARMUP):
        await run_once()
    per_run = (time.perf_counter() - warm_start) / WARMUP
    # Time every system for about the same wall time (>= RUNS runs), as loop_overhead does.
    runs = max(RUNS, min(MAX_RUNS, int(TIMED_SECONDS / per_run)))
    gc.collect()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        await run_once()
        times.append(time.perf_counter() - start)
    out: dict[str, object] = {**summary_ms(times), **shape}
    walls: list[float] = []
    level_start = time.perf_counter()
    while len(walls) < 3 or (time.perf_counter() - level_start < TIMED_SECONDS and len(walls) < 50):
        start = time.perf_counter()
        results = await asyncio.gather(*(run_once() for _ in range(CONCURRENT)))
        walls.append(time.perf_counter() - start)
        assert all(r == FINAL_TEXT for r in results)
    out[f"concurrent_{CONCURRENT}_per_run_ms"] = round(statistics.median(walls) * 1000 / CONCURRENT, 4)
    out["peak_rss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return out


def combine(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    """One (system, scenario) over several rounds. Other work on a shared machine only ever slows a
    round down (by up to 2-3x for a whole round), so the figures are those of the least-disturbed
    round — the one with the lowest median; its p90 with it — as ``timeit`` takes the best of its
    repeats. The median over the rounds, every round's median and p90, the largest peak RSS and the
    runs' shape are kept too."""
    shapes = {(r["model_requests_per_run"], r["checks_per_run"]) for r in rounds}
    if len(shapes) != 1:
        raise RuntimeError(f"the conversation's shape changed between rounds: {shapes}")
    best = min(rounds, key=lambda r: r["median_ms"])
    out: dict[str, Any] = {key: rounds[0][key] for key in ("model_requests_per_run", "checks_per_run")}
    out.update({key: best[key] for key in ("median_ms", "p90_ms", "p99_ms")})
    concurrent = f"concurrent_{CONCURRENT}_per_run_ms"
    out[concurrent] = min(r[concurrent] for r in rounds)
    out["median_of_rounds_ms"] = round(statistics.median(r["median_ms"] for r in rounds), 4)
    out["round_medians_ms"] = [r["median_ms"] for r in rounds]
    out["round_p90s_ms"] = [r["p90_ms"] for r in rounds]
    out["n"] = sum(r["n"] for r in rounds)
    out["peak_rss_mib"] = max(r["peak_rss_mib"] for r in rounds)
    return out


def parent() -> None:
    script = Path(__file__).resolve()
    pairs = [(system, scenario) for system in SYSTEMS for scenario in RUNS_OF[system]]
    rounds: dict[tuple[str, str], list[dict[str, Any]]] = {pair: [] for pair in pairs}
    # Rounds interleave every (system, scenario), so a slow spell on the machine hits all of them
    # rather than one scenario and its difference from plain.
    for index in range(ROUNDS):
        for system, scenario in pairs:
            print(f"... round {index + 1}/{ROUNDS}: {system} {scenario}", file=sys.stderr)
            rounds[system, scenario].append(run_child(script, "--system", system, "--scenario", scenario))
    results: dict[str, dict[str, dict[str, Any]]] = {system: {} for system in SYSTEMS}
    for (system, scenario), data in rounds.items():
        results[system][scenario] = combine(data)
    for system in SYSTEMS:
        plain = results[system]["plain"]
        for scenario, data in results[system].items():
            if scenario != "plain":
                data["added_median_ms"] = round(data["median_ms"] - plain["median_ms"], 4)
                data["vs_plain"] = round(data["median_ms"] / plain["median_ms"], 3)

    def added(system: str, scenario: str) -> str:
        data = results[system][scenario]
        if scenario == "plain":
            return "—"
        return f"{data['added_median_ms']:+} (×{data['vs_plain']})"

    rows = [
        "| system | scenario | how | model requests / checks per run | median ms/run | p90 ms/run "
        f"| median over rounds | added over own plain, ms (× plain) | {CONCURRENT} concurrent, ms/run "
        "| peak RSS MiB |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for system in SYSTEMS:
        for scenario in RUNS_OF[system]:
            r = results[system][scenario]
            how = HOW.get((system, scenario), "the loop_overhead conversation")
            rows.append(
                f"| {system} | {scenario} | {how} | {r['model_requests_per_run']} / {r['checks_per_run']} "
                f"| {r['median_ms']} | {r['p90_ms']} | {r['median_of_rounds_ms']} | {added(system, scenario)} "
                f"| {r[f'concurrent_{CONCURRENT}_per_run_ms']} | {r['peak_rss_mib']} |"
            )
    k = results["kanawa"]
    peers_added = {
        scenario: {
            system: results[system][scenario]["added_median_ms"]
            for system in SYSTEMS
            if system != "kanawa" and scenario in results[system]
        }
        for scenario in ("guarded", "handoff", "delegation")
    }
    payload: dict[str, Any] = {
        **results,
        "peers_added_median_ms": peers_added,
        "machine": machine(),
        "min_runs": RUNS,
        "rounds": ROUNDS,
        "warmup": WARMUP,
    }
    env = machine()
    handoff_itself = k["handoff"]["median_ms"] - k["delegation"]["median_ms"]
    spread = {
        system: max(
            round(max(r["round_medians_ms"]) / min(r["round_medians_ms"]), 2)
            for r in results[system].values()
        )
        for system in SYSTEMS
    }
    payload["round_spread"] = spread
    table = "\n".join(
        [
            "# Multi-agent overhead (guardrails and a handoff next to the plain loop, scripted model)",
            "",
            *rows,
            "",
            f"- kanawa: 8 guardrail checks add **{k['guarded']['added_median_ms']} ms** per run; a handoff "
            f"(2 more model requests, one more agent run) adds **{k['handoff']['added_median_ms']} ms**, of "
            f"which {handoff_itself:.3f} ms is the handoff itself (over a tool that awaits the specialist).",
            "- \"added\" is the scenario's median minus the same system's plain median (each in its own fresh "
            "process). The machine is shared and other work only slows a round down, so median, p90 and "
            "added come from each row's least-disturbed round (lowest median), as `timeit` takes the best "
            "repeat; the median over the rounds is shown next to it. Spread of the round medians (largest "
            "/ smallest, worst row): "
            + ", ".join(f"{system} {ratio}" for system, ratio in spread.items())
            + ".",
            "- The OpenAI Agents SDK's handoff is one-way (4 model requests); its `as_tool()` delegation is "
            "the round trip the kanawa handoff makes (5). pydantic-ai has neither handoffs nor guardrails: "
            "its rows use delegation and hooks + an output validator, the closest it offers. All guardrail "
            "checks pass (nothing is blocked); what is measured is the cost of checking.",
            f"- Python {env['python']} on {env['machine']}; {ROUNDS} interleaved rounds, each with at least "
            f"{RUNS} timed runs (about {TIMED_SECONDS:.0f} s of runs) after {WARMUP} warm-up runs, each "
            "system and scenario in its own process; the concurrency figure is the best round's, peak RSS "
            "the largest.",
            "",
        ]
    )
    write_results("multi_agent_overhead", payload, table)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--system", choices=SYSTEMS)
    parser.add_argument("--scenario", choices=SCENARIOS, default="plain")
    args = parser.parse_args()
    if args.system:
        if args.scenario not in RUNS_OF[args.system]:
            parser.error(f"{args.system} has no {args.scenario!r} scenario")
        print(json.dumps(asyncio.run(measure(args.system, args.scenario))))
    else:
        parent()


if __name__ == "__main__":
    main()
