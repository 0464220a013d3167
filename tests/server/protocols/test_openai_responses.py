"""The Responses API driven by the official ``openai`` SDK against the live server, in every mode
(embedded, Redis, Celery workers): agents as models, streaming, the client's tools continuing the
same run, retrieve, resume by sequence number, cancel, and errors in OpenAI's shape."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest
from openai import OpenAI

from tests.server.agents import SECRET, WEATHER_TOOL
from tests.server.conftest import LiveServer
from tests.server.sse import KEY_A, KEY_B

WEATHER = [
    {
        "type": "function",
        "name": WEATHER_TOOL,
        "description": "The weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    }
]


@pytest.fixture
def client(live: LiveServer) -> Iterator[OpenAI]:
    with OpenAI(base_url=f"{live.url}/v1", api_key=KEY_A, max_retries=0, timeout=30) as made:
        yield made


def test_an_agent_answers_as_a_model_with_its_reasoning_and_the_requests_instructions(client: OpenAI) -> None:
    response = client.responses.create(model="concierge", input="hi", instructions="Talk like a pirate.")
    assert response.status == "completed"
    assert response.output_text == "Hello! You said: hi Arr!"
    assert [item.type for item in response.output] == ["reasoning", "message"]
    reasoning = response.output[0]
    assert reasoning.type == "reasoning"
    assert reasoning.summary[0].text == "A greeting is due."
    assert response.model == "concierge"
    assert response.usage is not None
    assert response.usage.output_tokens > 0
    assert response.id.startswith("resp_")


def test_a_stream_has_the_event_sequence_and_the_final_response(client: OpenAI) -> None:
    with client.responses.stream(model="concierge", input="hey") as stream:
        events = list(stream)
        final = stream.get_final_response()
    types = [event.type for event in events]
    assert types[:2] == ["response.created", "response.in_progress"]
    assert types[-1] == "response.completed"
    for expected in (
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.reasoning_summary_text.delta",
    ):
        assert expected in types
    assert [event.sequence_number for event in events] == list(range(len(events)))
    deltas = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert deltas == final.output_text == "Hello! You said: hey"


def test_client_tools_end_the_response_and_its_outputs_continue_the_same_run(client: OpenAI) -> None:
    first = client.responses.create(model="concierge", input="What is the weather?", tools=WEATHER)  # type: ignore[arg-type]
    assert first.status == "completed"
    kinds = [item.type for item in first.output]
    assert kinds[-1] == "function_call", kinds
    call = first.output[-1]
    assert call.type == "function_call"
    assert (call.name, json.loads(call.arguments)) == (WEATHER_TOOL, {"city": "Kyoto"})
    own = [item for item in first.output if item.type == "mcp_call"]
    assert [(item.name, item.output, item.status) for item in own] == [("tick", "tick 1", "completed")]

    second = client.responses.create(
        model="concierge",
        previous_response_id=first.id,
        input=[{"type": "function_call_output", "call_id": call.call_id, "output": "sunny"}],
        tools=WEATHER,  # type: ignore[arg-type]
    )
    assert second.status == "completed"
    assert second.output_text == "Kyoto is sunny"
    assert second.previous_response_id == first.id
    assert second.id.startswith(first.id + "_"), "the same run goes on"
    # the first response is still what it was
    again = client.responses.retrieve(first.id)
    assert [item.type for item in again.output] == kinds


def test_references_to_a_runs_items_continue_that_run(client: OpenAI, live: LiveServer) -> None:
    """What a client that keeps its history by reference sends (the Vercel AI SDK with ``store``):
    the earlier items as ``item_reference``, then the tool outputs."""
    first = client.responses.create(model="concierge", input="What is the weather?", tools=WEATHER)  # type: ignore[arg-type]
    call = next(item for item in first.output if item.type == "function_call")
    history: list[Any] = [
        {"role": "user", "content": "What is the weather?"},
        *({"type": "item_reference", "id": item.id} for item in first.output),
        {"type": "function_call_output", "call_id": call.call_id, "output": "foggy"},
    ]
    second = client.responses.create(model="concierge", input=history, tools=WEATHER)  # type: ignore[arg-type]
    assert second.output_text == "Kyoto is foggy"
    assert second.id.startswith(first.id + "_"), "the same run goes on"
    with (
        OpenAI(base_url=f"{live.url}/v1", api_key=KEY_B, max_retries=0) as other,
        pytest.raises(openai.NotFoundError),
    ):
        other.responses.create(model="concierge", input=history, tools=WEATHER)  # type: ignore[arg-type]


def test_a_stream_with_client_tools_and_its_continuation(client: OpenAI) -> None:
    with client.responses.stream(model="concierge", input="Weather?", tools=WEATHER) as stream:  # type: ignore[arg-type]
        first = stream.get_final_response()
    call = next(item for item in first.output if item.type == "function_call")
    with client.responses.stream(
        model="concierge",
        previous_response_id=first.id,
        input=[{"type": "function_call_output", "call_id": call.call_id, "output": "rainy"}],
    ) as stream:
        second = stream.get_final_response()
    assert second.output_text == "Kyoto is rainy"


def test_a_completed_response_is_continued_by_the_next_question(client: OpenAI) -> None:
    first = client.responses.create(model="concierge", input="one")
    second = client.responses.create(model="concierge", input="two", previous_response_id=first.id)
    assert second.output_text == "Hello! You said: two"
    assert second.id.startswith(first.id + "_"), "the same run goes on"
    with client.responses.create(model="slow", input="30", stream=True) as running:
        going = next(iter(running)).response.id
        with pytest.raises(openai.ConflictError) as busy:
            client.responses.create(model="slow", input="more", previous_response_id=going)
        assert busy.value.body["code"] == "conflict"  # type: ignore[index]
        client.responses.cancel(going)


def test_a_conversation_goes_on_past_the_step_limit_of_one_turn(client: OpenAI) -> None:
    """Each next question is a turn of its own: the loop's ``max_steps`` (10) counts per turn."""
    response = client.responses.create(model="concierge", input="turn 0")
    for turn in range(1, 12):
        response = client.responses.create(
            model="concierge", input=f"turn {turn}", previous_response_id=response.id
        )
        assert response.status == "completed", response.error
    assert response.output_text == "Hello! You said: turn 11"


