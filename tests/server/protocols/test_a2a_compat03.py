"""A2A 0.3's method names on the same endpoint, driven by the official ``a2a-sdk`` client speaking 0.3
(its ``CompatJsonRpcTransport``, chosen from the card's 0.3 fields) on loopback, in memory and with
Redis: ``message/send``, ``message/stream`` (each event a valid 0.3 event on the wire), ``tasks/get``,
``tasks/cancel``, ``tasks/resubscribe`` after a cut (nothing lost, nothing twice) and after a
``Last-Event-ID``, an approval wait as ``input-required``, and the bearer key deciding the tenant
(another tenant's task answers exactly as a missing one)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from a2a.client import ClientConfig, ClientFactory
from a2a.client.card_resolver import A2ACardResolver
from a2a.compat.v0_3 import types as v03
from a2a.compat.v0_3.jsonrpc_transport import CompatJsonRpcTransport
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    GetTaskRequest,
    StreamResponse,
    SubscribeToTaskRequest,
    TaskState,
)
from a2a.utils.errors import TaskNotCancelableError, TaskNotFoundError, UnsupportedOperationError

from tests.server.agents import STORY
from tests.server.conftest import LiveServer
from tests.server.protocols.a2a_agents import GATES, TALE
from tests.server.protocols.a2a_support import a2a03_client, ask, serve, text_of
from tests.server.sse import KEY_A, KEY_B

S = TaskState


@pytest.fixture(scope="module", params=["embedded", "redis"])
def live(request: pytest.FixtureRequest) -> Iterator[LiveServer]:
    redis = request.getfixturevalue("redis_url") if request.param == "redis" else None
    yield from serve(request.param, redis)


def _rpc(method: str, params: dict[str, Any], rpc_id: int | str = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rpc_id, "method": method, "params": params}


def _message(text: str) -> dict[str, Any]:
    return {
        "kind": "message",
        "messageId": uuid.uuid4().hex,
        "role": "user",
        "parts": [{"kind": "text", "text": text}],
    }


async def test_the_card_advertises_the_same_endpoint_for_0_3_and_1_0(live: LiveServer) -> None:
    endpoint = f"{live.url}/a2a/concierge"
    async with httpx.AsyncClient() as http:
        raw = (await http.get(f"{endpoint}/.well-known/agent-card.json")).json()
        card = await A2ACardResolver(http, endpoint).get_agent_card()
    legacy = v03.AgentCard.model_validate(raw)  # what a 0.3 client reads
    assert (legacy.url, legacy.protocol_version, legacy.preferred_transport) == (endpoint, "0.3", "JSONRPC")
    assert legacy.security == [{"bearer": []}]
    assert legacy.capabilities.streaming
    assert {(i.url, i.protocol_version) for i in card.supported_interfaces} == {
        (endpoint, "1.0"),
        (endpoint, "0.3"),
    }
    async with httpx.AsyncClient() as http:  # a 1.0 client still picks 1.0, a 0.3 client 0.3
        modern = ClientFactory(ClientConfig(httpx_client=http)).create(card)
        assert not isinstance(modern._transport, CompatJsonRpcTransport)  # type: ignore[attr-defined]
    async with a2a03_client(live.url, "concierge") as old:
        assert isinstance(old._transport, CompatJsonRpcTransport)  # type: ignore[attr-defined]


async def test_message_send_answers_the_completed_task(live: LiveServer) -> None:
    async with a2a03_client(live.url, "concierge", streaming=False) as client:
        events = [event async for event in client.send_message(ask("hi"))]
        task = events[-1].task
        assert task.status.state == S.TASK_STATE_COMPLETED
        assert len(task.id) == 32
        assert text_of(events) == "Hello! You said: hi"
        got = await client.get_task(GetTaskRequest(id=task.id))
    assert got.artifacts[0].parts[0].text == "Hello! You said: hi"


async def test_message_stream_is_the_task_its_answer_in_pieces_and_its_final_status(live: LiveServer) -> None:
    async with a2a03_client(live.url, "story") as client:
        events = [event async for event in client.send_message(ask("go"))]
        kinds = [event.WhichOneof("payload") for event in events]
        assert kinds[0] == "task"
        assert events[0].task.status.state == S.TASK_STATE_WORKING
        assert kinds.count("artifact_update") > 3, "the answer arrives as it is written"
        assert events[-1].status_update.status.state == S.TASK_STATE_COMPLETED
        assert text_of(events) == STORY
        got = await client.get_task(GetTaskRequest(id=events[0].task.id))
    assert got.status.state == S.TASK_STATE_COMPLETED
    assert got.artifacts[0].parts[0].text == STORY


async def test_each_streamed_event_is_a_0_3_event_on_the_wire(live: LiveServer) -> None:
    body = _rpc("message/stream", {"message": _message("go")}, rpc_id="s-1")
    headers = {"Authorization": f"Bearer {KEY_A}"}  # no A2A-Version header: a 0.3 method is 0.3
    async with (
        httpx.AsyncClient(base_url=live.url, headers=headers, timeout=60) as http,
        http.stream("POST", "/a2a/story", json=body) as response,
    ):
        data = [json.loads(line[6:]) async for line in response.aiter_lines() if line.startswith("data: ")]
    parsed = [v03.SendStreamingMessageResponse.model_validate(event).root for event in data]
    results = [p.result for p in parsed if isinstance(p, v03.SendStreamingMessageSuccessResponse)]
    assert len(results) == len(data)
    assert {event["id"] for event in data} == {"s-1"}
    assert [r.kind for r in results][:2] == ["task", "artifact-update"]
    last = results[-1]
    assert isinstance(last, v03.TaskStatusUpdateEvent)
    assert (last.kind, last.final, last.status.state) == ("status-update", True, v03.TaskState.completed)
    pieces = [r for r in results if isinstance(r, v03.TaskArtifactUpdateEvent)]
    assert [p.append for p in pieces[:2]] == [False, True]
    assert "".join(p.artifact.parts[0].root.text for p in pieces) == STORY  # type: ignore[union-attr]


async def test_resubscribing_after_a_cut_loses_nothing_and_repeats_nothing(live: LiveServer) -> None:
    question = f"tale {uuid.uuid4().hex}"
    async with a2a03_client(live.url, "teller") as client:
        seen: list[StreamResponse] = []
        stream = client.send_message(ask(question))
        async for event in stream:
            seen.append(event)
            if sum(e.HasField("artifact_update") for e in seen) == 2:
                break  # the connection is cut mid-answer
        await stream.aclose()  # type: ignore[attr-defined]
        task_id = seen[0].task.id
        before = text_of(seen)
        assert before
        assert TALE.startswith(before)
        assert before != TALE
        resumed: list[StreamResponse] = []
        async for event in client.subscribe(SubscribeToTaskRequest(id=task_id)):
            resumed.append(event)
            if len(resumed) == 1:
                GATES[question].set()  # the run finishes only once the resubscription stands
    assert resumed[0].HasField("task"), "a resubscription starts from the task as it is"
    assert resumed[0].task.status.state == S.TASK_STATE_WORKING
    assert text_of([resumed[0]]).startswith(before)
    assert text_of(resumed) == TALE, "the snapshot and the events after it are the whole answer, once"
    assert resumed[-1].status_update.status.state == S.TASK_STATE_COMPLETED
    async with a2a03_client(live.url, "teller") as client:
        with pytest.raises(UnsupportedOperationError):  # an ended task streams nothing more
            async for _ in client.subscribe(SubscribeToTaskRequest(id=task_id)):
                pass


async def test_last_event_id_resumes_right_after_that_event(live: LiveServer) -> None:
    question = f"tale {uuid.uuid4().hex}"
    headers = {"Authorization": f"Bearer {KEY_A}", "A2A-Version": "0.3"}
    ids: list[int] = []
    async with httpx.AsyncClient(base_url=live.url, headers=headers, timeout=60) as http:
        body = _rpc("message/stream", {"message": _message(question)}, rpc_id=7)
        async with http.stream("POST", "/a2a/teller", json=body) as response:
            async for line in response.aiter_lines():
                if line.startswith("data: ") and not ids:
                    task_id = json.loads(line[6:])["result"]["id"]
                if line.startswith("id: "):
                    ids.append(int(line[4:]))
                    if len(ids) == 2:
                        break
        texts = []
        resume = _rpc("tasks/resubscribe", {"id": task_id}, rpc_id=8)
        async with http.stream(
            "POST", "/a2a/teller", json=resume, headers={"Last-Event-ID": str(ids[0])}
        ) as again:
            async for line in again.aiter_lines():
                if line.startswith("id: "):
                    assert int(line[4:]) > ids[0]
                    GATES[question].set()
                if line.startswith("data: "):
                    result = json.loads(line[6:])["result"]
                    assert result["kind"] != "task", "a resume after an event starts right after it"
                    if result["kind"] == "artifact-update":
                        assert result["append"] is True
                        texts.append(result["artifact"]["parts"][0]["text"])
    assert "".join(texts) == TALE[8:], "the events after the first one, each once"


async def test_tasks_cancel_ends_a_working_task_as_canceled(live: LiveServer) -> None:
    question = f"tale {uuid.uuid4().hex}"
    async with a2a03_client(live.url, "teller", streaming=False) as client:
        events = [event async for event in client.send_message(ask(question, immediately=True))]
        task_id = events[-1].task.id
        assert events[-1].task.status.state == S.TASK_STATE_WORKING
        canceled = await client.cancel_task(CancelTaskRequest(id=task_id))
        assert canceled.status.state == S.TASK_STATE_CANCELED
        assert (await client.get_task(GetTaskRequest(id=task_id))).status.state == S.TASK_STATE_CANCELED
        with pytest.raises(TaskNotCancelableError):
            await client.cancel_task(CancelTaskRequest(id=task_id))
    GATES[question].set()


async def test_an_approval_wait_is_input_required_and_an_answer_goes_on(live: LiveServer) -> None:
    async with a2a03_client(live.url, "mailer", streaming=False) as client:
        events = [event async for event in client.send_message(ask("send essay 42"))]
        task = events[-1].task
        assert task.status.state == S.TASK_STATE_INPUT_REQUIRED
        assert "send_essay" in task.status.message.parts[0].text
        answered = [event async for event in client.send_message(ask("approve", task_id=task.id))]
    final = answered[-1].task
    assert (final.id, final.status.state) == (task.id, S.TASK_STATE_COMPLETED)
    assert final.artifacts[0].parts[0].text == "mailer: sent 42"


async def test_the_key_decides_the_tenant_and_another_tenants_task_is_a_missing_one(live: LiveServer) -> None:
    async with a2a03_client(live.url, "echo") as client:
        events = [event async for event in client.send_message(ask("mine"))]
    task_id = events[0].task.id
    async with a2a03_client(live.url, "echo", key=KEY_B) as client:
        with pytest.raises(TaskNotFoundError):
            await client.get_task(GetTaskRequest(id=task_id))
        with pytest.raises(TaskNotFoundError):
            await client.cancel_task(CancelTaskRequest(id=task_id))
        with pytest.raises(TaskNotFoundError):
            async for _ in client.subscribe(SubscribeToTaskRequest(id=task_id)):
                pass
    answers = []
    async with httpx.AsyncClient(base_url=live.url, headers={"Authorization": f"Bearer {KEY_B}"}) as http:
        for method in ("tasks/get", "tasks/cancel", "tasks/resubscribe"):
            for named in (task_id, uuid.uuid4().hex):
                response = await http.post("/a2a/echo", json=_rpc(method, {"id": named}))
                answers.append((method, response.status_code, response.content))
        sent = await http.post(
            "/a2a/echo", json=_rpc("message/send", {"message": {**_message("x"), "taskId": task_id}})
        )
    for theirs, missing in zip(answers[::2], answers[1::2], strict=True):
        assert theirs == missing, "another tenant's task answers byte for byte as a missing one"
    assert json.loads(answers[0][2])["error"]["code"] == -32001
    assert sent.json()["error"]["code"] == -32001, "a message to another tenant's task names no task"
    async with a2a03_client(live.url, "story") as client:  # the same id under another agent: missing
        with pytest.raises(TaskNotFoundError):
            await client.get_task(GetTaskRequest(id=task_id))


async def test_a_header_naming_the_other_version_is_refused_with_a_json_rpc_error(live: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=live.url, headers={"Authorization": f"Bearer {KEY_A}"}) as http:
        for method, version in (
            ("tasks/get", "1.0"),
            ("tasks/resubscribe", "1.0"),
            ("GetTask", "0.3"),
            ("SubscribeToTask", "0.3"),
        ):
            answer = await http.post(
                "/a2a/echo", json=_rpc(method, {"id": uuid.uuid4().hex}), headers={"A2A-Version": version}
            )
            assert answer.status_code == 200
            error = answer.json()["error"]
            assert "version" in error["message"].lower(), (method, error)
        unversioned = await http.post("/a2a/echo", json=_rpc("tasks/get", {"id": uuid.uuid4().hex}))
    assert unversioned.json()["error"]["code"] == -32001, "no header: a 0.3 method is taken as 0.3"
