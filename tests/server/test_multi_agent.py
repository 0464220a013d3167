"""The multi-agent library over the service (seed 002 §5, §7): a handoff's chunks carry the target's
name, a guardrail warning is a chunk and a block an ``error`` chunk, and a run waiting for human
approval continues in the same stream after ``POST /v1/runs/{id}/approvals`` — in every store mode."""

from __future__ import annotations

import asyncio

import httpx

from tests.server.agents import SENT
from tests.server.sse import AUTH_A, AUTH_B, read_stream, start_run


async def test_handoff_chunks_carry_the_target_agents_name(client: httpx.AsyncClient) -> None:
    _, events = await start_run(client, "coordinator", "grade my essay")
    chunks = [e.chunk for e in events if e.chunk["type"] != "trace"]
    types = [c["type"] for c in chunks]
    assert "handoff_start" in types
    assert "handoff_end" in types
    start = types.index("handoff_start")
    end = types.index("handoff_end")
    inner = chunks[start + 1 : end]
    assert inner, "the target's chunks come between the handoff's start and end"
    assert {c["agent"] for c in inner} == {"evaluator"}
    assert all(c["data"]["depth"] == 1 for c in inner if isinstance(c["data"], dict))
    assert chunks[start]["agent"] == "coordinator"
    assert chunks[start]["data"]["target"] == "evaluator"
    final = next(c for c in chunks if c["type"] == "final" and c["agent"] == "coordinator")
    assert final["data"]["output"] == "the evaluator said: 8/10"
    assert chunks[-1]["data"]["status"] == "completed"
    assert chunks[-1]["data"]["cost_usd"] is None, "a scripted model has no price: unknown, never 0"


async def test_the_handoff_targets_trace_is_part_of_the_runs_timeline(client: httpx.AsyncClient) -> None:
    """The target runs under its own run id (named in its ``agent_start`` as the child of the transfer
    call); its trace events still reach the served run's chunks, so ``/runs/{id}`` shows both agents."""
    _, events = await start_run(client, "coordinator", "grade my essay")
    traces = [e.chunk["data"] for e in events if e.chunk["type"] == "trace"]
    by_agent = {(t["agent"], t["event"]) for t in traces}
    assert {("evaluator", "agent_start"), ("evaluator", "llm_end"), ("evaluator", "agent_end")} <= by_agent
    [target_start] = [t for t in traces if t["agent"] == "evaluator" and t["event"] == "agent_start"]
    [source_start] = [t for t in traces if t["agent"] == "coordinator" and t["event"] == "agent_start"]
    assert target_start["run_id"] != source_start["run_id"]
    assert target_start["data"]["parent_run_id"] == source_start["run_id"]


async def test_a_guardrail_warning_is_a_chunk_and_the_run_completes(client: httpx.AsyncClient) -> None:
    _, events = await start_run(client, "warned", "hi")
    chunks = [e.chunk for e in events]
    warning = next(c for c in chunks if c["type"] == "guardrail")
    assert warning["data"]["action"] == "warn"
    assert warning["data"]["reasons"] == ["matches blocked pattern 'card number'"]
    assert chunks[-1]["data"]["status"] == "completed"


async def test_a_blocking_guardrail_is_an_error_chunk_and_the_run_fails(client: httpx.AsyncClient) -> None:
    _, events = await start_run(client, "blocked", "hi")
    chunks = [e.chunk for e in events]
    types = [c["type"] for c in chunks]
    assert "final" not in types, "the blocked output never reaches the client"
    assert types.index("guardrail") < types.index("error")
    error = next(c for c in chunks if c["type"] == "error")
    assert error["data"]["code"] == "GuardrailViolation"
    assert "4111" not in str(chunks)
    assert chunks[-1]["data"]["status"] == "failed"


