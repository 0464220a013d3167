"""``kanawa smartao …``: coach an essay offline and run the nightly reflexion by hand.

- ``kanawa smartao coach ESSAY.txt [--policy POLICY.txt] [--json]`` — one coaching run with the demo
  model (or ``--model``), printing the rubric, the issues and the patch (``--json``: the whole
  :class:`~kanawa.apps.smartao.coordinator.CoachingReport`).
- ``kanawa smartao serve [--host 127.0.0.1] [--port 8000] [--model …]`` — the kanawa service with the
  demo agents and ``smartao`` registered and the coaching page under ``/smartao/`` (offline demo model
  unless ``--model``/``KANAWA_MODEL`` names one); prints the page's URL and the runs page's, each with
  the development key.
- ``kanawa smartao reflexion --db evaluations.sqlite3 [--day YYYY-MM-DD]`` —
  :func:`~kanawa.apps.smartao.reflexion.apply_reflexion`, the function a Celery beat job calls.
- ``kanawa smartao setup [--force] [--registry URL]`` — textlint's node modules into the per-user cache
  (:mod:`kanawa.apps.smartao.textlint_setup`), with a progress line; without Node.js it says what to
  install.

Only typer and the CLI's own helpers are imported here; the SmartAO modules load when a command runs
(the command lives in the CLI, which imports the application — never the other way round).
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from kanawa._cli_help import KanawaCommand, KanawaGroup
from kanawa.cli.extras import require_extra
from kanawa.cli.files import InputFileError, read_input_text

if TYPE_CHECKING:
    from kanawa.apps.smartao.reflexion import EvalStore

smartao_app = typer.Typer(
    cls=KanawaGroup, help="SmartAO: essay coaching for Japanese AO admissions.", no_args_is_help=True
)

DEFAULT_DB = Path(".kanawa/smartao/evaluations.sqlite3")
DEFAULT_DATA = Path(".kanawa/smartao")
LOOPBACK = frozenset({"127.0.0.1", "::1", "localhost"})


def _store_error(db: Path, exc: Exception) -> typer.Exit:
    """One line for an evaluation store that SQLite cannot open (a directory, not a database …)."""
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    typer.echo(f"kanawa: cannot use the evaluation store {db}: {reason}", err=True)
    return typer.Exit(1)


@smartao_app.command("reflexion", cls=KanawaCommand)
def reflexion(
    db: Annotated[Path, typer.Option("--db", help="The evaluation store (SQLite).")] = DEFAULT_DB,
    day: Annotated[str | None, typer.Option("--day", help="YYYY-MM-DD (default: today, UTC).")] = None,
) -> None:
    """Learn lessons from one day's evaluations (the nightly job) and print them."""
    import sqlite3

    from kanawa.apps.smartao.reflexion import apply_reflexion

    if not db.exists():
        typer.echo(f"kanawa: no evaluation store at {db}", err=True)
        raise typer.Exit(1)
    try:
        lessons = apply_reflexion(db, day=day)
    except ValueError:
        typer.echo(f"kanawa: --day must be YYYY-MM-DD, not {day!r}", err=True)
        raise typer.Exit(2) from None
    except (sqlite3.Error, OSError) as exc:
        raise _store_error(db, exc) from None
    if not lessons:
        typer.echo("no lessons: no evaluations that day, or no axis scored low")
    for tenant, learned in lessons.items():
        for axis, lesson in learned.items():
            typer.echo(f"{tenant}/{axis}: {lesson}" if tenant else f"{axis}: {lesson}")


