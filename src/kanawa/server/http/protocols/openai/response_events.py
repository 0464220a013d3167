"""A Responses API response's events and object, from the chunks of its part of a run.

What a run's chunks become (:class:`ResponseTranslator`; ``sequence_number`` counts from 0 in each
response, and the same chunks always give the same events):

====================================  =============================================================
run chunks                            output items and events
====================================  =============================================================
(start)                               ``response.created``, ``response.in_progress``
``delta`` ``text``                    a ``message`` item: ``output_item.added``,
                                      ``content_part.added`` (``output_text``), ``output_text.delta``
                                      … then ``output_text.done``, ``content_part.done``,
                                      ``output_item.done`` when the text ends (a tool call, the end)
``delta`` ``reasoning``               a ``reasoning`` item with one ``summary_text`` part:
                                      ``reasoning_summary_part.added``,
                                      ``reasoning_summary_text.delta`` … ``.done``
``tool_call`` + ``tool_response``     the agent's own tool, run by the server: an ``mcp_call`` item
                                      (``server_label`` ``kanawa``, ``name``, ``arguments``,
                                      ``output``; ``status`` ``completed``, or ``failed`` when the
                                      tool failed) — clients show it and never execute it
``final``                             the answer's ``message`` item (when no text was streamed)
``done`` ``awaiting_tool_output``     a ``function_call`` item per call of a *client* tool
                                      (``call_id``, ``name``, ``arguments``, status ``completed``),
                                      then ``response.completed``: the client runs them and sends
                                      ``previous_response_id`` + ``function_call_output`` items
``done`` ``completed``                ``response.completed`` (with ``usage``)
``error`` + ``done`` ``failed``       ``response.failed`` with ``error`` (``server_error``)
``done`` ``cancelled``                ``response.incomplete``, the response's status ``cancelled``
``done`` ``awaiting_approval``        ``response.incomplete``: the run waits for a person
                                      (``POST /v1/runs/{run id}/approvals``)
====================================  =============================================================

Chunks of agents working inside the run (a handoff's target) are not the response's items: the
translator is a :class:`~..framing.ChunkFraming` whose hooks are the table's rows.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any, Final

from kanawa.server.http.protocols.framing import (
    ChunkFraming,
    DoneChunk,
    ErrorChunk,
    FinalChunk,
    ReasoningChunk,
    TextChunk,
    ToolCallChunk,
    ToolResultChunk,
    UsageChunk,
)
from kanawa.server.http.protocols.inputs import json_text
from kanawa.server.http.protocols.run_parts import JSON, Part, json_string, usage_counts
from kanawa.server.store.base import ChunksExpired

PREFIX: Final = "resp"
"""Response ids: ``resp_<run id>`` / ``resp_<run id>_<seq>`` (:mod:`..run_parts`)."""
SERVER_LABEL: Final = "kanawa"
"""``server_label`` of the ``mcp_call`` items that show the agent's own tool calls."""


class Delta:
    """A text delta event, encoded but for its sequence number: the frame is its item's prefix, the
    delta's JSON and the number (the one event a response has thousands of, so it skips building
    and encoding a dict). The same JSON as the event written out in full."""

    __slots__ = ("delta", "prefix", "text")

    def __init__(self, prefix: bytes, text: str) -> None:
        self.prefix = prefix
        self.text = text
        self.delta = JSON.encode(text)

    def frame(self, sequence: int) -> bytes:
        return _DELTA % (self.prefix, self.delta.encode(), sequence)


_DELTA: Final = b'%s%s,"logprobs":[],"sequence_number":%d}\n\n'


Event = dict[str, Any] | Delta
"""What :meth:`ResponseTranslator.feed` gives: events, text deltas pre-encoded (:class:`Delta`)."""