def test_a_continuation_must_answer_the_calls_waiting(client: OpenAI) -> None:
    first = client.responses.create(model="concierge", input="Weather?", tools=WEATHER)  # type: ignore[arg-type]
    with pytest.raises(openai.BadRequestError) as refused:
        client.responses.create(
            model="concierge",
            previous_response_id=first.id,
            input=[{"type": "function_call_output", "call_id": "call_nobody_made", "output": "x"}],
        )
    assert refused.value.body["code"] == "invalid_request"  # type: ignore[index]
    assert "not waiting" in refused.value.body["message"]  # type: ignore[index]


def test_retrieve_and_a_resumed_stream_give_the_same_events_without_gap_or_duplicate(client: OpenAI) -> None:
    with client.responses.create(model="concierge", input="resume me", stream=True) as stream:
        original = [event.to_dict() for event in stream]
    final = client.responses.retrieve(str(original[-1]["response"]["id"]))
    assert final.status == "completed"
    assert final.output_text == "Hello! You said: resume me"
    assert final.to_dict()["output"] == original[-1]["response"]["output"]
    cut = 4
    resumed = [
        event.to_dict() for event in client.responses.retrieve(final.id, stream=True, starting_after=cut)
    ]
    assert resumed == original[cut + 1 :]
    whole = [event.to_dict() for event in client.responses.retrieve(final.id, stream=True)]
    assert whole == original


def test_a_response_can_be_cancelled(client: OpenAI) -> None:
    with client.responses.create(model="slow", input="30", stream=True) as stream:
        created = next(iter(stream))
        assert created.type == "response.created"
        cancelled = client.responses.cancel(created.response.id)
    assert cancelled.status == "cancelled"
    assert client.responses.retrieve(created.response.id).status == "cancelled"


