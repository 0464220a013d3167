"""Offline CI: an eval against a real provider adapter is recorded once into a cassette and replayed
with the network off — the same report, for nothing."""

from __future__ import annotations

import asyncio
import re
import socket
from pathlib import Path
from typing import Any

import pytest

from kanawa import Agent
from kanawa.evals import Case, Dataset, EvalReport, ScorerSpec
from kanawa.evals.runner import Eval
from kanawa.llm.openai.chat import OpenAIChatAdapter
from tests.llm.openai_chat import wire as chat_wire
from tests.wire.server import RecordedRequest, Reply, WireServer

GATEWAY_KEY = "gateway-secret-4412-kanawa"
CAPITALS = {"Japan": "Tokyo", "France": "Paris", "Peru": "Lima", "Kenya": "Nairobi"}


def capital_reply(request: RecordedRequest) -> Reply:
    question = request.json()["messages"][-1]["content"]
    country = re.search(r"capital of (\w+)", str(question))
    answer = CAPITALS.get(country.group(1), "I do not know") if country else "I do not know"
    return chat_wire.completion({"content": answer, "refusal": None})


def evaluate(dataset: Dataset[Any, Any], base_url: str, **options: Any) -> EvalReport:
    """Run the eval in a loop of its own (the wire server is synchronous) and close the adapter's
    connections in that loop."""
    model = OpenAIChatAdapter("local-model", api_key=GATEWAY_KEY, base_url=f"{base_url}/v1", timeout=5.0)

    async def go() -> EvalReport:
        try:
            return await Eval(
                dataset, Agent("geo", "Answer with the capital only.", model=model), **options
            ).arun()
        finally:
            await model.aclose()

    return asyncio.run(go())


DATASET = Dataset(
    name="capitals",
    cases=[
        Case(name=c, inputs=f"What is the capital of {c}?", expected_output=a) for c, a in CAPITALS.items()
    ],
    scorers=[ScorerSpec(type="equals_expected")],
)


def comparable(report: Any) -> list[tuple[Any, ...]]:
    return [(r.case, r.repeat, r.output, r.outcomes, r.usage, r.error) for r in report.results]


def test_record_once_then_replay_offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cassette = tmp_path / "capitals.yaml"
    with WireServer() as server:
        server.default = capital_reply
        base_url = server.base_url
        recorded = evaluate(DATASET, base_url, repeat=2, concurrency=4, cassette=cassette, record="once")
        assert len(server.requests) == 8
    assert recorded.pass_rate == 1.0
    assert GATEWAY_KEY not in cassette.read_text()

    def refuse(self: socket.socket, address: object) -> None:
        raise OSError(f"network is off in this test (connect to {address!r})")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    replayed = evaluate(DATASET, base_url, repeat=2, concurrency=4, cassette=cassette)
    assert comparable(replayed) == comparable(recorded)
    assert replayed.metadata["cassette"] == {"path": str(cassette), "record": "none", "misses": 0}

    # a case the cassette never saw fails as a case (nothing reaches the network), the rest replay
    more = Dataset(
        name="more", cases=[*DATASET.cases, Case(name="Chile", inputs="What is the capital of Chile?")]
    )
    partial = evaluate(more, base_url, cassette=cassette)
    errors = {r.case: r.error for r in partial.results}
    assert errors["Japan"] is None
    assert errors["Chile"] is not None
    assert partial.metadata["cassette"]["misses"] == 1
