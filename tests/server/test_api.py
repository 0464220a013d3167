"""The streaming API over real HTTP (uvicorn on loopback, httpx), in embedded and Redis modes.

Seed 002 §5-1: chunks ``{time, agent, type, data, seq}``, SSE ``id`` = seq, strictly increasing; §7:
failures become ``type:"error"`` chunks with safe messages; §8: integration tests of order and deltas.
"""

from __future__ import annotations

import json

import httpx

from tests.server.agents import SECRET, STORY
from tests.server.conftest import wait_for
from tests.server.sse import AUTH_A, AUTH_B, read_stream, resume, start_run


async def test_agents_are_listed(client: httpx.AsyncClient) -> None:
    response = await client.get("/v1/agents", headers=AUTH_A)
    assert response.status_code == 200
    names = {agent["name"]: agent for agent in response.json()["agents"]}
    assert {"calc", "echo", "story"} <= set(names)
    assert names["calc"]["tools"] == ["calculator"]


async def test_seed_5_1_chunk_fields_and_seq_strictly_increasing(client: httpx.AsyncClient) -> None:
    run_id, events = await start_run(client, "calc", "What is 2+3?")
    assert len(run_id) == 32
    seqs = [e.id for e in events]
    assert seqs == list(range(1, len(events) + 1))
    for event in events:
        assert set(event.chunk) == {"time", "agent", "type", "data", "seq"}
        assert event.chunk["seq"] == event.id
        assert event.chunk["time"].endswith("Z")
    types = [e.chunk["type"] for e in events]
    assert types[-1] == "done"
    assert {"delta", "tool_call", "tool_response", "usage"} <= set(types)
    assert types.index("tool_call") < types.index("tool_response") < types.index("final")
    text = "".join(e.chunk["data"]["text"] for e in events if e.chunk["type"] == "delta")
    assert text == "The answer is 5."
    response = next(e.chunk for e in events if e.chunk["type"] == "tool_response")
    assert response["data"]["content"] == "5"
    assert response["data"]["is_error"] is False
    usage = next(e.chunk for e in events if e.chunk["type"] == "usage")
    assert usage["data"]["requests"] == 2
    assert events[-1].chunk["data"] == {
        "status": "completed",
        "termination_reason": "completed",
        "cost_usd": None,
    }


async def test_status_after_the_run(client: httpx.AsyncClient) -> None:
    run_id, events = await start_run(client, "echo", "hello there")
    info = (await client.get(f"/v1/runs/{run_id}", headers=AUTH_A)).json()
    assert info["status"] == "completed"
    assert info["last_seq"] == len(events)
    listed = (await client.get("/v1/runs", headers=AUTH_A)).json()["runs"]
    assert run_id in [run["id"] for run in listed]


