"""``kanawa smartao …``: coach an essay offline and run the nightly reflexion by hand.

- ``kanawa smartao coach ESSAY.txt [--policy POLICY.txt] [--json]`` — one coaching run with the demo
  model (or ``--model``), printing the rubric, the issues and the patch (``--json``: the whole
  :class:`~kanawa.apps.smartao.coordinator.CoachingReport`).
- ``kanawa smartao reflexion --db evaluations.sqlite3 [--day YYYY-MM-DD]`` —
  :func:`~kanawa.apps.smartao.reflexion.apply_reflexion`, the function a Celery beat job calls.

Only typer is imported here; the SmartAO modules load when a command runs.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Annotated

import typer

smartao_app = typer.Typer(help="SmartAO: essay coaching for Japanese AO admissions.", no_args_is_help=True)

DEFAULT_DB = Path(".kanawa/smartao/evaluations.sqlite3")


@smartao_app.command("reflexion")
def reflexion(
    db: Annotated[Path, typer.Option("--db", help="The evaluation store (SQLite).")] = DEFAULT_DB,
    day: Annotated[str | None, typer.Option("--day", help="YYYY-MM-DD (default: today, UTC).")] = None,
) -> None:
    """Learn lessons from one day's evaluations (the nightly job) and print them."""
    from kanawa.apps.smartao.reflexion import apply_reflexion

    if not db.exists():
        typer.echo(f"kanawa: no evaluation store at {db}", err=True)
        raise typer.Exit(1)
    try:
        lessons = apply_reflexion(db, day=day)
    except ValueError:
        typer.echo(f"kanawa: --day must be YYYY-MM-DD, not {day!r}", err=True)
        raise typer.Exit(2) from None
    if not lessons:
        typer.echo("no lessons: no evaluations that day, or no axis scored low")
    for axis, lesson in lessons.items():
        typer.echo(f"{axis}: {lesson}")


@smartao_app.command("coach")
def coach(
    essay: Annotated[Path, typer.Argument(help="The essay, a UTF-8 text file.")],
    policy: Annotated[Path | None, typer.Option("--policy", help="The admission policy text file.")] = None,
    model: Annotated[str | None, typer.Option("--model", "-m", help="A model string; default: demo.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the whole report as JSON.")] = False,
    store: Annotated[Path, typer.Option("--db", help="The evaluation store (SQLite).")] = DEFAULT_DB,
) -> None:
    """Coach one essay against the shipped sample corpora and print the result."""
    try:
        text = essay.read_text(encoding="utf-8")
        policy_text = policy.read_text(encoding="utf-8") if policy else ""
    except (OSError, UnicodeDecodeError) as exc:
        typer.echo(f"kanawa: cannot read the input: {exc.__class__.__name__}", err=True)
        raise typer.Exit(1) from None
    if not text.strip():
        typer.echo("kanawa: the essay is empty", err=True)
        raise typer.Exit(1)
    raise typer.Exit(asyncio.run(_coach(text, policy_text, model, as_json, store)))


async def _coach(text: str, policy: str, model: str | None, as_json: bool, store: Path) -> int:
    from kanawa.apps.smartao.coordinator import Coordinator
    from kanawa.apps.smartao.reflexion import EvalStore
    from kanawa.apps.smartao.session import EssayRequest, sample_resources
    from kanawa.apps.smartao.textlint import TextlintError, TextlintSidecar, textlint_available
    from kanawa.loop.errors import GuardrailViolation

    sidecar = None
    if textlint_available():
        try:
            sidecar = TextlintSidecar()
        except TextlintError:
            sidecar = None
    try:
        with tempfile.TemporaryDirectory() as scratch:
            resources = await sample_resources(scratch, textlint=sidecar)
            resources.eval_store = EvalStore(store)
            try:
                report = await Coordinator(resources, model=model).run(
                    EssayRequest(essay=text, policy=policy)
                )
            except GuardrailViolation as exc:
                typer.echo(f"blocked: {'; '.join(exc.reasons)}", err=True)
                return 3
            finally:
                if resources.references is not None:
                    await resources.references.close()
    finally:
        if sidecar is not None:
            sidecar.close()
    if as_json:
        typer.echo(report.model_dump_json(indent=2))
        return 0
    if report.demo:
        typer.echo("［デモ出力］ no model configured: prose is demo output; findings are the tools' own")
    if report.rubric is not None:
        for score in report.rubric.scores:
            typer.echo(f"{score.axis}: {score.score}/5  {score.reason}")
    typer.echo(
        f"style issues: {len(report.style_issues)}; changes in the patch: {len(report.patch.change_map)}"
    )
    if report.plagiarism is not None:
        typer.echo(f"similarity: {report.plagiarism.score:.0%} ({report.plagiarism.verdict})")
    return 0


__all__ = ["smartao_app"]
