"""The service under hostile requests, in every mode (embedded, Redis, Celery): resume points at or
past a run's end, out of the seq range, JSON that cannot be echoed (``NaN``, lone surrogates), and a
cancel of a run that waits for approval. Each loop and wait is bounded."""

from __future__ import annotations

import asyncio
import logging

import httpx
import pytest

from tests.server.agents import SENT
from tests.server.sse import AUTH_A, read_stream, start_run

BOUND_S = 10.0
"""The longest any request here may take: a stream held open fails the test instead of hanging."""


async def _events(client: httpx.AsyncClient, run_id: str, **kwargs: object) -> httpx.Response:
    async def go() -> httpx.Response:
        async with client.stream("GET", f"/v1/runs/{run_id}/events", **kwargs) as r:  # type: ignore[arg-type]
            await r.aread()
            return r

    return await asyncio.wait_for(go(), BOUND_S)


# ------------------------------------------------------------------ resume at or past the end (#8)


async def test_resuming_at_a_finished_runs_last_chunk_ends_at_once(client: httpx.AsyncClient) -> None:
    run_id, events = await start_run(client, "calc", "2+3?")
    last = events[-1].id
    assert events[-1].chunk["data"]["status"] == "completed"
    by_header = await _events(client, run_id, headers={**AUTH_A, "Last-Event-ID": str(last)})
    assert by_header.status_code == 204, "nothing more will come: the stream ends (EventSource stops)"
    assert by_header.content == b""
    by_query = await _events(client, run_id, params={"after": last}, headers=AUTH_A)
    assert by_query.status_code == 204
    before = await _events(client, run_id, headers={**AUTH_A, "Last-Event-ID": str(last - 1)})
    assert by_header.headers["x-run-id"] == run_id
    assert before.status_code == 200
    assert b'"type":"done"' in before.content, "one chunk before the end still gets the done chunk"


@pytest.mark.parametrize("past", [1, 2, 1000])
async def test_resuming_past_a_finished_runs_last_chunk_is_400(client: httpx.AsyncClient, past: int) -> None:
    run_id, events = await start_run(client, "calc", "2+3?")
    last = events[-1].id
    assert last is not None
    by_header = await _events(client, run_id, headers={**AUTH_A, "Last-Event-ID": str(last + past)})
    assert by_header.status_code == 400
    assert "past the run's last chunk" in by_header.json()["detail"]
    by_query = await _events(client, run_id, params={"after": last + past}, headers=AUTH_A)
    assert by_query.status_code == 400


async def test_a_run_waiting_for_approval_can_still_grow_so_a_resume_at_its_end_waits(
    client: httpx.AsyncClient,
) -> None:
    run_id, events = await start_run(client, "mailer", "send essay 42")
    assert events[-1].chunk["data"]["status"] == "awaiting_approval"
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(
            _events(client, run_id, headers={**AUTH_A, "Last-Event-ID": str(events[-1].id)}), 0.5
        )
    # one past its stored end too: a chunk sent directly may reach a client before it is stored
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(
            _events(client, run_id, headers={**AUTH_A, "Last-Event-ID": str(events[-1].id + 1)}), 0.5
        )
    await client.post(f"/v1/runs/{run_id}/cancel", headers=AUTH_A)  # leave nothing waiting


# ------------------------------------------------------------ resume points beyond any seq (#10)


@pytest.mark.parametrize(
    ("header", "after"),
    [
        ("18446744073709551616", None),  # 2**64: beyond a Redis stream id
        ("99999999999999999999", None),
        ("9223372036854775808", None),
        (None, "123456789012345678901234"),
        (None, "18446744073709551616"),
    ],
)
async def test_a_resume_point_outside_the_seq_range_is_400_in_every_store(
    client: httpx.AsyncClient, header: str | None, after: str | None
) -> None:
    run_id, _ = await start_run(client, "calc", "2+3?")
    headers = {**AUTH_A, **({"Last-Event-ID": header} if header else {})}
    params = {"after": after} if after else {}
    answer = await _events(client, run_id, headers=headers, params=params)
    assert answer.status_code == 400, answer.content[:200]


