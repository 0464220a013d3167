"""Style issues and ``util.patch_from_issues`` (seed 002 §4 StyleAgent: "issue を change_map へ変換").

A :class:`StyleIssue` is one finding of textlint or of the Sudachi rules, with offsets in Python
characters into the essay. Linters often anchor a finding on one character (the ``で`` of ``である``,
the fourth ``、``); :func:`widen_span` grows such an anchor to the clause around it so a page highlights
something a reader recognises. :func:`patch_from_issues` turns the issues that carry a ``suggestion``
into a :class:`~kanawa.apps.smartao.patch.PatchJSON`; when two suggestions overlap, the one that starts
first (then the shorter) wins and the other stays an issue without a change.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from kanawa.apps.smartao.patch import Change, PatchJSON, conflicts, make_change

CLAUSE_DELIMITERS = frozenset("、。！？!?\n")
MAX_WIDEN = 40
"""Characters a one-character anchor may grow on each side."""


class StyleIssue(BaseModel):
    """One finding: ``essay[start:end]`` is the span to highlight; ``suggestion`` (when known) replaces
    that span. ``rule`` is the linter's rule id; ``source`` says which linter found it."""

    model_config = ConfigDict(frozen=True)

    rule: str
    message: str
    start: int
    end: int
    suggestion: str | None = None
    source: Literal["textlint", "sudachi"] = "textlint"


def widen_span(text: str, start: int, end: int) -> tuple[int, int]:
    """Grow a span of at most one character to the clause around it: left to just after the previous
    ``、``/``。``/line break, right to and including the next one (at most :data:`MAX_WIDEN` characters
    each way). Longer spans are returned as they are (clamped to the text)."""
    start = max(0, min(start, len(text)))
    end = max(start, min(end, len(text)))
    if end - start > 1 or not text:
        return start, end
    left = start
    while left > 0 and start - left < MAX_WIDEN and text[left - 1] not in CLAUSE_DELIMITERS:
        left -= 1
    right = start
    while right < len(text) and right - start < MAX_WIDEN:
        right += 1
        if text[right - 1] in CLAUSE_DELIMITERS:
            break
    return left, right


def patch_from_issues(text: str, issues: Iterable[StyleIssue]) -> PatchJSON:
    """Seed 002 §4 ``util.patch_from_issues``: the issues with a ``suggestion`` as one patch of ``text``.

    Overlapping suggestions: the earliest (then the shortest, then the first given) wins; the others are
    left out of the patch. Suggestions equal to the text they replace make no change."""
    ranked = sorted(
        (i for i in enumerate(issues) if i[1].suggestion is not None),
        key=lambda pair: (pair[1].start, pair[1].end - pair[1].start, pair[0]),
    )
    kept: list[Change] = []
    for _, issue in ranked:
        suggestion = issue.suggestion or ""
        if not 0 <= issue.start <= issue.end <= len(text) or text[issue.start : issue.end] == suggestion:
            continue
        if issue.start == issue.end and not suggestion:
            continue
        change = make_change(issue.start, issue.end, suggestion)
        if any(
            conflicts(change, other) or change.start == other.start == other.end == change.end
            for other in kept
        ):
            continue
        kept.append(change)
    return PatchJSON.from_changes(text, kept)


def utf16_to_chars(text: str) -> list[int]:
    """``table[u]`` is the Python-character offset of UTF-16 offset ``u`` in ``text`` (``u`` from 0 to the
    UTF-16 length). An offset inside a surrogate pair maps to the character's start."""
    table: list[int] = []
    for index, char in enumerate(text):
        table.append(index)
        if ord(char) > 0xFFFF:
            table.append(index)
    table.append(len(text))
    return table


def sorted_issues(issues: Sequence[StyleIssue]) -> list[StyleIssue]:
    """Issues by position, then rule: the order a page lists them in."""
    return sorted(issues, key=lambda i: (i.start, i.end, i.rule))


__all__ = ["StyleIssue", "patch_from_issues", "sorted_issues", "utf16_to_chars", "widen_span"]
