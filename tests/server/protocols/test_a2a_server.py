"""kanawa's A2A server driven by the official ``a2a-sdk`` Python client on loopback, in memory and
with Redis: the agent card, ``SendMessage``, ``SendStreamingMessage``, ``GetTask``, ``CancelTask``,
``SubscribeToTask`` after a stream was cut mid-answer (nothing lost, nothing twice), an approval
wait as ``input-required`` answered on the same task, a failed run, and the bearer key deciding the
tenant (another tenant's task answers exactly as a missing one)."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from a2a.client import A2AClientError, ClientConfig, ClientFactory
from a2a.client.card_resolver import A2ACardResolver
from a2a.client.errors import AgentCardResolutionError
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
from tests.server.protocols.a2a_support import a2a_client, ask, serve, text_of
from tests.server.sse import KEY_A, KEY_B

S = TaskState
ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module", params=["embedded", "redis"])
def live(request: pytest.FixtureRequest) -> Iterator[LiveServer]:
    redis = request.getfixturevalue("redis_url") if request.param == "redis" else None
    yield from serve(request.param, redis)


async def _stream(live: LiveServer, agent: str, text: str) -> list[StreamResponse]:
    async with a2a_client(live.url, agent) as client:
        return [event async for event in client.send_message(ask(text))]


async def test_the_card_names_the_agent_the_bearer_scheme_and_endpoint(live: LiveServer) -> None:
    """Nothing written for callers: the card names the agent, never its instructions or its tools
    (test_a2a_card.py: what a card shows and to whom)."""
    async with httpx.AsyncClient() as http:  # no key: the card is public, it says a key is needed
        card = await A2ACardResolver(http, f"{live.url}/a2a/concierge").get_agent_card()
    assert card.name == "concierge"
    assert card.description == "The kanawa agent 'concierge'."
    assert [skill.id for skill in card.skills] == ["concierge"]
    interface = card.supported_interfaces[0]
    assert (interface.url, interface.protocol_binding, interface.protocol_version) == (
        f"{live.url}/a2a/concierge",
        "JSONRPC",
        "1.0",
    )
    assert card.capabilities.streaming
    assert card.security_schemes["bearer"].http_auth_security_scheme.scheme == "Bearer"
    assert "bearer" in card.security_requirements[0].schemes
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {KEY_A}"}) as http:
        missing = await http.get(f"{live.url}/a2a/nobody/.well-known/agent-card.json")
    assert missing.status_code == 404


async def test_send_message_answers_the_completed_task(live: LiveServer) -> None:
    async with a2a_client(live.url, "concierge", streaming=False) as client:
        events = [event async for event in client.send_message(ask("hi"))]
    task = events[-1].task
    assert task.status.state == S.TASK_STATE_COMPLETED
    assert len(task.id) == 32
    assert text_of(events) == "Hello! You said: hi"


async def test_a_stream_is_the_task_its_answer_in_pieces_and_its_end(live: LiveServer) -> None:
    events = await _stream(live, "story", "go")
    kinds = [event.WhichOneof("payload") for event in events]
    assert kinds[0] == "task"
    assert events[0].task.status.state == S.TASK_STATE_WORKING
    assert events[0].task.history[0].parts[0].text == "go"
    assert kinds.count("artifact_update") > 3, "the answer arrives as it is written"
    assert kinds[-1] == "status_update"
    assert events[-1].status_update.status.state == S.TASK_STATE_COMPLETED
    task_id = events[0].task.id
    assert {e.artifact_update.task_id for e in events if e.HasField("artifact_update")} == {task_id}
    assert text_of(events) == STORY
    async with a2a_client(live.url, "story") as client:
        got = await client.get_task(GetTaskRequest(id=task_id))
    assert got.status.state == S.TASK_STATE_COMPLETED
    assert got.artifacts[0].parts[0].text == STORY


async def test_resubscribing_after_a_cut_loses_nothing_and_repeats_nothing(live: LiveServer) -> None:
    question = f"tale {uuid.uuid4().hex}"
    async with a2a_client(live.url, "teller") as client:
        seen: list[StreamResponse] = []
        stream = client.send_message(ask(question))
        async for event in stream:
            seen.append(event)
            if sum(e.HasField("artifact_update") for e in seen) == 2:
                break  # the connection is cut mid-answer
        await stream.aclose()  # type: ignore[attr-defined]
        task_id = seen[0].task.id
        before = text_of(seen)
        assert TALE.startswith(before)
        assert before
        assert before != TALE
        resumed: list[StreamResponse] = []
        async for event in client.subscribe(SubscribeToTaskRequest(id=task_id)):
            resumed.append(event)
            if len(resumed) == 1:
                GATES[question].set()  # the run finishes only once the resubscription stands
    first = resumed[0]
    assert first.HasField("task"), "a resubscription starts from the task as it is"
    assert first.task.status.state == S.TASK_STATE_WORKING
    snapshot = text_of([first])
    assert snapshot.startswith(before)
    assert text_of(resumed) == TALE, "the snapshot and the events after it are the whole answer, once"
    assert resumed[-1].status_update.status.state == S.TASK_STATE_COMPLETED
    async with a2a_client(live.url, "teller") as client:
        with pytest.raises(UnsupportedOperationError):  # an ended task streams nothing more
            async for _ in client.subscribe(SubscribeToTaskRequest(id=task_id)):
                pass


async def test_last_event_id_resumes_right_after_that_event(live: LiveServer) -> None:
    question = f"tale {uuid.uuid4().hex}"
    headers = {"Authorization": f"Bearer {KEY_A}", "A2A-Version": "1.0"}
    message = {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": question}]}
    body = {"jsonrpc": "2.0", "id": 7, "method": "SendStreamingMessage", "params": {"message": message}}
    ids: list[int] = []
    async with httpx.AsyncClient(base_url=live.url, headers=headers, timeout=60) as http:
        async with http.stream("POST", "/a2a/teller", json=body) as response:
            async for line in response.aiter_lines():
                if line.startswith("data: ") and not ids:
                    task_id = json.loads(line[6:])["result"]["task"]["id"]
                if line.startswith("id: "):
                    ids.append(int(line[4:]))
                    if len(ids) == 2:
                        break
        resume = {"jsonrpc": "2.0", "id": 8, "method": "SubscribeToTask", "params": {"id": task_id}}
        texts = []
        after = {"Last-Event-ID": str(ids[0])}
        async with http.stream("POST", "/a2a/teller", json=resume, headers=after) as again:
            async for line in again.aiter_lines():
                if line.startswith("id: "):
                    assert int(line[4:]) > ids[0]
                    GATES[question].set()
                if line.startswith("data: "):
                    result = json.loads(line[6:])["result"]
                    assert "task" not in result, "a resume after an event starts right after it"
                    if "artifactUpdate" in result:
                        texts.append(result["artifactUpdate"]["artifact"]["parts"][0]["text"])
    assert "".join(texts) == TALE[8:], "the events after the first one, each once"


async def test_cancel_ends_a_working_task_as_canceled(live: LiveServer) -> None:
    question = f"tale {uuid.uuid4().hex}"
    async with a2a_client(live.url, "teller", streaming=False) as client:
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
    async with a2a_client(live.url, "mailer", streaming=False) as client:
        events = [event async for event in client.send_message(ask("send essay 42"))]
        task = events[-1].task
        assert task.status.state == S.TASK_STATE_INPUT_REQUIRED
        assert "send_essay" in task.status.message.parts[0].text
        answered = [event async for event in client.send_message(ask("approve", task_id=task.id))]
    final = answered[-1].task
    assert final.id == task.id
    assert final.status.state == S.TASK_STATE_COMPLETED
    assert final.artifacts[0].parts[0].text == "mailer: sent 42"
    async with a2a_client(live.url, "mailer", streaming=False) as client:
        with pytest.raises(UnsupportedOperationError):  # an ended task takes no more messages
            [event async for event in client.send_message(ask("approve", task_id=task.id))]


async def test_a_failed_run_is_a_failed_task_with_its_reason(live: LiveServer) -> None:
    events = await _stream(live, "boom", "x")
    status = events[-1].status_update.status
    assert status.state == S.TASK_STATE_FAILED
    assert "LLMConnectionError" in status.message.parts[0].text
    assert "sk-proj" not in status.message.parts[0].text


async def test_the_key_decides_the_tenant_and_another_tenants_task_is_a_missing_one(live: LiveServer) -> None:
    events = await _stream(live, "echo", "mine")
    task_id = events[0].task.id
    async with a2a_client(live.url, "echo", key=KEY_B) as client:
        with pytest.raises(TaskNotFoundError):
            await client.get_task(GetTaskRequest(id=task_id))
        with pytest.raises(TaskNotFoundError):
            await client.cancel_task(CancelTaskRequest(id=task_id))
        with pytest.raises(TaskNotFoundError):
            async for _ in client.subscribe(SubscribeToTaskRequest(id=task_id)):
                pass
    answers = []
    async with httpx.AsyncClient(base_url=live.url, headers={"Authorization": f"Bearer {KEY_B}"}) as http:
        for method in ("GetTask", "CancelTask", "SubscribeToTask"):
            for named in (task_id, uuid.uuid4().hex):
                body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {"id": named}}
                response = await http.post("/a2a/echo", json=body)
                answers.append((method, response.status_code, response.content))
    for theirs, missing in zip(answers[::2], answers[1::2], strict=True):
        assert theirs == missing, "another tenant's task answers byte for byte as a missing one"
    async with a2a_client(live.url, "echo") as client:  # the same id under another agent: missing
        assert (await client.get_task(GetTaskRequest(id=task_id))).id == task_id
    async with a2a_client(live.url, "story") as client:
        with pytest.raises(TaskNotFoundError):
            await client.get_task(GetTaskRequest(id=task_id))


async def test_no_key_no_call(live: LiveServer) -> None:
    """A wrong key is refused at the card already (401), and a call with it from a card read
    without a key is refused too."""
    with pytest.raises(AgentCardResolutionError) as unread:
        async with a2a_client(live.url, "echo", key="not-a-key"):
            pass
    assert unread.value.status_code == 401
    async with httpx.AsyncClient() as http:
        card = await A2ACardResolver(http, f"{live.url}/a2a/echo").get_agent_card()
    async with httpx.AsyncClient(headers={"Authorization": "Bearer not-a-key"}) as http:
        client = ClientFactory(ClientConfig(httpx_client=http)).create(card)
        with pytest.raises(A2AClientError) as refused:
            await client.get_task(GetTaskRequest(id=uuid.uuid4().hex))
    assert "401" in str(refused.value)


def test_the_documented_python_client_runs_as_written(live: LiveServer) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "a2a_server_client.py"), f"{live.url}/a2a/echo", KEY_A],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == ["Hello!", "TASK_STATE_COMPLETED"]