# --------------------------------------------------- NaN, Infinity and lone surrogates (#9)

BAD_RUN_BODIES = [
    b'{"agent": "calc", "input": NaN}',
    b'{"agent": "calc", "input": Infinity}',
    b'{"agent": "calc", "input": -Infinity}',
    b'{"agent": NaN, "input": "x"}',
    b'{"agent": "calc", "input": "a\\ud800b"}',
    b'{"agent": "ca\\udfffc", "input": "x"}',
    b'{"agent": "calc", "input": "x", "session_id": "s\\ud800"}',
    b'{"agent": "calc", "input": "x", "session_id": NaN}',
]


@pytest.mark.parametrize("body", BAD_RUN_BODIES)
async def test_unencodable_json_in_a_run_request_is_422_never_500(
    client: httpx.AsyncClient, body: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR):
        answer = await client.post(
            "/v1/runs", content=body, headers={**AUTH_A, "Content-Type": "application/json"}
        )
    assert answer.status_code == 422, answer.text
    detail = answer.json()["detail"]
    assert detail
    assert all({"loc", "msg", "type"} <= set(error) for error in detail)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], "no traceback in the log"


@pytest.mark.parametrize(
    "body",
    [
        b'{"approved": [NaN]}',
        b'{"approved": ["c\\ud800"]}',
        b'{"rejected": {"c\\ud800": "no"}}',
        b'{"rejected": {"c1": "n\\udc00o"}}',
        b'{"rejected": {"c1": Infinity}}',
    ],
)
async def test_unencodable_json_in_an_approval_is_422_never_500(
    client: httpx.AsyncClient, body: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    run_id, events = await start_run(client, "mailer", "send essay 42")
    assert events[-1].chunk["data"]["status"] == "awaiting_approval"
    with caplog.at_level(logging.ERROR):
        answer = await client.post(
            f"/v1/runs/{run_id}/approvals",
            content=body,
            headers={**AUTH_A, "Content-Type": "application/json"},
        )
    assert answer.status_code == 422, answer.text
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    await client.post(f"/v1/runs/{run_id}/cancel", headers=AUTH_A)


# ------------------------------------------------------- cancel a run waiting for approval (#11)


async def test_cancelling_a_run_waiting_for_approval_ends_it_and_the_gated_tool_never_runs(
    client: httpx.AsyncClient, mode: str
) -> None:
    before = len(SENT)
    run_id, events = await start_run(client, "mailer", "send essay 42")
    pending = next(e.chunk for e in events if e.chunk["type"] == "approval_required")
    (call,) = pending["data"]["calls"]
    last = events[-1].id
    assert last is not None
    cancel = await client.post(f"/v1/runs/{run_id}/cancel", headers=AUTH_A)
    assert cancel.status_code == 202
    assert cancel.json()["status"] == "cancelled"
    async with client.stream(
        "GET", f"/v1/runs/{run_id}/events", headers={**AUTH_A, "Last-Event-ID": str(last)}
    ) as r:
        assert r.status_code == 200
        more, _ = await asyncio.wait_for(read_stream(r), BOUND_S)
    assert [e.id for e in more] == [last + 1], "one chunk after the awaiting_approval done: no gap"
    assert more[0].chunk["type"] == "done"
    assert more[0].chunk["data"]["status"] == "cancelled"
    decision = await client.post(
        f"/v1/runs/{run_id}/approvals", json={"approved": [call["id"]]}, headers=AUTH_A
    )
    assert decision.status_code == 409
    again = await client.post(f"/v1/runs/{run_id}/cancel", headers=AUTH_A)
    assert again.status_code == 202
    assert again.json()["status"] == "cancelled"
    await asyncio.sleep(0.5)  # a continuation, had one started anywhere, would have written by now
    info = (await client.get(f"/v1/runs/{run_id}", headers=AUTH_A)).json()
    assert info["status"] == "cancelled"
    assert info["last_seq"] == last + 1, "nothing ran after the cancel"
    assert len(SENT) == before, "the gated tool never ran"
    ended = await _events(client, run_id, headers={**AUTH_A, "Last-Event-ID": str(last + 1)})
    assert ended.status_code == 204
