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

from kanawa.server.http.protocols.framing import (
    ChunkFraming,
    DoneChunk,
    ErrorChunk,
    FinalChunk,
    ReasoningChunk,
    TextChunk,
    ToolArgsChunk,
    ToolCallChunk,
    ToolResultChunk,
    ToolStartChunk,
)
from kanawa.server.http.protocols.run_parts import JSON, Part, json_string
from kanawa.server.store.base import ChunksExpired

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


class UIMessageFraming(ChunkFraming[dict[str, Any] | bytes]):
    """One answer's UI message stream (a :class:`~..framing.ChunkFraming`): state per stream — the
    open text or reasoning part, the open step, the tool calls seen. What a model streams (text,
    reasoning, a tool call's start and arguments) opens a step, the next one after a step's tool
    results; a whole call and the answer name their step, and a call of a later step opens it."""

    __slots__ = (
        "_after_tools",
        "_delta_prefix",
        "_reasoning",
        "_step",
        "_step_number",
        "_streamed_text",
        "_text",
        "_tools",
        "message_id",
    )

    def __init__(self, part: Part, *, new_message: bool) -> None:
        super().__init__()
        self.message_id = part.id(MESSAGE_PREFIX) if new_message else None
        self._text: str | None = None
        self._reasoning: str | None = None
        self._step = False
        self._step_number: object = None
        self._after_tools = False
        self._streamed_text = False
        self._tools: dict[str, str] = {}
        """Tool calls whose input was started, by call id: their tool's name."""
        self._delta_prefix = b""

    def opening(self) -> bytes:
        start: dict[str, Any] = {"type": "start"}
        if self.message_id is not None:
            start["messageId"] = self.message_id
        return event(start)

    def more_text(self, text: str, seq: int) -> bytes | None:
        if self._text is None:
            return None
        return self._delta_prefix + json_string(text).encode() + _DELTA_END

    def frames(self, seq: int, events: Sequence[dict[str, Any] | bytes]) -> bytes:
        return b"".join(frame if isinstance(frame, bytes) else event(frame) for frame in events)

    def closing(self) -> bytes:
        return DONE

    def expired(self, exc: ChunksExpired) -> bytes:
        return event({"type": "error", "errorText": "this answer's events are no longer kept"}) + DONE

    # the hooks: chunks → UI message chunks ------------------------------------------------------

    def on_text(self, chunk: TextChunk) -> Frames:
        out = self._open_step([], None)
        self._text_delta(chunk.text, chunk.seq, out)
        return out

    def on_reasoning(self, chunk: ReasoningChunk) -> Frames:
        out = self._open_step([], None)
        if self._reasoning is None:
            self._close_parts(out)
            self._reasoning = f"rsn_{chunk.seq}"
            out.append({"type": "reasoning-start", "id": self._reasoning})
        out.append({"type": "reasoning-delta", "id": self._reasoning, "delta": chunk.text})
        return out

    def on_tool_call_start(self, chunk: ToolStartChunk) -> Frames:
        out = self._close_parts(self._open_step([], None))
        self._input_start(chunk.id, chunk.name, out)
        return out

    def on_tool_args(self, chunk: ToolArgsChunk) -> Frames:
        out = self._open_step([], None)
        if chunk.id in self._tools:
            out.append({"type": "tool-input-delta", "toolCallId": chunk.id, "inputTextDelta": chunk.delta})
        return out

    def on_tool_call(self, chunk: ToolCallChunk) -> Frames:
        out = self._close_parts(self._open_step([], chunk.step))
        self._input_start(chunk.id, chunk.name, out)
        out.append(
            {
                "type": "tool-input-available",
                "toolCallId": chunk.id,
                "toolName": chunk.name,
                "input": _input(chunk.arguments),
            }
        )
        return out

    def on_tool_result(self, chunk: ToolResultChunk) -> Frames:
        call_id = chunk.call_id
        if call_id not in self._tools:  # a result for a call this answer never showed (a nested agent's)
            return []
        out = self._close_parts([])
        self._after_tools = True
        if chunk.is_error:
            out.append({"type": "tool-output-error", "toolCallId": call_id, "errorText": chunk.content})
        else:
            out.append({"type": "tool-output-available", "toolCallId": call_id, "output": chunk.content})
        return out

    def on_final(self, chunk: FinalChunk) -> Frames:
        out = self._open_step([], chunk.step)
        if not self._streamed_text:
            text = chunk.answer_text()
            if text:
                self._text_delta(text, chunk.seq, out)
        return out

    def on_error(self, chunk: ErrorChunk) -> Frames:
        out = self._close_parts([])
        out.append({"type": "error", "errorText": chunk.summary})
        return out

    def on_done(self, chunk: DoneChunk) -> Frames:
        out = self._close_parts([])
        if chunk.status == "awaiting_approval":
            out.append({"type": "error", "errorText": "the run waits for a person's approval"})
        if self._step:
            out.append({"type": "finish-step"})
            self._step = False
        out.append({"type": "finish", "finishReason": _FINISH.get(chunk.status, "other")})
        return out

    def _open_step(self, out: Frames, number: object) -> Frames:
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
        return out

    def _text_delta(self, text: str, seq: int, out: Frames) -> None:
        if self._text is None:
            self._close_parts(out)
            self._text = f"txt_{seq}"
            out.append({"type": "text-start", "id": self._text})
            self._delta_prefix = b'data: {"type":"text-delta","id":"' + self._text.encode() + b'","delta":'
        self._streamed_text = True
        out.append(self._delta_prefix + json_string(text).encode() + _DELTA_END)

    def _close_parts(self, out: Frames) -> Frames:
        if self._text is not None:
            out.append({"type": "text-end", "id": self._text})
            self._text = None
        if self._reasoning is not None:
            out.append({"type": "reasoning-end", "id": self._reasoning})
            self._reasoning = None
        return out

    def _input_start(self, call_id: str, name: str, out: Frames) -> None:
        if call_id not in self._tools:
            self._tools[call_id] = name
            out.append({"type": "tool-input-start", "toolCallId": call_id, "toolName": name})


__all__ = ["DONE", "HEADER", "MESSAGE_PREFIX", "UIMessageFraming", "event"]
