"""The OpenAI streams share kanawa's direct-send fast path (kanawa.server.http.direct): a client at
the head of a run is sent each batch's events from the run's writer, not by its own response task
reading them back — and the events are the same bytes as those translated from the stored chunks
(a resume from the start reads them back from the store and parses them).

Driven through ASGI in one process (the app, its store and the run are real; the "client" is the
``send`` callable), so which task made each send can be seen."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest

from kanawa import Agent
from kanawa.llm.testing import FunctionLLM
from kanawa.llm.testing.models import ModelRequest, Script, response_from
from kanawa.server import ServerSettings, create_app
from kanawa.types import StreamEvent, Usage

KEY = "direct-key-0123456789"
DELTAS = 60
TEXT = "".join(f"{n:07d}-" for n in range(DELTAS))  # 8 characters a delta: one delta each


class PacedLLM(FunctionLLM):
    """Each text delta in an event-loop turn of its own (as a provider's stream's reads), so a client
    that keeps up is at the head of the run between deltas."""

    async def stream(self, messages: Any, **kwargs: Any) -> AsyncIterator[StreamEvent]:  # type: ignore[override]
        async for event in super().stream(messages, **kwargs):
            if event.kind == "text_delta":
                await asyncio.sleep(0)
            yield event


def _app() -> Any:
    reply = response_from(TEXT, model="paced", usage=Usage(input_tokens=3, output_tokens=DELTAS, requests=1))

    def answer(request: ModelRequest) -> Script:
        model.requests.clear()
        return reply

    model = PacedLLM(answer)
    settings = ServerSettings(api_keys=f"{KEY}:alpha", rate_limit=0, sse_ping=600, run_buffer=1000)
    return create_app(agents={"paced": Agent("paced", "Stream.", tools=(), model=model)}, settings=settings)


@asynccontextmanager
async def _served() -> AsyncIterator[Any]:
    app = _app()
    async with app.router.lifespan_context(app):
        yield app


@dataclass
class Exchange:
    """One request's response as the server sent it: status, headers, and each body message with
    whether the run's writer sent it (:func:`_from_the_writer`)."""

    status: int = 0
    headers: dict[bytes, bytes] = field(default_factory=dict)
    bodies: list[tuple[bytes, bool]] = field(default_factory=list)

    @property
    def body(self) -> bytes:
        return b"".join(body for body, _ in self.bodies)

    def sent_by_writer(self) -> bytes:
        return b"".join(body for body, by_writer in self.bodies if by_writer)

    def sent_by_response_task(self) -> int:
        return sum(not by_writer for _, by_writer in self.bodies)


def _from_the_writer() -> bool:
    """Whether this send is made while the run's writer stores a chunk: the store offered the new
    chunks to the stream's direct sender, which sent them there and then (its ``offer`` is on the
    stack), rather than the response's own task reading them back later."""
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_qualname == "DirectSender.offer":
            return True
        frame = frame.f_back  # type: ignore[assignment]
    return False


async def _exchange(app: Any, method: str, path: str, payload: dict[str, Any] | None = None) -> Exchange:
    body = b"" if payload is None else json.dumps(payload).encode()
    raw_path, _, query = path.partition("?")
    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": raw_path,
        "raw_path": raw_path.encode(),
        "query_string": query.encode(),
        "root_path": "",
        "headers": [
            (b"host", b"127.0.0.1:8000"),
            (b"authorization", f"Bearer {KEY}".encode()),
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
        ],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
        "state": {},
    }
    out = Exchange()
    asked = False
    ended = asyncio.get_running_loop().create_future()

    async def receive() -> dict[str, Any]:
        nonlocal asked
        if not asked:
            asked = True
            return {"type": "http.request", "body": body, "more_body": False}
        await ended  # the client stays until the response has ended
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            out.status = message["status"]
            out.headers = dict(message.get("headers", ()))
        elif message["type"] == "http.response.body":
            if message.get("body"):
                out.bodies.append((message["body"], _from_the_writer()))
            if not message.get("more_body", False) and not ended.done():
                ended.set_result(None)

    response = asyncio.get_running_loop().create_task(app(scope, receive, send))
    await asyncio.wait_for(response, 30)
    if not ended.done():
        ended.set_result(None)
    return out


def _data_lines(body: bytes) -> list[str]:
    return [line[len("data: ") :] for line in body.decode().split("\n") if line.startswith("data: ")]


async def test_a_responses_stream_at_the_head_is_sent_by_the_run_writer_and_resumes_identically() -> None:
    async with _served() as app:
        live = await _exchange(
            app, "POST", "/v1/responses", {"model": "paced", "input": "go", "stream": True}
        )
        assert live.status == 200
        events = [json.loads(line) for line in _data_lines(live.body)]
        assert [event["sequence_number"] for event in events] == list(range(len(events)))
        assert events[-1]["type"] == "response.completed"
        deltas = "".join(e["delta"] for e in events if e["type"] == "response.output_text.delta")
        assert deltas == TEXT
        # the response task sent the opening events and what it caught up with, then only waited:
        # every later batch — the deltas, the closing events — went out from the run's writer
        by_writer = [json.loads(line) for line in _data_lines(live.sent_by_writer())]
        assert live.sent_by_response_task() <= 2
        assert len(by_writer) >= DELTAS // 2
        assert by_writer[-1]["type"] == "response.completed"
        # the same events translated from the stored chunks (read back and parsed): the same bytes
        response_id = events[0]["response"]["id"]
        resumed = await _exchange(app, "GET", f"/v1/responses/{response_id}?stream=true")
        assert resumed.body == live.body
        tail = await _exchange(app, "GET", f"/v1/responses/{response_id}?stream=true&starting_after=10")
        assert [json.loads(line)["sequence_number"] for line in _data_lines(tail.body)] == list(
            range(11, len(events))
        )


async def test_a_chat_stream_at_the_head_is_sent_by_the_run_writer() -> None:
    payload = {
        "model": "paced",
        "messages": [{"role": "user", "content": "go"}],
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    async with _served() as app:
        live = await _exchange(app, "POST", "/v1/chat/completions", payload)
        assert live.status == 200
        lines = _data_lines(live.body)
        assert lines[-1] == "[DONE]"
        chunks = [json.loads(line) for line in lines[:-1]]
        text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
        assert text == TEXT
        assert chunks[-1]["usage"]["completion_tokens"] == DELTAS
        assert live.sent_by_response_task() <= 2
        by_writer = _data_lines(live.sent_by_writer())
        assert len(by_writer) >= DELTAS // 2
        assert by_writer[-1] == "[DONE]"  # the end of the stream too, from the writer's batch


@pytest.mark.parametrize("path", ["/v1/responses", "/v1/chat/completions"])
async def test_an_openai_stream_error_before_the_headers_is_still_in_openais_shape(path: str) -> None:
    """The error shaping holds back only a response that starts as an error."""
    async with _served() as app:
        payload = {"model": "nobody", "input": "go", "messages": [{"role": "user", "content": "go"}]}
        refused = await _exchange(app, "POST", path, {**payload, "stream": True})
        assert refused.status == 404
        assert json.loads(refused.body)["error"]["code"] == "model_not_found"
        invalid = await _exchange(app, "POST", path, {"stream": True})
        assert invalid.status == 422
        assert json.loads(invalid.body)["error"]["type"] == "invalid_request_error"