@smartao_app.command("setup", cls=KanawaCommand)
def setup(
    force: Annotated[bool, typer.Option("--force", help="Install again even when it is there.")] = False,
    registry: Annotated[
        str | None, typer.Option("--registry", help="The npm registry to install from (default: npm's own).")
    ] = None,
) -> None:
    """Install textlint for StyleAgent (Node.js packages from the committed lock into your user cache)."""
    require_extra("smartao setup", "smartao")
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from kanawa.apps.smartao.textlint import user_textlint_dir
    from kanawa.apps.smartao.textlint_setup import SetupError, install, is_installed, node_problem

    if is_installed() and not force:
        typer.echo(f"textlint is already installed in {user_textlint_dir()} (--force installs it again)")
        return
    problem = node_problem()
    if problem is not None:
        typer.echo(
            f"kanawa smartao setup: {problem}; then run `kanawa smartao setup` again. "
            "Until then StyleAgent uses the Sudachi rules.",
            err=True,
        )
        raise typer.Exit(2)
    bar = Progress(
        TextColumn("installing textlint"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("packages"),
        TimeElapsedColumn(),
        console=Console(stderr=True),
    )
    task = bar.add_task("npm ci", total=None)
    try:
        with bar:
            result = install(
                force=force,
                progress=lambda done, total: bar.update(task, completed=done, total=total),
                npm_options=[f"--registry={registry}"] if registry else [],
            )
    except SetupError as exc:
        typer.echo(f"kanawa smartao setup: {exc}", err=True)
        raise typer.Exit(1) from None
    typer.echo(f"textlint is ready: {result.packages} packages in {result.home} ({result.seconds:.0f} s)")


@smartao_app.command("coach", cls=KanawaCommand)
def coach(
    essay: Annotated[Path, typer.Argument(help="The essay, a text file (UTF-8, Shift_JIS/CP932 or EUC-JP).")],
    policy: Annotated[
        Path | None,
        typer.Option("--policy", help="The admission policy, a text file (the same encodings as the essay)."),
    ] = None,
    model: Annotated[str | None, typer.Option("--model", "-m", help="A model string; default: demo.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the whole report as JSON.")] = False,
    store: Annotated[Path, typer.Option("--db", help="The evaluation store (SQLite).")] = DEFAULT_DB,
) -> None:
    """Coach one essay against the shipped sample corpora and print the result."""
    require_extra("smartao coach", "smartao")
    import sqlite3

    from kanawa.apps.smartao.reflexion import EvalStore

    try:
        text = read_input_text(essay, what="essay")
        policy_text = read_input_text(policy, what="policy") if policy else ""
    except InputFileError as exc:
        typer.echo(f"kanawa: {exc}", err=True)
        raise typer.Exit(1) from None
    if not text.strip():
        typer.echo(f"kanawa: the essay {essay} is empty", err=True)
        raise typer.Exit(1)
    try:
        evaluations = EvalStore(store)
    except (sqlite3.Error, OSError) as exc:
        raise _store_error(store, exc) from None
    raise typer.Exit(asyncio.run(_coach(text, policy_text, model, as_json, evaluations)))


async def _coach(text: str, policy: str, model: str | None, as_json: bool, store: EvalStore) -> int:
    from kanawa.apps.smartao.coordinator import Coordinator
    from kanawa.apps.smartao.session import EssayRequest, sample_resources
    from kanawa.apps.smartao.textlint import start_textlint
    from kanawa.loop.errors import GuardrailViolation

    sidecar, notice = start_textlint()
    if notice is not None:
        typer.echo(f"kanawa: {notice}", err=True)
    try:
        with tempfile.TemporaryDirectory() as scratch:
            resources = await sample_resources(scratch, textlint=sidecar)
            resources.eval_store = store
            try:
                report = await Coordinator(resources, model=model).arun(
                    EssayRequest(essay=text, policy=policy)
                )
            except GuardrailViolation as exc:
                typer.echo(f"blocked: {'; '.join(exc.reasons)}", err=True)
                return 3
            finally:
                if resources.references is not None:
                    await resources.references.aclose()
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


@smartao_app.command("serve", cls=KanawaCommand)
def serve(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8000,
    model: Annotated[
        str | None,
        typer.Option("--model", "-m", envvar="KANAWA_MODEL", help="A model string; default: the demo model."),
    ] = None,
    data: Annotated[
        Path, typer.Option("--data", help="Where the reference memory and evaluation store live.")
    ] = DEFAULT_DATA,
    textlint: Annotated[
        bool | None,
        typer.Option(
            "--textlint/--no-textlint", help="Require textlint, or use the Sudachi rules (default: auto)."
        ),
    ] = None,
    log_level: Annotated[str, typer.Option(help="uvicorn's log level.")] = "info",
) -> None:
    """Serve the SmartAO coaching page (/smartao/) and the kanawa API (/v1) from one process."""
    require_extra("smartao serve", "smartao")
    raise typer.Exit(_serve(host, port, model, data, textlint, log_level))


def _serve(host: str, port: int, model: str | None, data: Path, textlint: bool | None, log_level: str) -> int:
    import os
    import secrets

    import uvicorn

    from kanawa.apps.smartao.web import PAGE_PATH, smartao_extension
    from kanawa.cli.serve_cmd import base_url, page_url
    from kanawa.server.http.app import create_app
    from kanawa.server.http.auth import KeyConfigError, KeyRing
    from kanawa.server.http.head_limits import uvicorn_options
    from kanawa.server.runs.demo_agents import demo_agents
    from kanawa.server.settings import ServerSettings

    try:
        settings = ServerSettings.from_env(dev_key=os.environ.get("KANAWA_DEV_KEY") or None)
        if settings.keys_configured:
            KeyRing.parse(settings.api_keys, file=settings.api_keys_file)
    except (KeyConfigError, ValueError) as exc:
        typer.echo(f"kanawa smartao serve: {exc}", err=True)
        return 2
    if settings.celery_broker:
        typer.echo(
            "kanawa smartao serve: runs here in one process; unset KANAWA_CELERY_BROKER, or serve "
            "SmartAO on Celery workers with KANAWA_SERVE_EXTENSIONS (docs/server.md)",
            err=True,
        )
        return 2
    key = ""
    if not settings.keys_configured:
        if host not in LOOPBACK:
            typer.echo(
                "kanawa smartao serve: no API keys configured, so only loopback is served; "
                f"refusing --host {host}. "
                "Set KANAWA_API_KEYS=key:tenant,... or KANAWA_API_KEYS_FILE.",
                err=True,
            )
            return 2
        key = settings.dev_key or "kw-dev-" + secrets.token_urlsafe(24)
        settings = ServerSettings.from_env(dev_key=key)
    app = create_app(
        agents=demo_agents(),
        settings=settings,
        extensions=[smartao_extension(data, model=model, textlint=textlint)],
    )
    typer.echo(f"SmartAO   {page_url(host, port, PAGE_PATH, key=key)}")
    typer.echo(f"runs      {page_url(host, port, '/runs', key=key)}")
    if key:
        typer.echo(f"dev key   {key}  (no KANAWA_API_KEYS configured: loopback clients only)")
    typer.echo(f"model     {model or 'offline demo model (output labelled デモ出力)'}")
    typer.echo(f"style     {_style_engine(textlint)}")
    typer.echo(f"agents    calc, echo, smartao   (API: {base_url(host, port)}/v1)")
    uvicorn.run(  # with the request-head limits `kanawa serve` has (KANAWA_MAX_HEAD_BYTES, ...)
        app, host=host, port=port, log_level=log_level, timeout_graceful_shutdown=5, **uvicorn_options()
    )
    return 0


def _style_engine(textlint: bool | None) -> str:
    """The banner's line for StyleAgent's engine (``--textlint/--no-textlint``, default: auto)."""
    if textlint is False:
        return "Sudachi rules (--no-textlint)"
    from kanawa.apps.smartao.textlint_setup import where_textlint_runs_from

    return where_textlint_runs_from() + (" — required by --textlint" if textlint else "")


__all__ = ["smartao_app"]
