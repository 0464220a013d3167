"""The Vercel AI SDK's UI message stream, from the chunks of one answer (a part of a run).

An answer is a :class:`~..run_parts.Part`: the run's chunks after a seq up to its next ``done``
chunk. What they become (``data: <chunk JSON>`` events, the stream's header
``x-vercel-ai-ui-message-stream: v1``, the last event ``data: [DONE]``):

=====================================  ===========================================================
run chunks                             UI message chunks
=====================================  ===========================================================
(opening)                              ``start`` (``messageId``: ``msg_<run id>[_<seq>]`` for a new
                                       assistant message; none when the answer goes on with the
                                       message that asked for the client's tools — the client keeps
                                       appending to it)
the first chunk of a model step        ``start-step`` (``finish-step`` when the step's tools have
                                       answered and the next step begins, and at the end)
``delta`` ``text``                     ``text-start`` … ``text-delta`` … ``text-end`` (id
                                       ``txt_<seq of its first delta>``)
``delta`` ``reasoning``                ``reasoning-start`` … ``reasoning-delta`` … ``reasoning-end``
``tool_call_start`` / ``_delta``       ``tool-input-start`` / ``tool-input-delta``
``tool_call``                          ``tool-input-available`` (``input``: the arguments parsed)
``tool_response``                      ``tool-output-available`` (``output``: the tool's text), or
                                       ``tool-output-error`` when the tool failed — the agent's
                                       own tools; a client's tool gets no output here: the client
                                       runs it and sends the output back
``final``                              the answer's text (when none was streamed: an agent with an
                                       output type answers in JSON)
``error``                              ``error`` (``errorText``: code and message)
``done``                               ``finish`` with ``finishReason``: ``stop`` (completed),
                                       ``tool-calls`` (waiting for the client's tools), ``error``
                                       (failed, waiting for a person's approval), ``other``
                                       (cancelled); then ``data: [DONE]``
=====================================  ===========================================================

Part ids are derived from seqs, so the same chunks always give the same events: a resume replays
the answer from its start with the same message id, and the client rebuilds the message in place
(``DefaultChatTransport``'s ``resumeStreamIsReplay``). Chunks of agents working inside the run (a
handoff's target) are not the answer's.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Final, TypeAlias

from kanawa.server.http.protocols.run_parts import JSON, Part, chunk_of, json_string, text_delta, top_level
from kanawa.server.store.base import ChunksExpired, Entry

HEADER: Final = ("x-vercel-ai-ui-message-stream", "v1")
"""The header that tells the AI SDK the body is a UI message stream (its version)."""
MESSAGE_PREFIX: Final = "msg"
DONE: Final = b"data: [DONE]\n\n"
_DELTA_END: Final = b"}\n\n"
_FINISH: Final = {
    "completed": "stop",
    "awaiting_tool_output": "tool-calls",
    "failed": "error",
    "awaiting_approval": "error",
    "cancelled": "other",
}
Frames: TypeAlias = list[dict[str, Any] | bytes]
"""UI message chunks to send: objects, or frames already encoded (text deltas)."""
_STREAMED: Final = frozenset({"delta", "tool_call_start", "tool_call_delta"})
"""Chunks a model streams (the first one after a step's tool results opens the next step)."""
_STEPPED: Final = frozenset({"tool_call", "final"})
"""Chunks that name their model step (``step``): a call of a later step opens it."""


def event(body: dict[str, Any]) -> bytes:
    """One UI message chunk as a server-sent event."""
    return b"data: " + JSON.encode(body).encode() + b"\n\n"


def _input(arguments: str) -> Any:
    """A tool call's arguments as the ``input`` object the client's tool takes (the text itself when
    it is not JSON, which the model may send for a tool without parameters)."""
    if not arguments.strip():
        return {}
    try:
        return json.loads(arguments)
    except ValueError:
        return arguments


class UIMessageFraming:
    """One answer's UI message stream (an :class:`~..run_parts.Framing`): state per stream — the
    open text or reasoning part, the open step, the tool calls seen."""

    __slots__ = (
        "_after_tools",
        "_delta_prefix",
        "_ended",
        "_reasoning",
        "_step",
        "_step_number",
        "_streamed_text",
        "_text",
        "_tools",
        "message_id",
    )

    def __init__(self, part: Part, *, new_message: bool) -> None:
        self.message_id = part.id(MESSAGE_PREFIX) if new_message else None
        self._text: str | None = None
        self._reasoning: str | None = None
        self._step = False
        self._step_number: object = None
        self._after_tools = False
        self._streamed_text = False
        self._tools: dict[str, str] = {}
        """Tool calls whose input was started, by call id: their tool's name."""
        self._ended = False
        self._delta_prefix = b""

    def opening(self) -> bytes:
        start: dict[str, Any] = {"type": "start"}
        if self.message_id is not None:
            start["messageId"] = self.message_id
        return event(start)

    def __call__(self, entries: Sequence[Entry]) -> bytes:
        if self._ended:
            return b""
        if len(entries) == 1 and self._text is not None:  # the common batch: one more text delta
            text = text_delta(entries[0])
            if text is not None:
                return self._delta_prefix + json_string(text).encode() + _DELTA_END
        frames: Frames = []
        for entry in entries:
            self.feed(chunk_of(entry), frames)
            if entry.terminal:
                self._ended = True
                frames.append(DONE)
                break
        return b"".join(frame if isinstance(frame, bytes) else event(frame) for frame in frames)

    def expired(self, exc: ChunksExpired) -> bytes:
        return event({"type": "error", "errorText": "this answer's events are no longer kept"}) + DONE

    # chunks → UI message chunks ----------------------------------------------------------------

    def feed(self, chunk: dict[str, Any], out: Frames) -> None:
        """Append the UI message chunks ``chunk`` becomes to ``out``."""
        kind = chunk.get("type")
        data = chunk.get("data")
        if not isinstance(data, dict) or not top_level(chunk):
            return
        if kind in _STREAMED:
            self._open_step(out, None)
        elif kind in _STEPPED:
            self._open_step(out, data.get("step"))
        seq = int(chunk.get("seq") or 0)
        if kind == "delta":
            if "text" in data:
                self._text_delta(str(data["text"]), seq, out)
            elif "reasoning" in data:
                self._reasoning_delta(str(data["reasoning"]), seq, out)
        elif kind == "tool_call_start":
            self._close_parts(out)
            self._input_start(str(data.get("id", "")), str(data.get("name", "")), out)
        elif kind == "tool_call_delta":
            call_id = str(data.get("id", ""))
            if call_id in self._tools:
                out.append(
                    {
                        "type": "tool-input-delta",
                        "toolCallId": call_id,
                        "inputTextDelta": str(data.get("delta", "")),
                    }
                )
        elif kind == "tool_call":
            self._close_parts(out)
            call_id, name = str(data.get("id", "")), str(data.get("name", ""))
            self._input_start(call_id, name, out)
            out.append(
                {
                    "type": "tool-input-available",
                    "toolCallId": call_id,
                    "toolName": name,
                    "input": _input(str(data.get("arguments", ""))),
                }
            )
        elif kind == "tool_response":
            self._tool_output(data, out)
        elif kind == "final":
            self._final(data, seq, out)
        elif kind == "error":
            self._close_parts(out)
            out.append({"type": "error", "errorText": f"{data.get('code')}: {data.get('message')}"})
        elif kind == "done":
            self._done(str(data.get("status", "completed")), out)

    def _open_step(self, out: Frames, number: object) -> None:
        """Open a step when none is, or when the model's next step has begun: streamed content after
        the step's tool results, or a chunk of another step number."""
        later = number is None or number != self._step_number
        if number is not None:
            self._step_number = number
        if self._step and self._after_tools and later:
            self._close_parts(out)
            out.append({"type": "finish-step"})
            self._step = False
        if not self._step:
            out.append({"type": "start-step"})
            self._step = True
            self._after_tools = False
            self._streamed_text = False

    def _text_delta(self, text: str, seq: int, out: Frames) -> None:
        if self._text is None:
            self._close_parts(out)
            self._text = f"txt_{seq}"
            out.append({"type": "text-start", "id": self._text})
            self._delta_prefix = b'data: {"type":"text-delta","id":"' + self._text.encode() + b'","delta":'
        self._streamed_text = True
        out.append(self._delta_prefix + json_string(text).encode() + _DELTA_END)

    def _reasoning_delta(self, text: str, seq: int, out: Frames) -> None:
        if self._reasoning is None:
            self._close_parts(out)
            self._reasoning = f"rsn_{seq}"
            out.append({"type": "reasoning-start", "id": self._reasoning})
        out.append({"type": "reasoning-delta", "id": self._reasoning, "delta": text})

    def _close_parts(self, out: Frames) -> None:
        if self._text is not None:
            out.append({"type": "text-end", "id": self._text})
            self._text = None
        if self._reasoning is not None:
            out.append({"type": "reasoning-end", "id": self._reasoning})
            self._reasoning = None

    def _input_start(self, call_id: str, name: str, out: Frames) -> None:
        if call_id not in self._tools:
            self._tools[call_id] = name
            out.append({"type": "tool-input-start", "toolCallId": call_id, "toolName": name})

    def _tool_output(self, data: dict[str, Any], out: Frames) -> None:
        call_id = str(data.get("call_id", ""))
        if call_id not in self._tools:  # a result for a call this answer never showed (a nested agent's)
            return
        self._close_parts(out)
        self._after_tools = True
        content = str(data.get("content", ""))
        if data.get("is_error"):
            out.append({"type": "tool-output-error", "toolCallId": call_id, "errorText": content})
        else:
            out.append({"type": "tool-output-available", "toolCallId": call_id, "output": content})

    def _final(self, data: dict[str, Any], seq: int, out: Frames) -> None:
        if self._streamed_text:
            return
        output = data.get("output")
        text = str(data.get("text") or "")
        if not text and output is not None:
            text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
        if text:
            self._text_delta(text, seq, out)

    def _done(self, status: str, out: Frames) -> None:
        self._close_parts(out)
        if status == "awaiting_approval":
            out.append({"type": "error", "errorText": "the run waits for a person's approval"})
        if self._step:
            out.append({"type": "finish-step"})
            self._step = False
        out.append({"type": "finish", "finishReason": _FINISH.get(status, "other")})


__all__ = ["DONE", "HEADER", "MESSAGE_PREFIX", "UIMessageFraming", "event"]
