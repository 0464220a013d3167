"""Chat Completions and the model list driven by the official ``openai`` SDK against the live server,
in every mode: answers, streams with usage last, the client's tools round-tripped with ``role: "tool"``
messages, and errors in OpenAI's shape."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import openai
import pytest
from openai import OpenAI

from tests.server.agents import SECRET, WEATHER_TOOL
from tests.server.conftest import LiveServer
from tests.server.sse import KEY_A

WEATHER: list[Any] = [
    {
        "type": "function",
        "function": {
            "name": WEATHER_TOOL,
            "description": "The weather in a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]


@pytest.fixture
def client(live: LiveServer) -> Iterator[OpenAI]:
    with OpenAI(base_url=f"{live.url}/v1", api_key=KEY_A, max_retries=0, timeout=30) as made:
        yield made


def test_a_completion_with_the_system_message_as_instructions(client: OpenAI) -> None:
    completion = client.chat.completions.create(
        model="concierge",
        messages=[{"role": "system", "content": "Be a pirate."}, {"role": "user", "content": "ahoy"}],
    )
    choice = completion.choices[0]
    assert choice.message.content == "Hello! You said: ahoy Arr!"
    assert choice.finish_reason == "stop"
    assert completion.usage is not None
    assert completion.usage.completion_tokens > 0
    assert completion.model == "concierge"


def test_a_stream_ends_with_the_usage_when_asked(client: OpenAI) -> None:
    chunks = list(
        client.chat.completions.create(
            model="concierge",
            messages=[{"role": "user", "content": "stream"}],
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "Hello! You said: stream"
    assert chunks[0].choices[0].delta.role == "assistant"
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].choices == []
    assert chunks[-1].usage is not None
    assert chunks[-1].usage.total_tokens > 0
    plain = list(
        client.chat.completions.create(
            model="concierge", messages=[{"role": "user", "content": "x"}], stream=True
        )
    )
    assert all(c.usage is None for c in plain)


def _round_trip(client: OpenAI, *, stream: bool) -> str:
    messages: list[Any] = [{"role": "user", "content": "Weather in Kyoto?"}]
    if stream:
        chunks = list(
            client.chat.completions.create(model="concierge", messages=messages, tools=WEATHER, stream=True)
        )
        finish = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
        calls = [call for c in chunks if c.choices for call in c.choices[0].delta.tool_calls or ()]
        assert finish == ["tool_calls"]
        call_id, name, arguments = calls[0].id, calls[0].function.name, calls[0].function.arguments  # type: ignore[union-attr]
    else:
        first = client.chat.completions.create(model="concierge", messages=messages, tools=WEATHER)
        assert first.choices[0].finish_reason == "tool_calls"
        tool_calls = first.choices[0].message.tool_calls or []
        assert len(tool_calls) == 1, "the agent's own tool is not the client's to run"
        call = tool_calls[0]
        assert call.type == "function"
        call_id, name, arguments = call.id, call.function.name, call.function.arguments
    assert (name, json.loads(arguments or "{}")) == (WEATHER_TOOL, {"city": "Kyoto"})
    messages += [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
            ],
        },
        {"role": "tool", "tool_call_id": call_id, "content": "cloudy"},
    ]
    answer = client.chat.completions.create(model="concierge", messages=messages, tools=WEATHER)
    assert answer.choices[0].finish_reason == "stop"
    return answer.choices[0].message.content or ""


def test_client_tools_round_trip(client: OpenAI) -> None:
    assert _round_trip(client, stream=False) == "Kyoto is cloudy"


def test_client_tools_round_trip_streaming(client: OpenAI) -> None:
    assert _round_trip(client, stream=True) == "Kyoto is cloudy"


def test_response_format_json_schema(client: OpenAI) -> None:
    completion = client.chat.completions.create(
        model="concierge",
        messages=[{"role": "user", "content": "json"}],
        max_completion_tokens=77,
        response_format={
            "type": "json_schema",
            "json_schema": {"name": "greeting", "schema": {"type": "object"}},
        },
    )
    assert json.loads(completion.choices[0].message.content or "") == {"greeting": "hello json", "cap": 77}


def test_models_are_the_agents(client: OpenAI) -> None:
    names = [model.id for model in client.models.list()]
    assert "concierge" in names
    assert "echo" in names
    assert client.models.retrieve("concierge").owned_by == "kanawa"
    with pytest.raises(openai.NotFoundError) as missing:
        client.models.retrieve("no-such-agent")
    assert missing.value.body["code"] == "model_not_found"  # type: ignore[index]


def test_errors_are_in_openais_shape(client: OpenAI) -> None:
    with pytest.raises(openai.NotFoundError) as unknown:
        client.chat.completions.create(model="nobody", messages=[{"role": "user", "content": "x"}])
    assert unknown.value.body["code"] == "model_not_found"  # type: ignore[index]
    with pytest.raises(openai.BadRequestError) as bad:
        client.chat.completions.create(model="concierge", messages=[{"role": "system", "content": "only"}])
    assert bad.value.body["type"] == "invalid_request_error"  # type: ignore[index]
    with pytest.raises(openai.UnprocessableEntityError):
        client.chat.completions.create(model="concierge", messages=[])


def test_a_failed_run_is_an_error_whose_status_says_whose_failure_it_is(client: OpenAI) -> None:
    ask: Any = [{"role": "user", "content": "x"}]
    with pytest.raises(openai.InternalServerError) as upstream:
        client.chat.completions.create(model="boom", messages=ask)
    assert upstream.value.status_code == 502
    assert upstream.value.body["type"] == "server_error"  # type: ignore[index]
    assert upstream.value.body["code"] == "upstream_error"  # type: ignore[index]
    assert SECRET not in json.dumps(upstream.value.body)
    assert upstream.value.response.headers["x-should-retry"] == "false"
    assert upstream.value.response.headers["X-Run-Id"]
    with pytest.raises(openai.BadRequestError) as guarded:
        client.chat.completions.create(model="blocked", messages=ask)
    assert guarded.value.body["type"] == "invalid_request_error"  # type: ignore[index]
    assert guarded.value.body["code"] == "guardrail_violation"  # type: ignore[index]
    with pytest.raises(openai.InternalServerError) as crashed:
        client.chat.completions.create(model="crash", messages=ask)
    assert crashed.value.status_code == 500
    assert crashed.value.body["code"] == "server_error"  # type: ignore[index]
    assert SECRET not in json.dumps(crashed.value.body)
    with pytest.raises(openai.ConflictError) as waiting:
        client.chat.completions.create(model="mailer", messages=[{"role": "user", "content": "send essay 7"}])
    assert waiting.value.body["code"] == "approval_required"  # type: ignore[index]
    stream = client.chat.completions.create(model="boom", messages=ask, stream=True)
    with pytest.raises(openai.APIError) as streamed:  # a stream has sent its 200: it ends with an error event
        list(stream)
    assert "LLMConnectionError" in str(streamed.value)
