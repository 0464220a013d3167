"""The real-playbook evaluation set: a published trained ACE playbook, read at run time, and our own
labelled queries (``data/real_playbook_queries.json``).

The playbook is the online-trained AppWorld playbook the ACE authors publish in ``ace-agent/ace-appworld``
(Apache-2.0). Its text is never copied into this repository: :func:`load_real_set` reads it from the
directory named by ``KANAWA_ACE_REAL_PLAYBOOKS`` (a saved copy of the same file), or — when
``KANAWA_ACE_REAL_PLAYBOOKS_URL=1`` allows the network — from the public raw URL at the pinned commit,
and says which it used (the test suite itself never reaches out to the internet unless asked). When neither
is available it returns the reason, so the benchmark can say so and a test can skip with it.

The queries (114: 57 English, 57 Japanese; ``paraphrase`` — a user of the task in their own words —
or ``api`` — naming an API, a field or an error string) label bullets by id, each with the first 16 hex
digits of the SHA-256 of its normalised text: a label whose id now holds another text is found again
by its hash, or dropped and counted. Grades: 2 the bullet answers the query, 1 it helps. Exact
duplicates (same normalised text) carry the same grade, and count once: relevance is judged per
duplicate group. Every third query of each language is ``held_out``: the defaults were chosen on the
``tune`` split and the held-out numbers are reported beside it.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kanawa.apps.ace.operations import normalised_text
from kanawa.apps.ace.playbook import Playbook

QUERIES_PATH = Path(__file__).parent / "data" / "real_playbook_queries.json"
ENV = "KANAWA_ACE_REAL_PLAYBOOKS"
"""A directory holding ``appworld_online_trained_playbook.txt`` (used when the URL is unreachable)."""
URL_ENV = "KANAWA_ACE_REAL_PLAYBOOKS_URL"
"""Set to ``1`` to read the playbook from its public URL (off by default: the suite stays offline)."""


def text_hash(text: str) -> str:
    """The label key of a bullet: 16 hex digits of SHA-256 over its normalised text."""
    return hashlib.sha256(normalised_text(text).encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class LabelledQuery:
    id: str
    lang: str
    kind: str
    split: str
    text: str
    grades: dict[str, int]
    """Relevant duplicate groups (text hashes) → grade."""


@dataclass(frozen=True)
class RealSet:
    playbook: Playbook
    source: str
    """Where the playbook came from (the URL, or the local path), for the report."""
    queries: list[LabelledQuery]
    group_of: dict[str, str]
    """Bullet id → its duplicate group (text hash)."""
    dropped_labels: int = 0
    notes: list[str] = field(default_factory=list)


def _spec() -> dict[str, Any]:
    spec: dict[str, Any] = json.loads(QUERIES_PATH.read_text(encoding="utf-8"))
    return spec


def raw_url(spec: dict[str, Any] | None = None) -> str:
    playbook = (spec or _spec())["playbook"]
    return (
        f"https://raw.githubusercontent.com/{playbook['repository']}/{playbook['commit']}/{playbook['path']}"
    )


def _fetch(url: str, timeout: float) -> str | None:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            body: bytes = response.read()
            return body.decode("utf-8")
    except (OSError, urllib.error.URLError, ValueError):
        return None


def read_playbook_text(*, timeout: float = 5.0) -> tuple[str, str] | str:
    """(text, source) of the published playbook, or the reason it is not available."""
    spec = _spec()
    url = raw_url(spec)
    tried = []
    directory = os.environ.get(ENV)
    if directory:
        path = Path(directory) / spec["playbook"]["name"]
        if path.is_file():
            return path.read_text(encoding="utf-8"), str(path)
        tried.append(f"{path} does not exist")
    else:
        tried.append(f"{ENV} is not set")
    if os.environ.get(URL_ENV, "0") == "1":
        text = _fetch(url, timeout)
        if text is not None:
            return text, url
        tried.append(f"{url} is unreachable")
    else:
        tried.append(f"{URL_ENV}=1 is not set (the public URL was not tried)")
    return "real playbook not available: " + "; ".join(tried)


def load_real_set(*, timeout: float = 5.0) -> RealSet | str:
    """The playbook and the labelled queries, or the reason the playbook is not available."""
    found = read_playbook_text(timeout=timeout)
    if isinstance(found, str):
        return found
    text, source = found
    spec = _spec()
    notes = []
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    if digest != spec["playbook"]["sha256"]:
        notes.append(f"the playbook's SHA-256 {digest[:12]}… differs from the labelled version's")
    playbook = Playbook.from_text(text)
    group_of = {b.id: text_hash(b.content) for b in playbook.bullets}
    groups = set(group_of.values())
    queries, dropped = [], 0
    for item in spec["queries"]:
        grades: dict[str, int] = {}
        for bullet_id, label in item["relevant"].items():
            group = label["hash"]
            if group not in groups:  # the text changed: the label no longer applies
                dropped += 1
                continue
            if group_of.get(bullet_id) != group:
                notes.append(f"{bullet_id} moved; found by its text hash")
            grades[group] = max(grades.get(group, 0), int(label["grade"]))
        queries.append(
            LabelledQuery(
                id=item["id"],
                lang=item["lang"],
                kind=item["kind"],
                split=item["split"],
                text=item["text"],
                grades=grades,
            )
        )
    return RealSet(playbook, source, queries, group_of, dropped, notes)


Ranked = list[tuple[str, tuple[str, ...]]]
"""One query's results as (bullet id, folded duplicate ids), best first."""