def test_a_json_schema_and_an_output_cap_reach_the_model(client: OpenAI) -> None:
    response = client.responses.create(
        model="concierge",
        input="json",
        max_output_tokens=321,
        text={
            "format": {
                "type": "json_schema",
                "name": "greeting",
                "schema": {"type": "object", "properties": {"greeting": {"type": "string"}}},
            }
        },
    )
    assert json.loads(response.output_text) == {"greeting": "hello json", "cap": 321}
    assert response.max_output_tokens == 321


def test_input_items_carry_a_conversation(client: OpenAI) -> None:
    response = client.responses.create(
        model="concierge",
        input=[
            {"role": "developer", "content": "You are a pirate."},
            {"role": "user", "content": "first"},
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": [{"type": "input_text", "text": "second"}]},
        ],
    )
    assert response.output_text == "Hello! You said: second Arr!"


def test_errors_are_in_openais_shape(client: OpenAI, live: LiveServer) -> None:
    with pytest.raises(openai.NotFoundError) as unknown:
        client.responses.create(model="no-such-agent", input="x")
    assert unknown.value.body["code"] == "model_not_found"  # type: ignore[index]
    with pytest.raises(openai.BadRequestError) as image:
        client.responses.create(
            model="concierge",
            input=[{"role": "user", "content": [{"type": "input_image", "image_url": "https://x/y.png"}]}],
        )
    assert image.value.body["type"] == "invalid_request_error"  # type: ignore[index]
    with pytest.raises(openai.BadRequestError):
        client.responses.create(model="concierge", input="x", tools=[{"type": "web_search"}])
    with (
        OpenAI(base_url=f"{live.url}/v1", api_key="kw-wrong", max_retries=0) as stranger,
        pytest.raises(openai.AuthenticationError) as denied,
    ):
        stranger.responses.create(model="concierge", input="x")
    assert denied.value.body["code"] == "invalid_api_key"  # type: ignore[index]
    with pytest.raises(openai.UnprocessableEntityError) as invalid:
        client.responses.create(model="concierge", input=7)  # type: ignore[arg-type]
    assert invalid.value.body["type"] == "invalid_request_error"  # type: ignore[index]
    big = httpx.post(
        f"{live.url}/v1/responses",
        headers={"Authorization": f"Bearer {KEY_A}"},
        json={"model": "concierge", "input": "x" * 100_000},
    )
    assert big.status_code == 413
    assert big.json()["error"]["code"] == "request_too_large"


def test_another_tenants_response_is_a_404_exactly_like_a_missing_one(
    client: OpenAI, live: LiveServer
) -> None:
    mine = client.responses.create(model="concierge", input="mine")
    missing = "resp_" + "0" * 32
    bodies: list[Any] = []
    with OpenAI(base_url=f"{live.url}/v1", api_key=KEY_B, max_retries=0) as other:
        for response_id in (mine.id, missing):
            with pytest.raises(openai.NotFoundError) as refused:
                other.responses.retrieve(response_id)
            bodies.append(refused.value.body)
            with pytest.raises(openai.NotFoundError):
                other.responses.cancel(response_id)
            with pytest.raises(openai.NotFoundError):
                other.responses.create(model="concierge", input="x", previous_response_id=response_id)
    assert bodies[0] == bodies[1]
    for malformed in ("not-a-response", f"{mine.id}_99", "resp_" + "0" * 31):
        with pytest.raises(openai.NotFoundError):
            client.responses.retrieve(malformed)
    assert client.responses.retrieve(mine.id).output_text == "Hello! You said: mine"


def test_a_run_waiting_for_a_persons_approval_ends_the_response_incomplete(client: OpenAI) -> None:
    response = client.responses.create(model="mailer", input="send essay 42")
    assert response.status == "incomplete"
    assert [item.type for item in response.output] == []
    with pytest.raises(openai.ConflictError):
        client.responses.create(model="mailer", input="go on", previous_response_id=response.id)