async def test_a_run_waiting_for_approval_continues_after_the_decision(
    client: httpx.AsyncClient, mode: str
) -> None:
    before = len(SENT)
    run_id, events = await start_run(client, "mailer", "send essay 42")
    chunks = [e.chunk for e in events]
    pending = next(c for c in chunks if c["type"] == "approval_required")
    (call,) = pending["data"]["calls"]
    assert call["name"] == "send_essay"
    assert chunks[-1]["data"]["status"] == "awaiting_approval"
    assert len(SENT) == before, "nothing ran before the approval"
    # another tenant cannot decide for this run
    other = await client.post(f"/v1/runs/{run_id}/approvals", json={"approved": [call["id"]]}, headers=AUTH_B)
    assert other.status_code == 404
    wrong = await client.post(f"/v1/runs/{run_id}/approvals", json={"approved": ["nope"]}, headers=AUTH_A)
    assert wrong.status_code == 422, "a decision for a call that is not waiting is refused"
    both = await client.post(
        f"/v1/runs/{run_id}/approvals",
        json={"approved": [call["id"]], "rejected": {call["id"]: "no"}},
        headers=AUTH_A,
    )
    assert both.status_code == 422
    answer = await client.post(
        f"/v1/runs/{run_id}/approvals", json={"approved": [call["id"]]}, headers=AUTH_A
    )
    assert answer.status_code in (200, 202), answer.text
    last = events[-1].id
    async with client.stream(
        "GET", f"/v1/runs/{run_id}/events", headers={**AUTH_A, "Last-Event-ID": str(last)}
    ) as r:
        more, _ = await read_stream(r)
    after = [e.chunk for e in more]
    assert [e.id for e in more] == sorted({e.id for e in more}), "seq strictly increasing, no duplicate"
    assert more[0].id == last + 1, "the continuation follows the approval_required chunks without a gap"
    result = next(c for c in after if c["type"] == "tool_response")
    assert result["data"]["name"] == "send_essay"
    final = next(c for c in after if c["type"] == "final")
    assert final["data"]["output"] == "mailer: sent 42"
    assert after[-1]["data"]["status"] == "completed"
    # SENT is this (the web) process's list: in Celery mode the approved call runs on a worker
    assert SENT[before:] == ([] if mode == "celery" else ["42"]), "where the approved call ran"
    again = await client.post(f"/v1/runs/{run_id}/approvals", json={"approved": [call["id"]]}, headers=AUTH_A)
    assert again.status_code == 409, "a finished run is not waiting for approval any more"


async def test_decisions_racing_for_a_run_continue_it_once(client: httpx.AsyncClient, mode: str) -> None:
    """Five approvals sent at once for the same waiting run: one is accepted, the others get 409, and
    the approved call runs once — the continuation appears once in the stream."""
    before = len(SENT)
    run_id, events = await start_run(client, "mailer", "send essay 42")
    pending = next(e.chunk for e in events if e.chunk["type"] == "approval_required")
    (call,) = pending["data"]["calls"]
    answers = await asyncio.gather(
        *(
            client.post(f"/v1/runs/{run_id}/approvals", json={"approved": [call["id"]]}, headers=AUTH_A)
            for _ in range(5)
        )
    )
    assert sorted(answer.status_code for answer in answers) == [202, 409, 409, 409, 409]
    last = events[-1].id
    async with client.stream(
        "GET", f"/v1/runs/{run_id}/events", headers={**AUTH_A, "Last-Event-ID": str(last)}
    ) as r:
        more, _ = await read_stream(r)
    seqs = [e.id for e in more]
    assert seqs == list(range(last + 1, last + 1 + len(seqs))), "one continuation: no gap, no repeat"
    after = [e.chunk for e in more if e.chunk["type"] != "trace"]
    assert [c["type"] for c in after].count("tool_response") == 1
    assert [c["type"] for c in after].count("done") == 1
    assert after[-1]["data"]["status"] == "completed"
    await asyncio.sleep(0.3)  # a second continuation, had one started, would have sent by now
    assert len(SENT) - before == (0 if mode == "celery" else 1), "the approved call ran once"
    record = (await client.get(f"/v1/runs/{run_id}", headers=AUTH_A)).json()
    assert record["last_seq"] == seqs[-1], "nothing was written after the one continuation ended"