def query_metrics(ranked: Ranked, query: LabelledQuery, group_of: dict[str, str]) -> dict[str, float]:
    """recall@5, recall@10, MRR@10 and nDCG@10 of one query, judged per duplicate group.

    A result covers its own group and the groups of the duplicates folded into it (the caller gets
    those ids too); each relevant group counts once. recall counts groups of grade ≥ 1; MRR is the
    reciprocal rank of the first result covering one; nDCG uses gains 2^grade − 1.
    """
    grades = query.grades
    seen: set[str] = set()
    gains: list[float] = []
    first: int | None = None
    recall_at: dict[int, int] = {}
    for place, (bullet_id, duplicates) in enumerate(ranked[:10], start=1):
        covered = {group_of[i] for i in (bullet_id, *duplicates)} & set(grades)
        new = covered - seen
        seen |= new
        gains.append(max((2.0 ** grades[g] - 1 for g in new), default=0.0))
        if covered and first is None:
            first = place
        recall_at[place] = len(seen)
    total = len(grades)
    if total == 0:
        return {"recall@5": 0.0, "recall@10": 0.0, "mrr@10": 0.0, "ndcg@10": 0.0}

    def recall(k: int) -> float:
        upto = [recall_at[p] for p in recall_at if p <= k]
        return (max(upto) if upto else 0) / total

    dcg = sum(g / math.log2(p + 1) for p, g in enumerate(gains, start=1))
    ideal = sorted((2.0**g - 1 for g in grades.values()), reverse=True)[:10]
    idcg = sum(g / math.log2(p + 1) for p, g in enumerate(ideal, start=1))
    return {
        "recall@5": recall(5),
        "recall@10": recall(10),
        "mrr@10": 0.0 if first is None else 1.0 / first,
        "ndcg@10": dcg / idcg if idcg else 0.0,
    }


def mean_metrics(rows: list[dict[str, float]]) -> dict[str, float]:
    if not rows:
        return {}
    return {key: sum(r[key] for r in rows) / len(rows) for key in rows[0]}


__all__ = [
    "ENV",
    "QUERIES_PATH",
    "LabelledQuery",
    "RealSet",
    "load_real_set",
    "mean_metrics",
    "query_metrics",
    "raw_url",
    "read_playbook_text",
    "text_hash",
]