def test_metadata_is_kept_with_the_response(client: OpenAI) -> None:
    made = client.responses.create(model="concierge", input="hi", metadata={"ticket": "T-1"})
    assert made.metadata == {"ticket": "T-1"}
    assert client.responses.retrieve(made.id).metadata == {"ticket": "T-1"}
    with client.responses.stream(model="concierge", input="hey", metadata={"ticket": "T-2"}) as stream:
        final = stream.get_final_response()
    assert final.metadata == {"ticket": "T-2"}
    assert client.responses.retrieve(final.id).metadata == {"ticket": "T-2"}
    resumed = list(client.responses.retrieve(final.id, stream=True))
    assert resumed[-1].type == "response.completed"
    assert resumed[-1].response.metadata == {"ticket": "T-2"}
    # each response of a run keeps its own
    after = client.responses.create(
        model="concierge", input="again", previous_response_id=made.id, metadata={"ticket": "T-3"}
    )
    assert client.responses.retrieve(after.id).metadata == {"ticket": "T-3"}
    assert client.responses.retrieve(made.id).metadata == {"ticket": "T-1"}
    assert client.responses.create(model="concierge", input="plain").metadata == {}


def test_a_response_not_stored_is_answered_but_not_kept(client: OpenAI) -> None:
    made = client.responses.create(model="concierge", input="hi", store=False)
    assert made.output_text == "Hello! You said: hi"
    assert made.store is False
    with pytest.raises(openai.NotFoundError) as gone:
        client.responses.retrieve(made.id)
    assert gone.value.body["code"] == "not_found"  # type: ignore[index]
    assert "store: false" in gone.value.body["message"]  # type: ignore[index]
    with pytest.raises(openai.NotFoundError):
        list(client.responses.retrieve(made.id, stream=True))
    with pytest.raises(openai.BadRequestError) as refused:
        client.responses.create(model="concierge", input="again", previous_response_id=made.id)
    assert refused.value.body["code"] == "previous_response_not_found"  # type: ignore[index]
    assert refused.value.body["param"] == "previous_response_id"  # type: ignore[index]
    with client.responses.stream(model="concierge", input="hey", store=False) as stream:
        types = [event.type for event in stream]
        final = stream.get_final_response()
    assert types[0] == "response.created"
    assert types[-1] == "response.completed"
    assert final.output_text == "Hello! You said: hey"
    assert final.store is False
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(final.id)
    kept = client.responses.create(model="concierge", input="kept", store=True)
    assert client.responses.retrieve(kept.id).store is True


def test_a_failed_run_is_an_error_whose_status_says_whose_failure_it_is(client: OpenAI) -> None:
    with pytest.raises(openai.InternalServerError) as upstream:
        client.responses.create(model="boom", input="x")
    assert upstream.value.status_code == 502
    assert upstream.value.body["type"] == "server_error"  # type: ignore[index]
    assert upstream.value.body["code"] == "upstream_error"  # type: ignore[index]
    assert "LLMConnectionError" in upstream.value.body["message"]  # type: ignore[index]
    assert SECRET not in json.dumps(upstream.value.body)
    assert upstream.value.response.headers["x-should-retry"] == "false"
    run_id = upstream.value.response.headers["X-Run-Id"]
    failed = client.responses.retrieve(f"resp_{run_id}")  # the failed response stays retrievable
    assert failed.status == "failed"
    assert failed.error is not None
    with pytest.raises(openai.BadRequestError) as guarded:
        client.responses.create(model="blocked", input="x")
    assert guarded.value.body["code"] == "guardrail_violation"  # type: ignore[index]
    with pytest.raises(openai.InternalServerError) as crashed:
        client.responses.create(model="crash", input="x")
    assert crashed.value.status_code == 500
    assert crashed.value.body["code"] == "server_error"  # type: ignore[index]
    assert SECRET not in json.dumps(crashed.value.body)
    with client.responses.stream(model="boom", input="x") as stream:  # a stream still ends with its event
        types = [event.type for event in stream]
    assert types[-1] == "response.failed"
