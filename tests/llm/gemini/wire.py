"""Gemini-shaped wire replies for the adapter tests: ``generateContent`` JSON bodies and
``streamGenerateContent?alt=sse`` chunk sequences exactly as the Gemini API sends them
(``candidates[].content.parts[]`` with ``text``, ``thought: true``, ``functionCall`` and
``thoughtSignature``; ``finishReason`` on the last chunk; running ``usageMetadata`` totals;
``responseId`` and ``modelVersion`` on every chunk)."""

from __future__ import annotations

import base64
import json
from typing import Any

from kanawa.llm.gemini.adapter import GeminiAdapter
from kanawa.types import Message, StreamEvent, ToolSpec, UserMessage
from tests.wire.server import BodyPiece, RecordedRequest, Reply, WireServer, json_reply

API_KEY = "AIza-test-key-0123456789"
MODEL_VERSION = "gemini-2.5-flash"
RESPONSE_ID = "resp-7Hq2"

SIGNATURE = base64.b64encode(b"\x0a\x24\x01\xfb\xff\xbfsignature-one\xfe").decode()
"""A thought signature in standard base64, with ``+`` and ``/`` in it like real ones."""
SIGNATURE_2 = base64.b64encode(b"\x12\x08second-signature\xfa\xfb").decode()

Part = dict[str, Any]


def text(value: str, *, signature: str | None = None) -> Part:
    part: Part = {"text": value}
    if signature is not None:
        part["thoughtSignature"] = signature
    return part


def thought(value: str, *, signature: str | None = None) -> Part:
    return {**text(value, signature=signature), "thought": True}


def call(
    name: str, args: dict[str, Any], *, signature: str | None = None, call_id: str | None = None
) -> Part:
    function_call: dict[str, Any] = {"name": name, "args": args}
    if call_id is not None:
        function_call["id"] = call_id
    part: Part = {"functionCall": function_call}
    if signature is not None:
        part["thoughtSignature"] = signature
    return part


def usage(
    prompt: int = 12, candidates: int = 8, thoughts: int | None = None, cached: int | None = None
) -> dict[str, int]:
    meta = {"promptTokenCount": prompt, "candidatesTokenCount": candidates}
    total = prompt + candidates
    if thoughts is not None:
        meta["thoughtsTokenCount"] = thoughts
        total += thoughts
    if cached is not None:
        meta["cachedContentTokenCount"] = cached
    meta["totalTokenCount"] = total
    return meta


def body(
    parts: list[Part],
    *,
    finish: str | None = "STOP",
    meta: dict[str, int] | None = None,
    response_id: str = RESPONSE_ID,
) -> dict[str, Any]:
    """One ``GenerateContentResponse`` (a whole answer, or one stream chunk)."""
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
    return {
        "candidates": [candidate],
        "usageMetadata": meta or usage(),
        "modelVersion": MODEL_VERSION,
        "responseId": response_id,
    }


def chunks(
    *parts_per_chunk: list[Part], finish: str = "STOP", meta: dict[str, int] | None = None
) -> list[dict[str, Any]]:
    """A stream: one chunk per part list, ``finishReason`` and the final usage on the last one."""
    out = []
    for i, parts in enumerate(parts_per_chunk):
        last = i == len(parts_per_chunk) - 1
        running = usage(candidates=i + 1) if not last else (meta or usage())
        out.append(body(parts, finish=finish if last else None, meta=running))
    return out


def sse_bytes(items: list[dict[str, Any]]) -> bytes:
    return b"".join(f"data: {json.dumps(item)}\r\n\r\n".encode() for item in items)


def stream_reply(items: list[dict[str, Any]], *tail: BodyPiece) -> Reply:
    """The SSE reply Gemini sends for ``alt=sse`` (``data:`` lines, CRLF CRLF between events)."""
    pieces: list[BodyPiece] = [sse_bytes([item]) for item in items]
    return Reply(200, {"content-type": "text/event-stream"}, [*pieces, *tail])


def error_reply(
    status: int,
    message: str,
    state: str,
    *,
    details: list[dict[str, Any]] | None = None,
    headers: dict[str, str] | None = None,
) -> Reply:
    """A Google API error body: ``{"error": {"code", "message", "status", "details"}}``."""
    error: dict[str, Any] = {"code": status, "message": message, "status": state}
    if details is not None:
        error["details"] = details
    return json_reply({"error": error}, status, headers)


def contents(request: RecordedRequest) -> list[dict[str, Any]]:
    sent: list[dict[str, Any]] = request.json()["contents"]
    return sent


def generation_config(request: RecordedRequest) -> dict[str, Any]:
    config: dict[str, Any] = request.json().get("generationConfig", {})
    return config


def field(obj: dict[str, Any], camel: str) -> Any:
    """A request field the SDK may spell in camelCase or snake_case (the API accepts both)."""
    snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in camel)
    return obj[camel] if camel in obj else obj[snake]


def signature_bytes(value: str) -> bytes:
    """Decode a signature in either base64 alphabet (the API's proto3 JSON rule)."""
    standard = value.replace("-", "+").replace("_", "/")
    return base64.b64decode(standard + "=" * (-len(standard) % 4))


# ------------------------------------------------------------------------------ driving the adapter

PROMPT = "the secret prompt text 4711"
"""Prompt text that must never appear in an error message."""

ADD = ToolSpec(
    "add",
    "Add two integers.",
    {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
)
NOW = ToolSpec("now", "The current time.", {"type": "object", "properties": {}})


async def send(
    wire_server: WireServer,
    messages: list[Message],
    *,
    model: str = "gemini-2.5-flash",
    **kwargs: Any,
) -> RecordedRequest:
    """One ``chat()`` through a fresh adapter; the request the server recorded."""
    adapter = GeminiAdapter(model, api_key=API_KEY, base_url=wire_server.base_url, timeout=5.0)
    wire_server.enqueue(json_reply(body([text("ok")])))
    await adapter.chat(messages, **kwargs)
    return wire_server.requests[-1]


async def collect(adapter: GeminiAdapter, prompt: str = PROMPT) -> list[StreamEvent]:
    """Every event of one ``stream()`` call."""
    return [event async for event in adapter.stream([UserMessage(prompt)])]


async def drain_into(seen: list[StreamEvent], adapter: GeminiAdapter) -> None:
    """Iterate the stream, keeping every event delivered before a failure."""
    async for event in adapter.stream([UserMessage(PROMPT)]):
        seen.append(event)
