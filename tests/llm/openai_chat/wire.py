"""Chat Completions wire replies shaped like the real servers: ``data:`` chunks (no ``event:`` lines),
tool-call deltas by index (fragmented as vLLM/OpenAI send them, or whole as Ollama does), a usage-only
final chunk with empty ``choices``, and the ``[DONE]`` sentinel."""

from __future__ import annotations

from typing import Any

from tests.wire.server import BodyPiece, Reply, json_reply, sse_reply

Chunk = tuple[None, dict[str, Any]]


def chunk(
    delta: dict[str, Any] | None = None,
    *,
    finish: str | None = None,
    usage: dict[str, Any] | None = None,
    choices: bool = True,
    model: str = "qwen2.5-7b-instruct",
) -> Chunk:
    body: dict[str, Any] = {
        "id": "chatcmpl-abc123",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": model,
        "choices": [{"index": 0, "delta": delta or {}, "logprobs": None, "finish_reason": finish}]
        if choices
        else [],
    }
    if usage is not None:
        body["usage"] = usage
    return (None, body)


def tool_delta(
    index: int | None, *, call_id: str | None = None, name: str | None = None, arguments: str | None = None
) -> dict[str, Any]:
    fragment: dict[str, Any] = {}
    if index is not None:
        fragment["index"] = index
    if call_id is not None:
        fragment["id"] = call_id
        fragment["type"] = "function"
    function: dict[str, Any] = {}
    if name is not None:
        function["name"] = name
    if arguments is not None:
        function["arguments"] = arguments
    if function:
        fragment["function"] = function
    return {"tool_calls": [fragment]}


def usage_chunk(prompt: int = 31, completion: int = 12, **details: Any) -> Chunk:
    return chunk(
        usage={
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            **details,
        },
        choices=False,
    )


def stream(*items: Chunk | BodyPiece, done: bool = True) -> Reply:
    return sse_reply(list(items), done=done, headers={"x-request-id": "req_chat_1"})


def completion(
    message: dict[str, Any],
    *,
    finish: str | None = "stop",
    usage: dict[str, Any] | None = None,
    with_usage: bool = True,
) -> Reply:
    body: dict[str, Any] = {
        "id": "chatcmpl-abc123",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "qwen2.5-7b-instruct",
        "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}],
    }
    if with_usage:
        body["usage"] = usage or {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25}
    return json_reply(body, headers={"x-request-id": "req_chat_1"})


def error_body(
    message: str, *, code: str | None = None, kind: str = "invalid_request_error"
) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}
