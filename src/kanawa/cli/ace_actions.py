"""What the ``kanawa ace`` commands do (:mod:`kanawa.cli.ace_cmd` holds the typer wrappers).

Each action opens the store, does its work, prints with rich and returns the exit code: 0 success,
1 a bad input file or a failed Trajectory, 2 a model or store that cannot be used or a dataset that
``search``/``export`` do not find there (one line, never a traceback). Long steps — embedding a
playbook, adaptation epochs — show progress bars with counts and an ETA on stderr.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path

from rich.console import Console, RenderableType
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from kanawa.apps.ace.playbook import Playbook
from kanawa.apps.ace.search.hybrid import HybridSearch
from kanawa.apps.ace.store.base import PlaybookStore
from kanawa.apps.ace.workflow import Sample
from kanawa.cli.errors import setup_hint
from kanawa.cli.files import InputFileError, read_input_text
from kanawa.cli.tables import Column, fitted_table
from kanawa.llm.adapter import LLMAdapter
from kanawa.llm.errors import LLMError
from kanawa.secrets import mask

EXIT_OK, EXIT_INPUT, EXIT_SETUP = 0, 1, 2

SEARCH_COLUMNS = (
    Column("#", "right", key=True),
    Column("id", key=True),
    Column("score", "right", drop=1),
    Column("why it matched", wrap=True, drop=2),
    Column("bullet", wrap=True),
)
"""A hit is read by its rank and bullet id (kept whole) and its text (wrapped); at 80 columns the
explanation of the match gives way first."""

ADAPT_COLUMNS = (
    Column("epoch", "right", key=True),
    Column("accuracy", key=True),
    Column("ADD", "right", drop=1),
    Column("TAG", "right", drop=2),
    Column("UPDATE", "right", drop=3),
    Column("REMOVE", "right", drop=4),
    Column("MERGE", "right", drop=5),
    Column("bullets after", "right", key=True),
)


def _progress(err: Console) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=err,
        transient=False,
    )


@contextlib.asynccontextmanager
async def _store(location: str | None, err: Console) -> AsyncIterator[PlaybookStore | None]:
    from kanawa.apps.ace.store.opening import open_playbook_store

    try:
        store = await open_playbook_store(location=location)
    except Exception as exc:  # an unreachable database, a bad URL
        err.print(f"kanawa: cannot open the playbook store: {escape(mask(str(exc)))}")
        yield None
        return
    try:
        yield store
    finally:
        await store.aclose()


async def _has_dataset(store: PlaybookStore, dataset: str, err: Console) -> bool:
    """Whether ``dataset`` is in ``store``; if not, one line naming the datasets there (commands that
    only read a playbook refuse a name that was never imported instead of showing an empty one)."""
    known = await store.datasets()
    if dataset in known:
        return True
    there = f"the store holds {', '.join(sorted(known))}" if known else "the store holds no playbooks yet"
    err.print(
        f"kanawa: no playbook named {escape(repr(dataset))} ({there}); "
        f"import one with: kanawa ace import FILE --dataset {escape(dataset)}",
        soft_wrap=True,
        highlight=False,
    )
    return False


def _search(store: PlaybookStore, dense: bool) -> HybridSearch:
    return HybridSearch(store=store) if dense else HybridSearch(embedder=None, store=store)


async def _embed(search: HybridSearch, playbook: Playbook, err: Console) -> int:
    """Embed what is missing, with a progress bar (shown only when something must be embedded)."""
    if search.embedder is None or not len(playbook):
        return 0
    progress = _progress(err)
    task = progress.add_task("embedding bullets", total=None)

    def update(done: int, total: int) -> None:
        if total and not progress.live.is_started:
            progress.start()
        progress.update(task, completed=done, total=total)

    try:
        return await search.aprepare(playbook, progress=update)
    finally:
        progress.stop()


def _read_playbook(file: Path) -> Playbook:
    """Raises :class:`InputFileError` (unreadable) or ``ValueError`` (not a playbook)."""
    text = read_input_text(file, what="playbook")
    if file.suffix == ".json":
        return Playbook.model_validate_json(text)
    return Playbook.from_text(text)


def _missing_directory(path: Path | None) -> str | None:
    """Why ``path`` is not a directory (``None`` when it is, or when no path was given)."""
    if path is None or path.is_dir():
        return None
    return "it is a file, not a directory" if path.exists() else "no such directory"


def _resolve(model: str, err: Console) -> LLMAdapter | None:
    from kanawa.llm.models import resolve_model

    try:
        return resolve_model(model)
    except LLMError as exc:
        err.print(setup_hint(model, exc), soft_wrap=True, highlight=False, markup=False)
        return None


async def import_playbook(
    console: Console, err: Console, *, file: Path, dataset: str, store: str | None, dense: bool
) -> int:
    try:
        playbook = _read_playbook(file)
    except InputFileError as exc:
        err.print(f"kanawa: {escape(str(exc))}", soft_wrap=True)
        return EXIT_INPUT
    except ValueError as exc:
        err.print(f"kanawa: cannot import {escape(str(file))}: {escape(str(exc).splitlines()[0])}")
        return EXIT_INPUT
    async with _store(store, err) as opened:
        if opened is None:
            return EXIT_SETUP
        try:
            await opened.asave(dataset, playbook)
        except ValueError as exc:
            err.print(f"kanawa: {escape(str(exc))}")
            return EXIT_INPUT
        embedded = await _embed(_search(opened, dense), playbook, err)
    console.print(
        f"imported {len(playbook)} bullets in {len(playbook.sections)} sections "
        f"into [bold]{escape(dataset)}[/]"
        + (f"; embedded {embedded} new bullets ({len(playbook) - embedded} from cache)" if dense else "")
    )
    return EXIT_OK


async def search_playbook(
    console: Console,
    err: Console,
    *,
    query: str,
    dataset: str,
    store: str | None,
    top_k: int,
    sections: list[str] | None,
    min_confidence: float | None,
    mode: str,
    fusion: str | None,
    dense: bool,
) -> int:
    from kanawa.apps.ace.search.models import SearchQuery

    try:
        search_query = SearchQuery.model_validate(
            {
                "query_text": query,
                "top_k": top_k,
                "sections": tuple(sections) if sections else None,
                "min_confidence": min_confidence,
                "mode": mode,
                "fusion": fusion,
            }
        )
    except ValueError as exc:
        err.print(f"kanawa: bad search options: {escape(str(exc).splitlines()[-1].strip())}")
        return EXIT_INPUT
    async with _store(store, err) as opened:
        if opened is None or not await _has_dataset(opened, dataset, err):
            return EXIT_SETUP
        playbook = await opened.aload(dataset)
        search = _search(opened, dense and mode != "bm25")
        await _embed(search, playbook, err)
        results = await search.asearch(search_query, playbook)
    rows: list[list[RenderableType]] = []
    for r in results:
        text = r.bullet.content if len(r.bullet.content) < 160 else r.bullet.content[:157] + "…"
        why = r.explain() + (f" ({', '.join(r.duplicates)})" if r.duplicates else "")
        rows.append([str(r.rank), r.bullet.id, f"{r.score:.3f}", escape(why), escape(text)])
    title = f"{escape(query)} — {dataset} ({len(playbook)} bullets)"
    console.print(fitted_table(console, SEARCH_COLUMNS, rows, title=title) if results else "no bullets found")
    return EXIT_OK


async def generate_trajectory(
    console: Console,
    err: Console,
    *,
    task: str,
    dataset: str,
    model: str,
    store: str | None,
    top_k: int,
    prompts_dir: Path | None,
    dense: bool,
) -> int:
    from kanawa.apps.ace.generator import GeneratorAgent
    from kanawa.apps.ace.prompt_builder import PromptBuilder

    problem = _missing_directory(prompts_dir)
    if problem:
        err.print(
            f"kanawa: cannot read the prompts directory {escape(str(prompts_dir))}: {problem}", soft_wrap=True
        )
        return EXIT_INPUT
    adapter = _resolve(model, err)
    if adapter is None:
        return EXIT_SETUP
    async with _store(store, err) as opened:
        if opened is None:
            return EXIT_SETUP
        search = _search(opened, dense)
        await _embed(search, await opened.aload(dataset), err)
        generator = GeneratorAgent(opened, search, adapter, PromptBuilder(prompts_dir), top_k=top_k)
        try:
            trajectory = await generator.arun(task, dataset)
        finally:
            await generator.aclose()
    console.print_json(trajectory.model_dump_json())
    return EXIT_OK if trajectory.status == "success" else EXIT_INPUT


async def adapt_playbook(
    console: Console,
    err: Console,
    *,
    train: Path,
    dataset: str,
    model: str | LLMAdapter,
    store: str | None,
    epochs: int,
    online: bool,
    token_budget: int,
    dense: bool,
    models: tuple[LLMAdapter, LLMAdapter, LLMAdapter] | None = None,
) -> int:
    from kanawa.apps.ace.workflow import load_jsonl

    try:
        samples = load_jsonl(train, text=read_input_text(train, what="training file"))
    except InputFileError as exc:
        err.print(f"kanawa: {escape(str(exc))}", soft_wrap=True)
        return EXIT_INPUT
    except ValueError as exc:
        err.print(f"kanawa: {escape(str(exc))}")
        return EXIT_INPUT
    if models is None:
        adapter = model if not isinstance(model, str) else _resolve(model, err)
        if adapter is None:
            return EXIT_SETUP
        models = (adapter, adapter, adapter)
    async with _store(store, err) as opened:
        if opened is None:
            return EXIT_SETUP
        return await _adapt(
            console, err, opened, dataset, samples, models, epochs, online, token_budget, dense
        )


async def _adapt(
    console: Console,
    err: Console,
    store: PlaybookStore,
    dataset: str,
    samples: Sequence[Sample],
    models: tuple[LLMAdapter, LLMAdapter, LLMAdapter],
    epochs: int,
    online: bool,
    token_budget: int,
    dense: bool,
) -> int:
    from kanawa.apps.ace.curator import Curator
    from kanawa.apps.ace.generator import GeneratorAgent
    from kanawa.apps.ace.prompt_builder import PromptBuilder
    from kanawa.apps.ace.reflector import Reflector
    from kanawa.apps.ace.workflow import AdaptationWorkflow, StepRecord

    search = _search(store, dense)
    before = await store.aload(dataset)
    await _embed(search, before, err)
    generator = GeneratorAgent(store, search, models[0], PromptBuilder())
    curator = Curator(models[2], search=search, token_budget=token_budget)
    with _progress(err) as progress:
        bar = progress.add_task("adapting", total=len(samples) * (1 if online else epochs))

        def on_step(record: StepRecord) -> None:
            verdict = {True: "[green]✓[/]", False: "[red]✗[/]", None: "·"}[record.correct]
            added = [a.bullet_id for a in record.audit if a.type == "ADD" and a.status == "applied"]
            tags = sum(1 for a in record.audit if a.type == "TAG" and a.status == "applied")
            note = f"  [red]{escape(record.error)}[/]" if record.error else ""
            progress.console.print(
                f"epoch {record.epoch} #{record.index + 1} {verdict} "
                f"used {record.trajectory.used_bullet_ids or '—'}"
                f"  +{len(added)} bullets {added or ''}  {tags} tags{note}"
            )
            progress.advance(bar)

        workflow = AdaptationWorkflow(generator, Reflector(models[1]), curator, store, on_step=on_step)
        if online:
            report = await workflow.run_online(dataset, samples)
        else:
            report = await workflow.run_offline(dataset, samples, epochs=epochs)
    rows: list[list[RenderableType]] = []
    for epoch in report.epochs:
        accuracy = "—" if epoch.accuracy is None else f"{epoch.correct}/{epoch.judged} ({epoch.accuracy:.0%})"
        ops = [str(epoch.operations.get(kind, 0)) for kind in ("ADD", "TAG", "UPDATE", "REMOVE", "MERGE")]
        rows.append([str(epoch.epoch), accuracy, *ops, str(epoch.bullets_after)])
    console.print(fitted_table(console, ADAPT_COLUMNS, rows, title=f"{report.mode} adaptation of {dataset}"))
    console.print(f"playbook: {report.bullets_before} → {report.bullets_after} bullets")
    return EXIT_OK


async def export_playbook(
    console: Console, err: Console, *, dataset: str, store: str | None, fmt: str
) -> int:
    if fmt not in ("text", "json"):
        err.print("kanawa: --format must be text or json")
        return EXIT_INPUT
    async with _store(store, err) as opened:
        if opened is None or not await _has_dataset(opened, dataset, err):
            return EXIT_SETUP
        playbook = await opened.aload(dataset)
    out = playbook.to_text() if fmt == "text" else playbook.model_dump_json(indent=2) + "\n"
    console.file.write(out)
    return EXIT_OK


@contextlib.contextmanager
def _demo_dir(store: Path | None) -> Iterator[Path]:
    if store is not None:
        yield store
        return
    with tempfile.TemporaryDirectory(prefix="kanawa-ace-demo-") as directory:
        yield Path(directory)


async def run_demo(console: Console, err: Console, *, epochs: int, store: Path | None, dense: bool) -> int:
    from kanawa.apps.ace.demo import DEMO_DATASET, TASKS, demo_models, seed_playbook
    from kanawa.apps.ace.store.json_store import JsonPlaybookStore

    with _demo_dir(store) as directory:
        opened = JsonPlaybookStore(root=directory)
        await opened.asave(DEMO_DATASET, seed_playbook())
        console.print("[bold]Starting playbook[/]")
        console.print(escape(seed_playbook().to_text()))
        code = await _adapt(
            console, err, opened, DEMO_DATASET, TASKS, demo_models(), epochs, False, 20_000, dense
        )
        console.print("[bold]Learned playbook[/]")
        console.print(escape((await opened.aload(DEMO_DATASET)).to_text()))
    return code


__all__ = [
    "adapt_playbook",
    "export_playbook",
    "generate_trajectory",
    "import_playbook",
    "run_demo",
    "search_playbook",
]