async def test_resume_after_last_event_id_has_no_gap_and_no_duplicate(client: httpx.AsyncClient) -> None:
    run_id, events = await start_run(client, "story", "go")
    for cut in (0, 1, len(events) // 2, len(events) - 1, len(events)):
        rest = await resume(client, run_id, cut) if cut < len(events) else []
        assert [e.id for e in rest] == list(range(cut + 1, len(events) + 1))
        assert [e.chunk for e in events[:cut]] + [e.chunk for e in rest] == [e.chunk for e in events]


async def test_resume_with_after_query_parameter(client: httpx.AsyncClient) -> None:
    run_id, events = await start_run(client, "echo", "abc")
    async with client.stream("GET", f"/v1/runs/{run_id}/events?after=2", headers=AUTH_A) as r:
        rest, _ = await read_stream(r)
    assert [e.id for e in rest] == list(range(3, len(events) + 1))


async def test_bad_last_event_id_is_400(client: httpx.AsyncClient) -> None:
    run_id, _ = await start_run(client, "echo", "abc")
    response = await client.get(f"/v1/runs/{run_id}/events", headers={**AUTH_A, "Last-Event-ID": "abc"})
    assert response.status_code == 400
    response = await client.get(f"/v1/runs/{run_id}/events", headers={**AUTH_A, "Last-Event-ID": "-3"})
    assert response.status_code == 400


async def test_client_disconnect_does_not_cancel_the_run(client: httpx.AsyncClient) -> None:
    async with client.stream(
        "POST", "/v1/runs", json={"agent": "slow", "input": "0.05"}, headers=AUTH_A
    ) as r:
        run_id = r.headers["x-run-id"]
        first, _ = await read_stream(r, cut_after_bytes=10)  # the connection drops almost at once
    assert first == []

    async def finished() -> bool:
        info = (await client.get(f"/v1/runs/{run_id}", headers=AUTH_A)).json()
        return bool(info["status"] == "completed")

    await wait_for(finished)
    events = await resume(client, run_id, 0)
    assert events[-1].chunk["data"]["status"] == "completed"
    assert "".join(e.chunk["data"].get("text", "") for e in events if e.chunk["type"] == "delta") == (
        "slow and steady"
    )


async def test_keep_alive_pings_on_an_idle_stream(client: httpx.AsyncClient) -> None:
    async with client.stream("POST", "/v1/runs", json={"agent": "slow", "input": "0.3"}, headers=AUTH_A) as r:
        events, pings = await read_stream(r)
    assert events[-1].chunk["type"] == "done"
    assert pings >= 1


async def test_cancel_ends_the_stream_with_a_cancelled_done_chunk(client: httpx.AsyncClient) -> None:
    async with client.stream("POST", "/v1/runs", json={"agent": "slow", "input": "30"}, headers=AUTH_A) as r:
        run_id = r.headers["x-run-id"]
        cancel = await client.post(f"/v1/runs/{run_id}/cancel", headers=AUTH_A)
        assert cancel.status_code == 202
        events, _ = await read_stream(r)
    assert events[-1].chunk["type"] == "done"
    assert events[-1].chunk["data"]["status"] == "cancelled"
    info = (await client.get(f"/v1/runs/{run_id}", headers=AUTH_A)).json()
    assert info["status"] == "cancelled"


async def test_seed_7_provider_failure_becomes_an_error_chunk_without_the_secret(
    client: httpx.AsyncClient,
) -> None:
    async with client.stream("POST", "/v1/runs", json={"agent": "boom", "input": "x"}, headers=AUTH_A) as r:
        raw = await r.aread()
    assert SECRET.encode() not in raw
    from tests.server.sse import parse_blocks

    events, _, _ = parse_blocks(raw)
    error = next(e.chunk for e in events if e.chunk["type"] == "error")
    assert error["data"]["code"] == "LLMCallFailed"
    assert "model request" in error["data"]["message"]
    assert events[-1].chunk["data"]["status"] == "failed"


async def test_seed_7_internal_errors_are_reported_without_details(client: httpx.AsyncClient) -> None:
    async with client.stream("POST", "/v1/runs", json={"agent": "crash", "input": "x"}, headers=AUTH_A) as r:
        raw = await r.aread()
    assert SECRET.encode() not in raw
    assert b"Traceback" not in raw
    from tests.server.sse import parse_blocks

    events, _, _ = parse_blocks(raw)
    error = next(e.chunk for e in events if e.chunk["type"] == "error")
    assert error["data"] == {"code": "internal_error", "message": "the run failed with an internal error"}


async def test_seed_7_tool_failure_is_a_tool_response_and_leaks_nothing(client: httpx.AsyncClient) -> None:
    async with client.stream("POST", "/v1/runs", json={"agent": "leak", "input": "x"}, headers=AUTH_A) as r:
        raw = await r.aread()
    assert SECRET.encode() not in raw
    assert b'"is_error":true' in raw
    assert b'"error_kind":"execution_error"' in raw


async def test_unknown_agent_is_404_and_bad_bodies_are_422(client: httpx.AsyncClient) -> None:
    response = await client.post("/v1/runs", json={"agent": "nobody", "input": "x"}, headers=AUTH_A)
    assert response.status_code == 404
    response = await client.post("/v1/runs", json={"agent": "echo"}, headers=AUTH_A)
    assert response.status_code == 422
    response = await client.post("/v1/runs", content=b"{not json", headers=AUTH_A)
    assert response.status_code == 422


async def test_request_size_limit_is_413(client: httpx.AsyncClient) -> None:
    body = json.dumps({"agent": "echo", "input": "x" * 100_000})
    response = await client.post(
        "/v1/runs", content=body, headers={**AUTH_A, "content-type": "application/json"}
    )
    assert response.status_code == 413

    async def chunked() -> object:
        for _ in range(100):
            yield b"x" * 1024

    response = await client.post("/v1/runs", content=chunked(), headers=AUTH_A)  # type: ignore[arg-type]
    assert response.status_code == 413


async def test_the_story_streams_its_text_in_order(client: httpx.AsyncClient) -> None:
    _, events = await start_run(client, "story", "go")
    text = "".join(e.chunk["data"]["text"] for e in events if e.chunk["type"] == "delta")
    assert text == STORY
    ticks = [e.chunk["data"]["content"] for e in events if e.chunk["type"] == "tool_response"]
    assert ticks == ["tick 0", "tick 1", "tick 2"]


async def test_whoami_names_the_tenant_of_the_key(client: httpx.AsyncClient) -> None:
    """What a page shows as the active tenant (key fixation, issue 20 #7)."""
    assert (await client.get("/v1/whoami", headers=AUTH_A)).json() == {"tenant": "alpha"}
    assert (await client.get("/v1/whoami", headers=AUTH_B)).json() == {"tenant": "beta"}
    unknown = await client.get("/v1/whoami", headers={"Authorization": "Bearer kw-nobody"})
    assert unknown.status_code == 401


async def test_openapi_is_published(client: httpx.AsyncClient) -> None:
    spec = (await client.get("/openapi.json")).json()
    assert {"/v1/agents", "/v1/runs", "/v1/runs/{run_id}", "/v1/runs/{run_id}/events"} <= set(spec["paths"])
    whoami = spec["paths"]["/v1/whoami"]["get"]
    assert whoami["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/WhoAmI"
    }
    assert {"401", "429"} <= set(whoami["responses"])
    assert "/v1/runs/{run_id}/cancel" in spec["paths"]
    assert "/v1/runs/{run_id}/approvals" in spec["paths"]
    assert spec["components"]["securitySchemes"]


async def test_timeline_pages_are_served(client: httpx.AsyncClient) -> None:
    response = await client.get("/runs")
    assert response.status_code == 200
    assert "<title>kanawa" in response.text
    response = await client.get("/runs/" + "0" * 32)
    assert response.status_code == 200
