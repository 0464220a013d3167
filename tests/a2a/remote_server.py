"""A real A2A server in its own process, built only from the ``a2a-sdk`` server components.

``python -m tests.a2a.remote_server --port 8123 --token s3cret`` serves one agent, ``remote-echo``, on
loopback: its card at ``/.well-known/agent-card.json`` (public) and JSON-RPC at ``/`` (bearer token
required when ``--token`` is given; anything else is answered ``401`` before the SDK sees it).

The agent answers from a fake, deterministically, as a task whose answer arrives as artifact chunks:

* ``"slow ..."``   — waits 30 s before answering (client timeouts);
* ``"fail ..."``   — the task ends ``failed`` with a status message;
* anything else    — ``"remote heard: <text>"``, streamed one word per artifact chunk.
"""

from __future__ import annotations

import argparse
import asyncio

import uvicorn
from a2a.helpers import new_task_from_user_message, new_text_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
)
from starlette.applications import Starlette
from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

AGENT_NAME = "remote-echo"
ARTIFACT = "answer"


class EchoExecutor(AgentExecutor):
    """Answers each message as a task: working, the answer word by word, completed."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        message = context.message
        assert message is not None
        task = context.current_task or new_task_from_user_message(message)
        if context.current_task is None:
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.start_work()
        text = context.get_user_input()
        if text.startswith("slow"):
            await asyncio.sleep(30)
        if text.startswith("fail"):
            await updater.failed(new_text_message("the remote agent broke", task_id=task.id))
            return
        words = f"remote heard: {text}".split(" ")
        for index, word in enumerate(words):
            chunk = word if index == 0 else f" {word}"
            await updater.add_artifact(
                [new_text_part(chunk)],
                artifact_id="answer-1",
                name=ARTIFACT,
                append=index > 0,
                last_chunk=index == len(words) - 1,
            )
            await asyncio.sleep(0.01)
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        if context.task_id and context.context_id:
            await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


def agent_card(url: str) -> AgentCard:
    return AgentCard(
        name=AGENT_NAME,
        description="Repeats what it heard, word by word.",
        version="1.0.0",
        supported_interfaces=[AgentInterface(protocol_binding="JSONRPC", url=url, protocol_version="1.0")],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="echo", name="echo", description="Repeats the input.", tags=["test"])],
    )


class BearerGate(BaseHTTPMiddleware):
    """``401`` for a JSON-RPC call without ``Authorization: Bearer <token>`` (the card stays public)."""

    def __init__(self, app: object, token: str) -> None:
        super().__init__(app)  # type: ignore[arg-type]
        self._expected = f"Bearer {token}"

    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        if request.url.path.startswith("/.well-known/"):
            return await call_next(request)
        if request.headers.get("authorization") != self._expected:
            return JSONResponse({"error": "unauthorized"}, status_code=401)
        return await call_next(request)


def build_app(url: str, token: str | None) -> Starlette:
    card = agent_card(url)
    handler = DefaultRequestHandler(
        agent_executor=EchoExecutor(), task_store=InMemoryTaskStore(), agent_card=card
    )
    app = Starlette(routes=[*create_agent_card_routes(card), *create_jsonrpc_routes(handler, "/")])
    if token:
        app.add_middleware(BearerGate, token=token)
    return app


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--token", default=None)
    args = parser.parse_args()
    url = f"http://127.0.0.1:{args.port}/"
    uvicorn.run(build_app(url, args.token), host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
