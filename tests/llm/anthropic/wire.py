"""Anthropic-shaped wire replies for the adapter tests: SSE event sequences and JSON messages exactly as
the Messages API sends them (``event:`` + ``data:`` lines, ``ping`` keep-alives, ``signature_delta``
before a thinking block stops, ``input_json_delta`` fragments, cumulative usage in ``message_delta``)."""

from __future__ import annotations

from typing import Any

from tests.wire.server import BodyPiece, Reply, json_reply, sse_reply

Event = tuple[str, dict[str, Any]]


def message_start(*, msg_id: str = "msg_01", model: str = "claude-sonnet-5", **usage: int) -> Event:
    counts = {"input_tokens": 25, "output_tokens": 1, **usage}
    message: dict[str, Any] = {
        "id": msg_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": counts,
    }
    return ("message_start", {"type": "message_start", "message": message})


def ping() -> Event:
    return ("ping", {"type": "ping"})


def block_start(index: int, block: dict[str, Any]) -> Event:
    return ("content_block_start", {"type": "content_block_start", "index": index, "content_block": block})


def delta(index: int, body: dict[str, Any]) -> Event:
    return ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": body})


def block_stop(index: int) -> Event:
    return ("content_block_stop", {"type": "content_block_stop", "index": index})


def text_block(index: int, *pieces: str) -> list[Event]:
    return [
        block_start(index, {"type": "text", "text": ""}),
        *(delta(index, {"type": "text_delta", "text": p}) for p in pieces),
        block_stop(index),
    ]


def thinking_block(index: int, pieces: list[str], signature: str) -> list[Event]:
    return [
        block_start(index, {"type": "thinking", "thinking": "", "signature": ""}),
        *(delta(index, {"type": "thinking_delta", "thinking": p}) for p in pieces),
        delta(index, {"type": "signature_delta", "signature": signature}),
        block_stop(index),
    ]


def tool_block(index: int, call_id: str, name: str, *fragments: str) -> list[Event]:
    return [
        block_start(index, {"type": "tool_use", "id": call_id, "name": name, "input": {}}),
        *(delta(index, {"type": "input_json_delta", "partial_json": f}) for f in fragments),
        block_stop(index),
    ]


def message_end(stop_reason: str, *, output_tokens: int = 40, **usage: Any) -> list[Event]:
    return [
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": output_tokens, **usage},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]


def stream(*parts: Event | list[Event] | BodyPiece, headers: dict[str, str] | None = None) -> Reply:
    """Flatten events (and raw pieces: bytes, Delay, Disconnect) into one SSE reply."""
    items: list[Event | BodyPiece] = []
    for part in parts:
        if isinstance(part, list):
            items.extend(part)
        else:
            items.append(part)
    return sse_reply(items, headers={"request-id": "req_stream_1", **(headers or {})})


def message(
    content: list[dict[str, Any]],
    *,
    stop_reason: str = "end_turn",
    usage: dict[str, Any] | None = None,
    msg_id: str = "msg_01",
    stop_sequence: str | None = None,
) -> Reply:
    return json_reply(
        {
            "id": msg_id,
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-5",
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": stop_sequence,
            "usage": usage or {"input_tokens": 10, "output_tokens": 5},
        },
        headers={"request-id": "req_01"},
    )


def error_body(kind: str, text: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": text}, "request_id": "req_err_1"}
