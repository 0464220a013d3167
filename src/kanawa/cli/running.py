"""Running one agent for the CLI: stream (or run) it, print events live, close the trace.

Shared by ``kanawa demo`` and ``kanawa run``. Provider and loop failures are turned into the one-line
message of :func:`kanawa.cli.errors.setup_hint` and exit code 2; the trace is closed (flushed) on
every path, so a failed run still leaves its trace. The run's usage and cost (priced by
:mod:`kanawa.llm.pricing`, or "cost unknown for <model>") end the output, also when a budget or a
guardrail stopped the run.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from kanawa.agents.agent import Agent
from kanawa.cli.errors import setup_hint
from kanawa.cli.render import StreamPrinter, render_cost, render_output, render_usage
from kanawa.llm.errors import LLMError
from kanawa.llm.lifecycle import close_adapter
from kanawa.llm.pricing import default_prices
from kanawa.loop.errors import AgentError
from kanawa.loop.result import RunResult
from kanawa.trace.config import TraceSettings, jsonl_path, tracer_from_env
from kanawa.trace.events import Tracer

EXIT_OK = 0
EXIT_SETUP = 2


def make_tracer(trace: bool | None) -> Tracer:
    """The CLI's tracer: ``trace=None`` follows ``KANAWA_TRACE``; ``True``/``False`` force it."""
    settings = TraceSettings.from_env()
    if trace is not None:
        settings = dataclasses.replace(settings, enabled=trace)
    return tracer_from_env(settings=settings)


async def _drive(agent: Agent[Any], question: str, printer: StreamPrinter, *, stream: bool) -> RunResult[Any]:
    if stream:
        runner = agent.stream(question)
        try:
            async for event in runner:
                printer(event)
        finally:
            await runner.aclose()
        return runner.result
    result = await agent.arun(question)
    for step in result.steps:
        printer(step)
    return result


async def execute(
    agent: Agent[Any],
    question: str,
    *,
    model_spec: str,
    console: Console,
    err: Console,
    stream: bool = True,
) -> int:
    """Run ``agent`` on ``question``, printing as it goes; returns the process exit code.

    The agent's tracer (if any) and its adapter (the commands resolve and own it) are closed here,
    and the trace file's path printed.
    """
    printer = StreamPrinter(console, show_deltas=stream)
    code = EXIT_OK
    try:
        result = await _drive(agent, question, printer, stream=stream)
    except (LLMError, AgentError) as exc:
        printer.finish()
        err.print(Text(setup_hint(model_spec, exc)), soft_wrap=True, highlight=False)
        code = EXIT_SETUP
        partial = exc.partial_result if isinstance(exc, AgentError) else None
        if partial is not None and partial.usage.requests:
            print_spending(console, partial, agent.model.model)
    else:
        printer.finish()
        if result.completed:
            console.print(render_output(console, result.output, result.text))
        else:
            console.print(
                Text(f"the run ended without an answer: {result.termination_reason}", style="yellow")
            )
        print_spending(console, result, agent.model.model)
    finally:
        await close_adapter(agent.model)
        if agent.tracer is not None:
            await agent.tracer.aclose()
    print_trace_path(console, agent.tracer)
    return code


def print_spending(console: Console, result: RunResult[Any], model: str) -> None:
    """The run's usage and its cost (or that the cost is unknown for ``model``)."""
    console.print(render_usage(result.usage))
    source = default_prices().source_of(model)
    console.print(render_cost(result.cost, model, source=None if source is None else str(source)))


def print_trace_path(console: Console, tracer: Tracer | None) -> Path | None:
    """Print where the trace went (if a file was written) and how to view it."""
    path = jsonl_path(tracer) if tracer is not None else None
    if path is None or not path.exists():
        return None
    line = Text("trace: ", style="bold")
    line.append(str(path))
    line.append(f"  (view: kanawa trace show {path})", style="dim")
    console.print(line, soft_wrap=True)
    return path


__all__ = ["EXIT_OK", "EXIT_SETUP", "execute", "make_tracer", "print_spending", "print_trace_path"]
