"""``kanawa eval compare BASELINE.json CANDIDATE.json``: is the candidate better, worse or the same?

Loads two saved eval reports, runs :func:`kanawa.evals.compare.compare` and prints the verdicts as a
rich table (default), Markdown or JSON, optionally writing them to a file as well. The exit code is
what CI reads: **1 only on a real regression** (some scorer's verdict is *worse*), 0 otherwise, and 2
when a report cannot be read — so noise never fails a build.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from kanawa._cli_help import KanawaCommand
from kanawa.cli.eval_group import eval_app

__all__ = ["OutputFormat", "compare_command"]

#: The exit code of a real regression; bad input exits 2 like any usage error.
REGRESSION_EXIT = 1


class OutputFormat(StrEnum):
    """How the comparison is printed."""

    TABLE = "table"
    MARKDOWN = "markdown"
    JSON = "json"


@eval_app.command("compare", cls=KanawaCommand)
def compare_command(
    baseline: Annotated[Path, typer.Argument(help="The baseline eval report (JSON from `kanawa eval run`).")],
    candidate: Annotated[Path, typer.Argument(help="The candidate's eval report (JSON).")],
    output_format: Annotated[
        OutputFormat, typer.Option("--format", "-f", help="table (rich), markdown or json.")
    ] = OutputFormat.TABLE,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Also write the Markdown or JSON to this file.")
    ] = None,
    alpha: Annotated[
        float, typer.Option(help="Two-sided level of the paired test; the interval is at 1 - alpha.")
    ] = 0.05,
    min_effect: Annotated[
        float, typer.Option(help="Smallest mean change (score units) that counts as a real change.")
    ] = 0.0,
    lower_is_better: Annotated[
        list[str] | None,
        typer.Option("--lower-is-better", help="A scorer where lower is better (repeat the option)."),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the Monte Carlo fallback.")] = 0,
) -> None:
    """Compare two eval runs per scorer; exit 1 only on a real regression."""
    from rich.console import Console

    from kanawa.evals.compare import CompareSettings, compare
    from kanawa.evals.report import EvalReport, ReportFileError

    err = Console(stderr=True)
    try:
        settings = CompareSettings(
            alpha=alpha, min_effect=min_effect, seed=seed, lower_is_better=frozenset(lower_is_better or ())
        )
        result = compare(EvalReport.load(baseline), EvalReport.load(candidate), settings=settings)
    except (ReportFileError, ValueError) as exc:
        err.print(f"kanawa eval compare: {exc}", markup=False, highlight=False)
        raise typer.Exit(2) from None
    if output_format is OutputFormat.JSON:
        text = result.to_json()
        typer.echo(text)
    elif output_format is OutputFormat.MARKDOWN:
        text = result.markdown()
        typer.echo(text, nl=False)
    else:
        text = result.markdown()
        Console().print(result.rich_table())
        verdict = "[bold red]regression[/]" if result.regressed else "[green]no regression[/]"
        Console().print(f"Overall: {verdict}")
    if output is not None:
        output.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
    if result.regressed:
        raise typer.Exit(REGRESSION_EXIT)
