"""The ``kanawa`` command (typer + rich): ``demo``, ``run``, ``serve``, ``mcp``, ``worker``,
``trace show|view``, ``ace …`` and ``--version``.

typer and rich are imported here and in the other ``kanawa.cli`` modules only; ``import kanawa`` never
loads them. Each command is a thin sync wrapper that runs one coroutine with :func:`asyncio.run` and
exits with its code: 0 success, 1 a bad trace file, 2 a model or provider that cannot be used or an
extra the command needs that is not installed (:mod:`kanawa.cli.extras`) — one line on stderr, never a
traceback.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.text import Text

from kanawa import __version__
from kanawa._cli_help import KanawaCommand, KanawaGroup
from kanawa.cli.ace_cmd import ace_app
from kanawa.cli.eval_compare import compare_command as _eval_compare  # noqa: F401  (registers `kanawa eval compare`)
from kanawa.cli.eval_group import eval_app
from kanawa.cli.eval_run import run_command as _eval_run  # noqa: F401  (registers `kanawa eval run`)
from kanawa.cli.extras import require_extra
from kanawa.cli.smartao_cmd import smartao_app

app = typer.Typer(
    cls=KanawaGroup,
    name="kanawa",
    help="kanawa — LLM agents with any provider, a safe tool loop, honest streaming and tracing.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
trace_app = typer.Typer(cls=KanawaGroup, help="Inspect JSONL traces.", no_args_is_help=True)
app.add_typer(trace_app, name="trace")
app.add_typer(ace_app, name="ace")
app.add_typer(smartao_app, name="smartao")
app.add_typer(eval_app, name="eval")

DEFAULT_INSTRUCTIONS = "You are a helpful assistant. Use the tools when they help; answer concisely."


def _consoles() -> tuple[Console, Console]:
    return Console(highlight=False), Console(stderr=True, highlight=False)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"kanawa {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version and exit.")
    ] = False,
) -> None:
    """kanawa — LLM agents with any provider, a safe tool loop, honest streaming and tracing."""


@app.command(cls=KanawaCommand)
def demo(
    model: Annotated[
        str,
        typer.Option(
            "--model",
            "-m",
            help="'test' (default: the built-in TestLLM, which calls each tool with its schema's example "
            "arguments), 'scripted' (a narrated script that also shows a sandbox refusal) or a model string "
            "such as openai:gpt-5.",
        ),
    ] = "test",
    trace: Annotated[bool, typer.Option("--trace/--no-trace", help="Write a JSONL trace.")] = True,
) -> None:
    """Run a tool-using agent offline: parallel real tools, a live event stream, a structured answer."""
    from kanawa.cli.demo import run_demo

    console, err = _consoles()
    raise typer.Exit(_run(run_demo(console, err, model=model, trace=trace), err))


@app.command(cls=KanawaCommand)
def run(
    question: Annotated[str, typer.Argument(help="What to ask the agent.")],
    model: Annotated[
        str,
        typer.Option(
            "--model", "-m", envvar="KANAWA_MODEL", help="Model string: openai:gpt-5, anthropic:…, test."
        ),
    ],
    instructions: Annotated[
        str, typer.Option("--instructions", "-i", help="The agent's system instructions.")
    ] = DEFAULT_INSTRUCTIONS,
    stream: Annotated[
        bool, typer.Option("--stream/--no-stream", help="Stream the answer as it is written.")
    ] = True,
    tools: Annotated[
        bool, typer.Option("--tools/--no-tools", help="Offer the built-in calculator and current_time tools.")
    ] = True,
    max_steps: Annotated[
        int, typer.Option("--max-steps", min=1, help="Most model requests in the run.")
    ] = 10,
    trace: Annotated[
        bool | None,
        typer.Option("--trace/--no-trace", help="Write a JSONL trace (default: on unless KANAWA_TRACE=0)."),
    ] = None,
    max_tokens: Annotated[
        int | None, typer.Option("--max-tokens", min=1, help="Stop the run past this many tokens.")
    ] = None,
    max_cost: Annotated[
        float | None, typer.Option("--max-cost", min=0.0, help="Stop the run past this many US dollars.")
    ] = None,
) -> None:
    """Ask one question with a model, streaming the answer and the tool calls."""
    from kanawa.cli.run_cmd import run_question

    console, err = _consoles()
    coro = run_question(
        console,
        err,
        question=question,
        model=model,
        instructions=instructions,
        stream=stream,
        tools=tools,
        max_steps=max_steps,
        trace=trace,
        max_tokens=max_tokens,
        max_cost=max_cost,
    )
    raise typer.Exit(_run(coro, err))


@app.command(cls=KanawaCommand)
def serve(
    agents: Annotated[
        str | None,
        typer.Argument(help="The agents to serve, as module:attr (default: the demo agents calc and echo)."),
    ] = None,
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8000,
    workers: Annotated[
        int, typer.Option(min=1, help="Worker processes (above 1 needs KANAWA_REDIS_URL).")
    ] = 1,
    log_level: Annotated[str, typer.Option(help="uvicorn's log level.")] = "info",
) -> None:
    """Serve agents over HTTP: SSE chunks with seq numbers, resume, API keys (see docs/server.md)."""
    require_extra("serve", "server")
    from kanawa.cli.serve_cmd import serve as run_server

    console, err = _consoles()
    raise typer.Exit(
        run_server(console, err, agents=agents, host=host, port=port, workers=workers, log_level=log_level)
    )


@app.command(cls=KanawaCommand)
def mcp(
    agents: Annotated[
        str | None,
        typer.Argument(help="The agents to serve, as module:attr (default: the demo agents calc and echo)."),
    ] = None,
) -> None:
    """Serve agents as MCP tools over stdio, for desktop MCP hosts (see docs/mcp-server.md)."""
    require_extra("mcp", "mcp")
    from kanawa.cli.mcp_cmd import serve_mcp

    _, err = _consoles()
    raise typer.Exit(_run(serve_mcp(err, agents=agents), err))


@app.command(cls=KanawaCommand)
def worker(
    concurrency: Annotated[int, typer.Option(min=1, help="Runs executed at once by this worker.")] = 1,
    log_level: Annotated[str, typer.Option(help="Celery's log level.")] = "WARNING",
) -> None:
    """Execute runs sent by `kanawa serve` through a Celery broker (KANAWA_CELERY_BROKER, KANAWA_REDIS_URL;
    agents from KANAWA_SERVE_AGENTS, and the extensions of KANAWA_SERVE_EXTENSIONS as the app mounts
    them: their agents, their events' chunks, their lifespans entered once per worker process)."""
    require_extra("worker", "celery")
    from kanawa.cli.serve_cmd import worker as run_worker

    _, err = _consoles()
    raise typer.Exit(run_worker(err, concurrency=concurrency, log_level=log_level))


@app.command(cls=KanawaCommand)
def models(
    names: Annotated[
        list[str] | None,
        typer.Argument(help="Model strings to show (default: every catalogue model), e.g. openai:gpt-5.2."),
    ] = None,
) -> None:
    """List models with their window, prices per million tokens and where the prices come from."""
    from kanawa.cli.models_cmd import show_models

    console, _ = _consoles()
    raise typer.Exit(show_models(console, names or ()))


@trace_app.command("view", cls=KanawaCommand)
def trace_view(
    file: Annotated[Path, typer.Argument(help="A .jsonl trace file.")],
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8765,
) -> None:
    """Open a JSONL trace in the timeline page (served on loopback until Ctrl-C)."""
    require_extra("trace view", "server")
    from kanawa.cli.serve_cmd import trace_view as view

    console, err = _consoles()
    raise typer.Exit(view(console, err, file, host=host, port=port))


@trace_app.command("show", cls=KanawaCommand)
def trace_show(
    file: Annotated[
        Path | None,
        typer.Argument(help="A .jsonl trace, or a directory (its newest trace). Default: the newest trace."),
    ] = None,
) -> None:
    """Show a trace as a timeline: steps, tools, model calls, durations, tokens and errors."""
    from kanawa.cli.trace_cmd import show_trace

    console, err = _consoles()
    raise typer.Exit(show_trace(console, err, file))


def _run(coro: object, err: Console) -> int:
    """Run a command coroutine; Ctrl-C exits with 130 and one line."""
    try:
        code: int = asyncio.run(coro)  # type: ignore[arg-type]
    except KeyboardInterrupt:
        err.print(Text("kanawa: interrupted", style="yellow"))
        return 130
    return code


def main() -> None:
    """Console-script entry point (``kanawa = "kanawa.cli:main"``)."""
    app()


__all__ = ["app", "main"]
