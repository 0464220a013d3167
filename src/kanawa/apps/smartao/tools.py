"""The SmartAO agents' tools: each reads the essay from the run's :class:`CoachingSession` and records
its structured finding there before returning a JSON summary to the model.

- ``grammar_check`` (StyleAgent, seed 002 §4): textlint in the warm sidecar, else the Sudachi rules;
  issues → ``change_map`` with ``patch_from_issues``.
- ``essay_outline`` (DraftAgent): headings, and per paragraph the heuristics deepening looks for.
- ``vector_search`` (RefAgent, seed 002 §4): the reference corpus in long-term memory (SQLite, or
  pgvector whose fallback scan is ``SELECT id, cos_sim(...) ORDER BY 2 DESC LIMIT k``).
- ``plagiarism_check`` (GuardAgent, seed 002 §4): containment against the prior-essay corpus.
- ``rubric_evidence`` (EvalAgent): the heuristic rubric, fed by Style's findings and the lessons.
"""

from __future__ import annotations

import asyncio
import json
import re

from kanawa.apps.smartao import sudachi_rules
from kanawa.apps.smartao.issues import patch_from_issues, sorted_issues
from kanawa.apps.smartao.rubric import heuristic_scores
from kanawa.apps.smartao.session import CoachingSession, Reference
from kanawa.context import RunContext

HEADING = re.compile(r"^\s*(?:[■□◆◇●○【#]|第[一二三四五六七八九十]+[章節]|\d+[.．、)])")


def is_heading(line: str) -> bool:
    """A heading line: starts with ■, 【, #, 第一章, "1." … (what DraftAgent must keep as written)."""
    return bool(HEADING.match(line))


def heading_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if is_heading(line)]


async def grammar_check(ctx: RunContext[CoachingSession]) -> str:
    """Check the essay's Japanese style (です/である mix, long sentences, repeated words) and return
    the issues with their offsets and suggested replacements."""
    session = ctx.deps
    essay = session.request.essay
    sidecar = session.resources.textlint
    if sidecar is not None:
        issues = await asyncio.to_thread(sidecar.lint, essay)
        engine = "textlint"
    else:
        issues = await asyncio.to_thread(sudachi_rules.check, essay)
        engine = "sudachi"
    issues = sorted_issues(issues)
    session.style_issues = issues
    session.style_patch = patch_from_issues(essay, issues)
    return json.dumps(
        {
            "engine": engine,
            "issues": [i.model_dump() for i in issues],
            "fixable": len(session.style_patch.change_map),
        },
        ensure_ascii=False,
    )


async def essay_outline(ctx: RunContext[CoachingSession]) -> str:
    """The essay's headings and paragraphs, each paragraph with whether it has numbers and a concrete
    scene: where deepening helps most."""
    essay = ctx.deps.request.essay
    paragraphs = []
    for line in essay.splitlines():
        if not line.strip() or is_heading(line):
            continue
        sentences = [s for s in re.split(r"(?<=。)", line) if s.strip()]
        paragraphs.append(
            {
                "first_sentence": sentences[0] if sentences else line,
                "last_sentence": sentences[-1] if sentences else line,
                "has_number": bool(
                    re.search(r"[0-9０-９一二三四五六七八九十百千]+(?:年|か月|人|回|日|件|%|％)", line)
                ),
                "chars": len(line),
            }
        )
    return json.dumps(
        {"headings": heading_lines(essay), "paragraphs": paragraphs, "depth": ctx.deps.request.depth},
        ensure_ascii=False,
    )


async def vector_search(ctx: RunContext[CoachingSession], query: str, k: int = 3) -> str:
    """Find the ``k`` references most relevant to ``query`` in the reference corpus."""
    session = ctx.deps
    memory = session.resources.references
    if memory is None:
        return json.dumps({"references": [], "note": "no reference corpus is configured"})
    hits = await memory.asearch(query, k=max(1, min(k, 10)), namespace=session.resources.reference_namespace)
    found = [
        Reference(
            id=str(hit.item.metadata.get("id", hit.item.id)),
            title=str(hit.item.metadata.get("title", "")),
            text=hit.item.text,
            score=round(hit.score, 4),
        )
        for hit in hits
    ]
    known = {r.id for r in session.references}
    session.references.extend(r for r in found if r.id not in known)
    return json.dumps({"references": [r.model_dump() for r in found]}, ensure_ascii=False)


async def plagiarism_check(ctx: RunContext[CoachingSession]) -> str:
    """Compare the essay with the corpus of prior essays and sources: containment score, verdict
    (pass / warn 0.28–0.4 / block > 0.4) and the matching passages."""
    session = ctx.deps
    if session.plagiarism is None:
        session.plagiarism = await asyncio.to_thread(
            session.resources.plagiarism.check, session.request.essay
        )
    return session.plagiarism.model_dump_json()


async def rubric_evidence(ctx: RunContext[CoachingSession]) -> str:
    """Evidence for each rubric axis from the other agents' findings (style issues, plagiarism score,
    admission-policy overlap) and the lessons learned from earlier evaluations."""
    session = ctx.deps
    store = session.resources.eval_store
    lessons = store.latest_lessons(tenant=session.tenant) if store is not None else ()
    rubric = heuristic_scores(
        session.request.essay,
        policy=session.request.policy,
        style_issue_count=len(session.style_issues or ()),
        plagiarism_score=session.plagiarism.score if session.plagiarism else 0.0,
        lessons=lessons,
    )
    return rubric.model_dump_json()


__all__ = [
    "essay_outline",
    "grammar_check",
    "heading_lines",
    "is_heading",
    "plagiarism_check",
    "rubric_evidence",
    "vector_search",
]
