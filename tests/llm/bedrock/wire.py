"""Amazon Bedrock's wire format for the tests: AWS event-stream frames, built byte by byte.

``invoke-with-response-stream`` answers ``application/vnd.amazon.eventstream``: binary frames, each a
prelude (total length, headers length, CRC32 of those eight bytes), typed headers, a payload and a
CRC32 of the whole frame. A Messages API event travels as a ``chunk`` event whose JSON payload holds
the event's JSON, base64-encoded, under ``bytes``; a fault travels as an ``exception`` frame named by
``:exception-type``. botocore (through the Anthropic SDK) decodes them — and checks both CRCs.
"""

from __future__ import annotations

import base64
import json
import struct
import zlib
from collections.abc import Iterable
from typing import Any

from tests.wire.server import BodyPiece, Reply

_STRING = 7


def _header(name: str, value: str) -> bytes:
    raw_name, raw_value = name.encode(), value.encode()
    return (
        struct.pack("!B", len(raw_name)) + raw_name + struct.pack("!BH", _STRING, len(raw_value)) + raw_value
    )


def frame(headers: dict[str, str], payload: bytes) -> bytes:
    """One event-stream message, CRCs included."""
    encoded = b"".join(_header(k, v) for k, v in headers.items())
    total = 12 + len(encoded) + len(payload) + 4
    prelude = struct.pack("!II", total, len(encoded))
    prelude += struct.pack("!I", zlib.crc32(prelude))
    body = prelude + encoded + payload
    return body + struct.pack("!I", zlib.crc32(body))


def chunk(event: dict[str, Any]) -> bytes:
    """A Messages API event as Bedrock streams it."""
    payload = json.dumps({"bytes": base64.b64encode(json.dumps(event).encode()).decode()}).encode()
    return frame(
        {":event-type": "chunk", ":content-type": "application/json", ":message-type": "event"}, payload
    )


def exception(kind: str, message: str) -> bytes:
    """An exception frame (``throttlingException``, ``modelStreamErrorException`` …)."""
    return frame(
        {":exception-type": kind, ":content-type": "application/json", ":message-type": "exception"},
        json.dumps({"message": message}).encode(),
    )


def event_stream(events: Iterable[tuple[str, dict[str, Any]] | bytes | BodyPiece]) -> Reply:
    """Anthropic SSE-style ``(name, data)`` events (as ``tests.llm.anthropic.wire`` builds them) as one
    Bedrock event-stream reply; raw frames and other body pieces pass through."""
    body: list[BodyPiece] = []
    for item in events:
        body.append(chunk(item[1]) if isinstance(item, tuple) else item)
    return Reply(
        200,
        {"content-type": "application/vnd.amazon.eventstream", "x-amzn-requestid": "bedrock-req-1"},
        body,
    )