class ResponseTranslator(ChunkFraming[Event]):
    """A response's run chunks → its Response object and its stream events (module table). As a
    stream's framing (:class:`~..framing.ChunkFraming`) its events are server-sent events numbered
    from 0 — every event counts, sent or left out, so numbers never shift — with those up to
    ``starting_after`` left out (a resumed stream)."""

    def __init__(
        self,
        part: Part,
        *,
        model: str,
        created: float,
        echo: dict[str, Any] | None = None,
        starting_after: int = -1,
    ) -> None:
        super().__init__()
        self.starting_after = starting_after
        self._sequence = -1
        self.part = part
        self.id = part.id(PREFIX)
        self.model = model
        self.created = int(created)
        self.echo = echo or {}
        self.output: list[dict[str, Any]] = []
        self.status = "in_progress"
        self.error: dict[str, Any] | None = None
        self.failure: dict[str, Any] | None = None
        """The run's ``error`` chunk data, as it came (what :func:`.errors.run_failure` reads)."""
        self.usage: dict[str, Any] | None = None
        self._message: int | None = None
        self._reasoning: int | None = None
        self._texts: list[str] = []
        """The open message's (or reasoning's) text so far, joined when it closes: ``+=`` on the
        item's string would copy the whole text at every delta."""
        self._prefix = b""
        self._calls: dict[str, dict[str, Any]] = {}
        """Calls asked for and not answered yet, by call id: the agent's own until their result
        comes; those left at the end are the client's."""

    # the Response object ------------------------------------------------------------------------

    def _flush(self) -> None:
        """Put the open item's text so far into the item."""
        if self._message is not None:
            self.output[self._message]["content"][0]["text"] = "".join(self._texts)
        elif self._reasoning is not None:
            self.output[self._reasoning]["summary"][0]["text"] = "".join(self._texts)

    def snapshot(self) -> dict[str, Any]:
        self._flush()
        tokens_in, tokens_out, reasoning, cached = usage_counts(self.usage)
        echo = self.echo
        return {
            "id": self.id,
            "object": "response",
            "created_at": self.created,
            "status": self.status,
            "model": self.model,
            "output": copy.deepcopy(self.output),
            "error": self.error,
            "incomplete_details": None,
            "instructions": echo.get("instructions"),
            "max_output_tokens": echo.get("max_output_tokens"),
            "metadata": echo.get("metadata") or {},
            "parallel_tool_calls": True,
            "previous_response_id": echo.get("previous_response_id"),
            "temperature": None,
            "top_p": None,
            "tool_choice": "auto",
            "tools": echo.get("tools") or [],
            "text": {"format": echo.get("format") or {"type": "text"}},
            "store": echo.get("store") is not False,
            "background": False,
            "usage": None
            if self.usage is None
            else {
                "input_tokens": tokens_in,
                "input_tokens_details": {"cached_tokens": cached},
                "output_tokens": tokens_out,
                "output_tokens_details": {"reasoning_tokens": reasoning},
                "total_tokens": tokens_in + tokens_out,
            },
        }

    def opening_events(self) -> list[Event]:
        return [
            {"type": "response.created", "response": self.snapshot()},
            {"type": "response.in_progress", "response": self.snapshot()},
        ]

    # the stream (ChunkFraming) -------------------------------------------------------------------

    def opening(self) -> bytes:
        return self.frames(-1, self.opening_events())

    def frames(self, seq: int, events: Sequence[Event]) -> bytes:
        frames = []
        sequence = self._sequence
        for event in events:
            sequence += 1
            if sequence > self.starting_after:
                frames.append(sse_event(event, sequence))
        self._sequence = sequence
        return b"".join(frames)

    def expired(self, exc: ChunksExpired) -> bytes:
        self._sequence += 1
        error = {"type": "error", "code": "not_found", "message": "this response's events are no longer kept"}
        return sse_event({**error, "param": None}, self._sequence)

    # chunks → events -----------------------------------------------------------------------------

    def on_text(self, chunk: TextChunk) -> list[Event]:
        return self._text(chunk.text, chunk.seq)

    def on_reasoning(self, chunk: ReasoningChunk) -> list[Event]:
        return self._reason(chunk.text, chunk.seq)

    def on_tool_call(self, chunk: ToolCallChunk) -> list[Event]:
        self._calls[chunk.id] = {"name": chunk.name, "arguments": chunk.arguments}
        return self._close_text()

    def on_tool_result(self, chunk: ToolResultChunk) -> list[Event]:
        return [*self._close_text(), *self._tool_result(chunk)]

    def on_final(self, chunk: FinalChunk) -> list[Event]:
        if self._message is not None:
            return self._close_text()
        return [*self._text(chunk.answer_text(json_text), chunk.seq), *self._close_text()]

    def on_usage(self, chunk: UsageChunk) -> list[Event]:
        self.usage = chunk.usage
        return []

    def on_error(self, chunk: ErrorChunk) -> list[Event]:
        self.failure = chunk.data
        self.error = {"code": "server_error", "message": chunk.summary}
        return []

    def on_done(self, chunk: DoneChunk) -> list[Event]:
        return self._done(chunk.status, chunk.seq)

    def _add(self, item: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        self.output.append(item)
        index = len(self.output) - 1
        return index, {
            "type": "response.output_item.added",
            "output_index": index,
            "item": copy.deepcopy(item),
        }

    def _item_done(self, index: int) -> dict[str, Any]:
        return {
            "type": "response.output_item.done",
            "output_index": index,
            "item": copy.deepcopy(self.output[index]),
        }

    def _text(self, text: str, seq: int) -> list[Event]:
        events: list[Event] = [*self._close_reasoning()]
        if self._message is None:
            item: dict[str, Any] = {
                "id": f"msg_{self.part.run_id}_{seq}",
                "type": "message",
                "role": "assistant",
                "status": "in_progress",
                "content": [],
            }
            self._message, added = self._add(item)
            self._texts = []
            part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
            item["content"].append(part)
            events += [
                added,
                _part_event(
                    "response.content_part.added", item, self._message, "content", part=copy.deepcopy(part)
                ),
            ]
            head = _part_event("response.output_text.delta", item, self._message, "content")
            self._prefix = (
                b"event: response.output_text.delta\ndata: " + JSON.encode(head)[:-1].encode() + b',"delta":'
            )
        self._texts.append(text)
        events.append(Delta(self._prefix, text))
        return events

    def more_text(self, text: str, seq: int) -> bytes | None:
        """The frame of a text delta that goes on the open message, the same bytes :meth:`feed` and
        :func:`sse_event` give it; ``None`` when no message is open (then :meth:`feed` opens one)."""
        if self._message is None:
            return None
        self._texts.append(text)
        self._sequence = sequence = self._sequence + 1
        if sequence <= self.starting_after:
            return b""
        return _DELTA % (self._prefix, json_string(text).encode(), sequence)

    def _close_text(self) -> list[Event]:
        events = self._close_reasoning()
        index = self._message
        if index is None:
            return events
        self._flush()
        self._message = None
        item = self.output[index]
        item["status"] = "completed"
        part = item["content"][0]
        return [
            *events,
            _part_event("response.output_text.done", item, index, "content", text=part["text"], logprobs=[]),
            _part_event("response.content_part.done", item, index, "content", part=copy.deepcopy(part)),
            self._item_done(index),
        ]

    def _reason(self, text: str, seq: int) -> list[Event]:
        events: list[Event] = []
        if self._reasoning is None:
            if self._message is not None:
                events += self._close_text()
            item: dict[str, Any] = {"id": f"rs_{self.part.run_id}_{seq}", "type": "reasoning", "summary": []}
            self._reasoning, added = self._add(item)
            self._texts = []
            part = {"type": "summary_text", "text": ""}
            item["summary"].append(part)
            events += [
                added,
                _part_event(
                    "response.reasoning_summary_part.added", item, self._reasoning, "summary", part=dict(part)
                ),
            ]
        item = self.output[self._reasoning]
        self._texts.append(text)
        events.append(
            _part_event("response.reasoning_summary_text.delta", item, self._reasoning, "summary", delta=text)
        )
        return events

    def _close_reasoning(self) -> list[Event]:
        index = self._reasoning
        if index is None:
            return []
        self._flush()
        self._reasoning = None
        item = self.output[index]
        part = item["summary"][0]
        return [
            _part_event("response.reasoning_summary_text.done", item, index, "summary", text=part["text"]),
            _part_event("response.reasoning_summary_part.done", item, index, "summary", part=dict(part)),
            self._item_done(index),
        ]

    def _tool_result(self, chunk: ToolResultChunk) -> list[Event]:
        call = self._calls.pop(chunk.call_id, {"name": chunk.name, "arguments": "{}"})
        item: dict[str, Any] = {
            "id": f"mcp_{self.part.run_id}_{chunk.seq}",
            "type": "mcp_call",
            "server_label": SERVER_LABEL,
            "name": call["name"],
            "arguments": call["arguments"],
            "output": None,
            "status": "in_progress",
        }
        index, added = self._add(item)
        item["output"] = chunk.content
        item["status"] = "failed" if chunk.is_error else "completed"
        return [added, self._item_done(index)]

    def _done(self, status: str, seq: int) -> list[Event]:
        events = self._close_text()
        if status == "awaiting_tool_output":
            for position, (call_id, call) in enumerate(self._calls.items()):
                item = {
                    "id": f"fc_{self.part.run_id}_{seq}_{position}",
                    "type": "function_call",
                    "call_id": call_id,
                    "name": call["name"],
                    "arguments": call["arguments"],
                    "status": "completed",
                }
                index, added = self._add(item)
                events += [
                    added,
                    {
                        "type": "response.function_call_arguments.done",
                        "item_id": item["id"],
                        "output_index": index,
                        "name": item["name"],
                        "arguments": item["arguments"],
                    },
                    self._item_done(index),
                ]
            self._calls.clear()
        if status in ("completed", "awaiting_tool_output"):
            self.status = "completed"
            return [*events, {"type": "response.completed", "response": self.snapshot()}]
        if status == "failed":
            self.status = "failed"
            if self.error is None:
                self.error = {"code": "server_error", "message": "the run failed"}
            return [*events, {"type": "response.failed", "response": self.snapshot()}]
        self.status = "cancelled" if status == "cancelled" else "incomplete"
        return [*events, {"type": "response.incomplete", "response": self.snapshot()}]


def _part_event(kind: str, item: dict[str, Any], index: int, slot: str, **fields: Any) -> dict[str, Any]:
    """An event about part 0 of output item ``item`` (at ``index``): ``slot`` is ``content`` for a
    message, ``summary`` for a reasoning item."""
    return {"type": kind, "item_id": item["id"], "output_index": index, f"{slot}_index": 0, **fields}


def sse_event(event: Event, sequence: int) -> bytes:
    if isinstance(event, Delta):
        return event.frame(sequence)
    event["sequence_number"] = sequence
    return f"event: {event['type']}\ndata: {JSON.encode(event)}\n\n".encode()


__all__ = ["PREFIX", "SERVER_LABEL", "Delta", "Event", "ResponseTranslator", "sse_event"]
