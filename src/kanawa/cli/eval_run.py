"""``kanawa eval run DATASET --agent module:agent``: run a dataset, print the table, save the report.

The agent is in this process (``--agent myapp:agent``, or the dataset's ``target:``) or behind
``kanawa serve`` (``--served URL --served-agent NAME``, key from ``--api-key`` or ``KANAWA_API_KEY``).
``--cassette FILE`` replays recorded provider traffic so the eval runs offline and costs nothing
(``--record once`` records it the first time). The report goes to ``--output`` (JSON, for
``kanawa eval compare``), ``--markdown`` and ``--html``.

Exit codes: 0 the eval ran (failing cases are results, not errors — ``kanawa eval compare`` is the
gate), 1 with ``--fail-under RATE`` when the pass rate is below it, 2 for a dataset, agent or option
that cannot be used (one line, no traceback).
"""

from __future__ import annotations

import os
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from kanawa._cli_help import KanawaCommand
from kanawa.cli.eval_group import eval_app
from kanawa.cli.extras import require_extra

USAGE_EXIT = 2
BELOW_THRESHOLD_EXIT = 1


class RecordOption(StrEnum):
    """How ``--cassette`` treats provider traffic."""

    NONE = "none"
    ONCE = "once"
    NEW_EPISODES = "new_episodes"
    ALL = "all"


@eval_app.command("run", cls=KanawaCommand)
def run_command(
    dataset: Annotated[Path, typer.Argument(help="The dataset file (.yaml, .yml or .json).")],
    agent: Annotated[
        str | None,
        typer.Option("--agent", "-a", help="The agent as module:attribute (default: the dataset's target)."),
    ] = None,
    served: Annotated[
        str | None, typer.Option(help="Base URL of a `kanawa serve` server to run the cases on.")
    ] = None,
    served_agent: Annotated[str | None, typer.Option(help="The served agent's name (with --served).")] = None,
    api_key: Annotated[
        str | None, typer.Option(help="API key of the server (default: KANAWA_API_KEY).", show_default=False)
    ] = None,
    concurrency: Annotated[int, typer.Option(min=1, help="Case runs at once.")] = 8,
    repeat: Annotated[int, typer.Option(min=1, help="Runs per case (for the spread and for compare).")] = 1,
    timeout: Annotated[float | None, typer.Option(min=0.001, help="Seconds per case run.")] = None,
    max_cost_usd: Annotated[
        float | None, typer.Option(min=0.0, help="Money budget of the whole eval.")
    ] = None,
    max_tokens: Annotated[int | None, typer.Option(min=1, help="Token budget of the whole eval.")] = None,
    max_requests: Annotated[
        int | None, typer.Option(min=1, help="Model-request budget of the whole eval.")
    ] = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write the JSON report here.")] = None,
    markdown: Annotated[Path | None, typer.Option(help="Write a Markdown report here.")] = None,
    html: Annotated[Path | None, typer.Option(help="Write the HTML report here.")] = None,
    trace_dir: Annotated[Path | None, typer.Option(help="Write each case run's JSONL trace here.")] = None,
    cassette: Annotated[
        Path | None, typer.Option(help="Replay (or record) provider traffic with this file.")
    ] = None,
    record: Annotated[RecordOption, typer.Option(help="Cassette mode.")] = RecordOption.NONE,
    fail_under: Annotated[
        float | None, typer.Option(min=0.0, max=1.0, help="Exit 1 when the pass rate is below this.")
    ] = None,
    cases: Annotated[bool, typer.Option("--cases/--no-cases", help="Show the per-case table.")] = True,
    progress: Annotated[bool, typer.Option("--progress/--no-progress", help="Show a progress bar.")] = True,
) -> None:
    """Run a dataset against an agent and report how every case scored."""
    require_extra("eval run", "evals")  # YAML datasets, served targets
    from rich.console import Console

    from kanawa.evals.cases import Dataset, DatasetFileError
    from kanawa.evals.render import rich_report, write_report
    from kanawa.evals.runner import Eval
    from kanawa.evals.targets import ServedTarget, TargetError, as_target

    err = Console(stderr=True)

    def fail(message: str) -> typer.Exit:
        err.print(f"kanawa eval run: {message}", markup=False, highlight=False)
        return typer.Exit(USAGE_EXIT)

    try:
        data = Dataset.from_file(dataset)
    except DatasetFileError as exc:
        raise fail(str(exc)) from None
    target: Any
    if served is not None:
        if not served_agent:
            raise fail("--served needs --served-agent NAME")
        target = ServedTarget(
            served.rstrip("/"), served_agent, api_key=api_key or os.environ.get("KANAWA_API_KEY")
        )
    else:
        reference = agent or data.target
        if not reference:
            raise fail("say which agent to run: --agent module:attribute (or target: in the dataset)")
        try:
            target = as_target(reference)
        except TargetError as exc:
            raise fail(str(exc)) from None
    try:
        evaluation = Eval(
            data,
            target,
            concurrency=concurrency,
            repeat=repeat,
            timeout=timeout,
            max_cost_usd=max_cost_usd,
            max_tokens=max_tokens,
            max_requests=max_requests,
            trace_dir=trace_dir,
            progress=progress and err.is_terminal,
            console=err,
            cassette=cassette,
            record=record.value,
        )
        report = evaluation.run()
    except (ValueError, TypeError) as exc:  # a scorer spec or option that cannot be used
        raise fail(str(exc)) from None
    except Exception as exc:
        from kanawa.testing.cassette import CassetteError

        if isinstance(exc, CassetteError):
            raise fail(str(exc)) from None
        raise
    Console().print(rich_report(report, cases=cases))
    for path in (output, markdown, html):
        if path is not None:
            kind = "json" if path is output else "markdown" if path is markdown else "html"
            write_report(report, str(path), fmt=kind)
            err.print(f"wrote {path}", markup=False, highlight=False)
    if fail_under is not None and report.pass_rate < fail_under:
        err.print(
            f"pass rate {report.pass_rate:.1%} is below {fail_under:.1%}", markup=False, highlight=False
        )
        raise typer.Exit(BELOW_THRESHOLD_EXIT)


__all__ = ["RecordOption", "run_command"]
