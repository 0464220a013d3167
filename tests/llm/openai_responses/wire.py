"""Responses-API-shaped wire replies: SSE sequences and JSON response objects as OpenAI sends them.

:class:`ResponseScript` builds one response item by item and renders it either as the streamed event
sequence (``response.created`` → ``response.in_progress`` → per item ``output_item.added`` … deltas …
``output_item.done`` → ``response.completed``, every event with a ``sequence_number``) or as the JSON
body of a non-streaming call — so both paths are fed the same response.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from tests.wire.server import BodyPiece, Delay, Reply, json_reply, sse_reply

Event = tuple[str, dict[str, Any]]

USAGE = {
    "input_tokens": 120,
    "input_tokens_details": {"cached_tokens": 64},
    "output_tokens": 90,
    "output_tokens_details": {"reasoning_tokens": 48},
    "total_tokens": 210,
}


def pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


class ResponseScript:
    """Build a response (reasoning, messages, function calls) and its SSE event sequence."""

    def __init__(self, *, response_id: str = "resp_0001", model: str = "gpt-5-2025-08-07") -> None:
        self.response_id = response_id
        self.model = model
        self.output: list[dict[str, Any]] = []
        self.events: list[Event] = []
        self._seq = 0
        self._emit("response.created", response=self.response_object("in_progress", output=[]))
        self._emit("response.in_progress", response=self.response_object("in_progress", output=[]))

    # ----------------------------------------------------------------- plumbing
    def _emit(self, kind: str, **fields: Any) -> None:
        self.events.append((kind, {"type": kind, "sequence_number": self._seq, **copy.deepcopy(fields)}))
        self._seq += 1

    def response_object(
        self,
        status: str,
        *,
        output: list[dict[str, Any]] | None = None,
        usage: dict[str, Any] | None = None,
        incomplete_reason: str | None = None,
        error: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        return {
            "id": self.response_id,
            "object": "response",
            "created_at": 1760000000,
            "status": status,
            "error": error,
            "incomplete_details": {"reason": incomplete_reason} if incomplete_reason else None,
            "instructions": None,
            "max_output_tokens": None,
            "model": self.model,
            "output": copy.deepcopy(self.output if output is None else output),
            "parallel_tool_calls": True,
            "reasoning": {"effort": "medium", "summary": "auto"},
            "store": False,
            "text": {"format": {"type": "text"}, "verbosity": "medium"},
            "tool_choice": "auto",
            "tools": [],
            "truncation": "disabled",
            "usage": usage,
        }

    # -------------------------------------------------------------------- items
    def reasoning(
        self, *summaries: str, item_id: str = "rs_0001", encrypted: str = "gAAAAABenc-0001", chunk: int = 5
    ) -> ResponseScript:
        index = len(self.output)
        item: dict[str, Any] = {"id": item_id, "type": "reasoning", "summary": []}
        self._emit("response.output_item.added", output_index=index, item=item)
        for s_index, text in enumerate(summaries):
            part = {"type": "summary_text", "text": ""}
            common = {"item_id": item_id, "output_index": index, "summary_index": s_index}
            self._emit("response.reasoning_summary_part.added", **common, part=part)
            for piece in pieces(text, chunk):
                self._emit("response.reasoning_summary_text.delta", **common, delta=piece)
            self._emit("response.reasoning_summary_text.done", **common, text=text)
            self._emit("response.reasoning_summary_part.done", **common, part={**part, "text": text})
        done = {
            "id": item_id,
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": t} for t in summaries],
            "encrypted_content": encrypted,
        }
        self._emit("response.output_item.done", output_index=index, item=done)
        self.output.append(done)
        return self

    def message(self, text: str, *, item_id: str = "msg_0001", chunk: int = 4) -> ResponseScript:
        index = len(self.output)
        base = {"id": item_id, "type": "message", "role": "assistant"}
        self._emit(
            "response.output_item.added",
            output_index=index,
            item={**base, "status": "in_progress", "content": []},
        )
        common = {"item_id": item_id, "output_index": index, "content_index": 0}
        empty = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
        self._emit("response.content_part.added", **common, part=empty)
        for piece in pieces(text, chunk):
            self._emit("response.output_text.delta", **common, delta=piece, logprobs=[])
        self._emit("response.output_text.done", **common, text=text, logprobs=[])
        full = {**empty, "text": text}
        self._emit("response.content_part.done", **common, part=full)
        done = {**base, "status": "completed", "content": [full]}
        self._emit("response.output_item.done", output_index=index, item=done)
        self.output.append(done)
        return self

    def function_call(
        self, name: str, arguments: str, *, call_id: str, item_id: str | None = None, chunk: int = 6
    ) -> ResponseScript:
        index = len(self.output)
        fc_id = item_id or f"fc_{call_id}"
        base = {"id": fc_id, "type": "function_call", "call_id": call_id, "name": name}
        self._emit(
            "response.output_item.added",
            output_index=index,
            item={**base, "arguments": "", "status": "in_progress"},
        )
        for piece in pieces(arguments, chunk):
            self._emit(
                "response.function_call_arguments.delta", item_id=fc_id, output_index=index, delta=piece
            )
        self._emit(
            "response.function_call_arguments.done", item_id=fc_id, output_index=index, arguments=arguments
        )
        done = {**base, "arguments": arguments, "status": "completed"}
        self._emit("response.output_item.done", output_index=index, item=done)
        self.output.append(done)
        return self

    # ------------------------------------------------------------------ endings
    def completed(self, usage: dict[str, Any] | None = None) -> ResponseScript:
        self._emit("response.completed", response=self.response_object("completed", usage=usage or USAGE))
        return self

    def incomplete(self, reason: str = "max_output_tokens") -> ResponseScript:
        obj = self.response_object("incomplete", usage=USAGE, incomplete_reason=reason)
        self._emit("response.incomplete", response=obj)
        return self

    def failed(self, code: str, message: str) -> ResponseScript:
        obj = self.response_object("failed", usage=None, error={"code": code, "message": message})
        self._emit("response.failed", response=obj)
        return self

    def error(self, code: str, message: str, *, param: str | None = None) -> ResponseScript:
        self._emit("error", code=code, message=message, param=param)
        return self

    # ------------------------------------------------------------------ replies
    def sse(self, *, headers: dict[str, str] | None = None) -> Reply:
        return sse_reply(self.events, headers=headers)

    def raw_bytes(self) -> bytes:
        return b"".join(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in self.events)

    def chunked_sse(self, size: int) -> Reply:
        """The same stream cut into ``size``-byte pieces, so lines and JSON split across TCP chunks."""
        raw = self.raw_bytes()
        body: list[BodyPiece] = []
        for i in range(0, len(raw), size):
            body.extend([raw[i : i + size], Delay(0)])
        return Reply(200, {"content-type": "text/event-stream"}, body)

    def json(
        self,
        *,
        status: str = "completed",
        incomplete_reason: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> Reply:
        obj = self.response_object(status, usage=USAGE, incomplete_reason=incomplete_reason)
        return json_reply(obj, headers=headers)


def text_response(text: str, *, chunk: int = 4, **kwargs: Any) -> ResponseScript:
    return ResponseScript(**kwargs).message(text, chunk=chunk).completed()
