"""How one turn's A2A events become answer text (``kanawa.a2a.client``), for the event shapes the
test server does not send: a direct ``Message`` answer, a task snapshot with its artifacts, two
artifacts, an ``input-required`` question, and a failed task — built as the SDK's own protobuf types."""

from __future__ import annotations

import pytest
from a2a.types.a2a_pb2 import (
    Artifact,
    Message,
    Part,
    Role,
    StreamResponse,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)

from kanawa.a2a.client import A2AConnection, _Translation, public_url
from kanawa.llm.errors import LLMError


def _texts(events: list[StreamResponse]) -> str:
    translate = _Translation("http://agent.test/")
    pieces = [piece.text for event in events for piece in translate(event)]
    return "".join(pieces + [piece.text for piece in translate.finish()])


def _artifact(artifact_id: str, text: str, *, append: bool = False) -> StreamResponse:
    return StreamResponse(
        artifact_update=TaskArtifactUpdateEvent(
            task_id="t1", artifact=Artifact(artifact_id=artifact_id, parts=[Part(text=text)]), append=append
        )
    )


def _status(state: int, text: str = "") -> StreamResponse:
    message = Message(role=Role.ROLE_AGENT, message_id="m", parts=[Part(text=text)]) if text else None
    status = TaskStatus(state=state, message=message) if message else TaskStatus(state=state)
    return StreamResponse(status_update=TaskStatusUpdateEvent(task_id="t1", status=status))


def test_a_direct_message_is_the_answer() -> None:
    event = StreamResponse(
        message=Message(role=Role.ROLE_AGENT, message_id="m", parts=[Part(text="hi there")])
    )
    assert _texts([event]) == "hi there"


def test_a_task_snapshot_with_artifacts_is_the_answer() -> None:
    task = Task(
        id="t1",
        status=TaskStatus(state=TaskState.TASK_STATE_COMPLETED),
        artifacts=[Artifact(artifact_id="a", parts=[Part(text="whole answer")])],
    )
    assert _texts([StreamResponse(task=task)]) == "whole answer"


def test_a_second_artifact_starts_on_a_new_line() -> None:
    events = [_artifact("a", "first"), _artifact("a", " part", append=True), _artifact("b", "second")]
    assert _texts(events) == "first part\nsecond"


def test_a_status_message_answers_when_there_are_no_artifacts() -> None:
    events = [
        _status(TaskState.TASK_STATE_WORKING),
        _status(TaskState.TASK_STATE_INPUT_REQUIRED, "Which city?"),
    ]
    assert _texts(events) == "Which city?"


def test_a_status_message_is_not_added_to_artifacts() -> None:
    events = [_artifact("a", "answer"), _status(TaskState.TASK_STATE_COMPLETED, "done")]
    assert _texts(events) == "answer"


@pytest.mark.parametrize(
    ("state", "said"),
    [
        (TaskState.TASK_STATE_FAILED, "failed"),
        (TaskState.TASK_STATE_REJECTED, "rejected the request"),
        (TaskState.TASK_STATE_CANCELED, "was canceled"),
        (TaskState.TASK_STATE_AUTH_REQUIRED, "requires authentication"),
    ],
)
def test_a_task_that_ends_without_an_answer_raises(state: int, said: str) -> None:
    with pytest.raises(LLMError, match=said):
        _texts([_artifact("a", "partial"), _status(state, "why")])


def test_errors_show_the_url_without_credentials() -> None:
    assert public_url("https://user:pw@agent.test:8443/a2a?token=abc#x") == "https://agent.test:8443/a2a"
    connection = A2AConnection(
        "https://user:pw@agent.test/a2a?token=abc", bearer_token="tok-0123456789abcdef"
    )
    assert connection.shown_url == "https://agent.test/a2a"
