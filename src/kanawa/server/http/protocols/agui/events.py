"""A run's chunks → AG-UI events, framed as server-sent events with ids a reconnect resumes from.

One AG-UI run is one *part* of a kanawa run (:class:`~..run_parts.Part`): a thread's run goes on
part after part (the frontend's tool results, the next question), each ending with a ``done`` chunk.
:class:`AguiTranslator` turns the chunks of a part into the protocol's events, built with the
``ag-ui-protocol`` package's types and written by its ``EventEncoder``:

======================================  ==========================================================
chunk                                   events
======================================  ==========================================================
(the part's start)                      ``RUN_STARTED``, ``STATE_SNAPSHOT`` of the input's state
``delta`` (text, the served agent)      ``TEXT_MESSAGE_START`` (the first), ``TEXT_MESSAGE_CONTENT``
``tool_call_start`` / ``_delta``        ``TOOL_CALL_START`` / ``TOOL_CALL_ARGS`` (a message open
                                        before it ends first)
``tool_call``                           ``TOOL_CALL_END`` (with ``START``/``ARGS`` first when the
                                        model's call was not streamed)
``tool_response``                       ``TOOL_CALL_RESULT`` (the agent's own tools: a frontend
                                        tool's result comes with the next input)
``handoff_start`` / ``handoff_end``     ``STEP_STARTED`` / ``STEP_FINISHED`` named after the agent
                                        handed to (what that agent says inside is not the answer)
``final``                               the answer as one message when it was not streamed;
                                        ``STATE_DELTA``/``STATE_SNAPSHOT`` when it is an object
``done``                                what is still open is closed, then ``RUN_FINISHED`` —
                                        ``outcome`` ``pendingToolCallIds`` for the frontend's calls,
                                        ``interrupt`` for an approval, ``cancelled`` — or
                                        ``RUN_ERROR`` for a run that failed
======================================  ==========================================================

**State.** An agent has AG-UI state when its answer is structured: an agent whose output type is an
object (``Agent(..., output_type=Recipe)``) answers with the application's new state. The input's
``state`` is established at the run's start (``STATE_SNAPSHOT``) and shown to the model
(:mod:`.inputs`); the answer becomes a ``STATE_DELTA`` (an RFC 6902 patch from the input's
state) — or a ``STATE_SNAPSHOT`` when the input carried none, or on a resumed stream, which does not
have the input (so a client that lost the first snapshot still ends with the state).

**Ids.** Every event goes out with an SSE ``id:`` of ``<part>:<seq>:<k>``: the part's first seq, the
chunk it came from (the part's first seq for ``RUN_STARTED``) and its place among that chunk's
events. A reconnect sends the last one back (``Last-Event-ID``); the part is translated again from
its start and the events up to that id are skipped, so the resumed stream goes on with the very next
event — no gap, no duplicate.

The one event a stream has thousands of, a text delta the run's writer hands over while a message is
open, is framed from a template of the encoder's own output (:meth:`AguiTranslator.more_text`),
without building an event object.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, ClassVar, Final

from ag_ui.core import (
    BaseEvent,
    Interrupt,
    RunErrorEvent,
    RunFinishedCancelledOutcome,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunFinishedSuccessOutcome,
    RunStartedEvent,
    StateDeltaEvent,
    StateSnapshotEvent,
    StepFinishedEvent,
    StepStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)
from ag_ui.encoder import EventEncoder

from kanawa.server.http.protocols.framing import (
    ChunkFraming,
    DoneChunk,
    ErrorChunk,
    FinalChunk,
    HandoffChunk,
    RunChunk,
    TextChunk,
    ToolArgsChunk,
    ToolCallChunk,
    ToolResultChunk,
    ToolStartChunk,
)
from kanawa.server.http.protocols.run_parts import json_string
from kanawa.server.store.base import ChunksExpired

ENCODER: Final = EventEncoder()
_EVENT_ID: Final = re.compile(r"^(?P<part>[0-9]{1,18}):(?P<seq>[0-9]{1,18}):(?P<k>[0-9]{1,6})$")
EventId = tuple[int, int, int]
"""``(part, seq, k)`` of an event (module docstring)."""


def parse_event_id(text: str) -> EventId | None:
    """An event id a client sent back, or ``None`` when it is not one of ours."""
    match = _EVENT_ID.match(text.strip())
    if match is None:
        return None
    return int(match["part"]), int(match["seq"]), int(match["k"])


def json_patch(before: Any, after: Any, path: str = "") -> list[dict[str, Any]]:
    """An RFC 6902 patch that turns ``before`` into ``after``: objects key by key, anything else
    replaced whole (a list included)."""
    if isinstance(before, dict) and isinstance(after, dict):
        ops: list[dict[str, Any]] = []
        for key in before:
            if key not in after:
                ops.append({"op": "remove", "path": f"{path}/{_pointer(key)}"})
        for key, value in after.items():
            where = f"{path}/{_pointer(key)}"
            if key not in before:
                ops.append({"op": "add", "path": where, "value": value})
            elif before[key] != value or type(before[key]) is not type(value):
                ops.extend(json_patch(before[key], value, where))
        return ops
    if before == after and type(before) is type(after):
        return []
    return [{"op": "replace", "path": path, "value": after}]


def _pointer(key: str) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")


class AguiTranslator(ChunkFraming[BaseEvent]):
    """One AG-UI run's events from its part's chunks (module docstring), framed with their ids;
    those up to ``resume`` (a reconnect's ``Last-Event-ID``) left out."""

    NESTED: ClassVar[frozenset[type[RunChunk]]] = frozenset({HandoffChunk, DoneChunk, ErrorChunk})
    """A handoff is a step whoever makes it, and a nested agent's error is the run's."""

    def __init__(
        self,
        *,
        thread_id: str,
        run_id: str,
        run: str,
        after: int,
        state: Any = None,
        resume: EventId | None = None,
    ) -> None:
        super().__init__()
        self.thread_id, self.run_id = thread_id, run_id
        """The AG-UI thread and run, as the run's first and last events name them."""
        self.run = run
        """The kanawa run (message ids are made from it and a chunk's seq)."""
        self.after = after
        self.state = state
        """The input's state (``None``: not known, or none)."""
        self.resume = resume
        self.message: str | None = None
        """The text message open now."""
        self.spoke = False
        self.calls: dict[str, bool] = {}
        """Tool calls started in this run → whether they ended."""
        self.steps: list[str] = []
        self.pending: list[str] = []
        """Tool calls ended in this run, in order (those without a result are the frontend's, or
        wait for approval)."""
        self.answered: set[str] = set()
        self.error: tuple[str, str] | None = None
        self.output: Any = None
        self._text_frame = b""

    # -- the stream ---------------------------------------------------------------------------------

    def opening_events(self) -> list[BaseEvent]:
        started: list[BaseEvent] = [RunStartedEvent(thread_id=self.thread_id, run_id=self.run_id)]
        if self.state is not None:
            started.append(StateSnapshotEvent(snapshot=self.state))
        return started

    def opening(self) -> bytes:
        return self.frames(self.after, self.opening_events())

    def frames(self, seq: int, events: Sequence[BaseEvent]) -> bytes:
        frames = []
        for k, event in enumerate(events):
            if self.resume is not None:
                if (seq, k) <= self.resume[1:]:
                    continue
                self.resume = None
            frames.append(frame((self.after, seq, k), event))
        return b"".join(frames)

    def expired(self, exc: ChunksExpired) -> bytes:
        event = RunErrorEvent(message="this run's events are no longer kept", code="chunks_expired")
        return ENCODER.encode(event).encode()

    # -- the hooks ----------------------------------------------------------------------------------

    def on_handoff(self, chunk: HandoffChunk) -> list[BaseEvent]:
        name = chunk.target
        if chunk.started:
            self.steps.append(name)
            return [*self._end_message(), StepStartedEvent(step_name=name)]
        if name in self.steps:
            self.steps.remove(name)
            return [StepFinishedEvent(step_name=name)]
        return []

    def on_error(self, chunk: ErrorChunk) -> list[BaseEvent]:
        self.error = (chunk.code, chunk.message)
        return []

    def on_done(self, chunk: DoneChunk) -> list[BaseEvent]:
        return self._done(chunk.status)

    def on_text(self, chunk: TextChunk) -> list[BaseEvent]:
        return self._text(chunk.text, chunk.seq) if chunk.text else []

    def on_tool_call_start(self, chunk: ToolStartChunk) -> list[BaseEvent]:
        return self._start_call(chunk.id, chunk.name)

    def on_tool_args(self, chunk: ToolArgsChunk) -> list[BaseEvent]:
        if chunk.delta and self.calls.get(chunk.id) is False:
            return [ToolCallArgsEvent(tool_call_id=chunk.id, delta=chunk.delta)]
        return []

    def on_tool_call(self, chunk: ToolCallChunk) -> list[BaseEvent]:
        return self._call(chunk.id, chunk.name, chunk.arguments)

    def on_tool_result(self, chunk: ToolResultChunk) -> list[BaseEvent]:
        call = chunk.call_id
        if call not in self.calls:
            return []
        self.answered.add(call)
        return [
            ToolCallResultEvent(
                message_id=f"{self.run}_{chunk.seq}", tool_call_id=call, content=chunk.content
            )
        ]

    def on_final(self, chunk: FinalChunk) -> list[BaseEvent]:
        return self._final(chunk)

    def more_text(self, text: str, seq: int) -> bytes | None:
        """The frame of a text delta while a message is open (what :meth:`feed` and the encoder
        give it), or ``None`` when none is (the delta opens one: :meth:`feed`)."""
        if self.message is None or not text or self.resume is not None:
            return None
        return self._text_frame % (self.after, seq, json_string(text).encode())

    def _text(self, text: str, seq: int) -> list[BaseEvent]:
        self.spoke = True
        events: list[BaseEvent] = []
        if self.message is None:
            self.message = f"{self.run}_{seq}"
            events.append(TextMessageStartEvent(message_id=self.message, role="assistant"))
            empty = ENCODER.encode(TextMessageContentEvent(message_id=self.message, delta="")).encode()
            head, tail = empty.split(b'"delta":""', 1)
            self._text_frame = b"id: %d:%d:0\n" + head.replace(b"%", b"%%") + b'"delta":%b' + tail
        events.append(TextMessageContentEvent(message_id=self.message, delta=text))
        return events

    def _end_message(self) -> list[BaseEvent]:
        if self.message is None:
            return []
        message, self.message = self.message, None
        return [TextMessageEndEvent(message_id=message)]

    def _start_call(self, call: str, name: str) -> list[BaseEvent]:
        if not call or call in self.calls:
            return []
        self.calls[call] = False
        return [*self._end_message(), ToolCallStartEvent(tool_call_id=call, tool_call_name=name)]

    def _call(self, call: str, name: str, arguments: str) -> list[BaseEvent]:
        if not call:
            return []
        events: list[BaseEvent] = []
        if call not in self.calls:
            events.extend(self._start_call(call, name))
            if arguments:
                events.append(ToolCallArgsEvent(tool_call_id=call, delta=arguments))
        if self.calls.get(call) is False:
            self.calls[call] = True
            self.pending.append(call)
            events.append(ToolCallEndEvent(tool_call_id=call))
        return events

    def _final(self, chunk: FinalChunk) -> list[BaseEvent]:
        output = chunk.output
        text = chunk.text
        events: list[BaseEvent] = []
        if not self.spoke and text:
            events.extend(self._text(text, chunk.seq))
        events.extend(self._end_message())
        self.output = output if output is not None else text
        if isinstance(output, dict):
            if self.state is None:
                events.append(StateSnapshotEvent(snapshot=output))
            else:
                patch = json_patch(self.state, output)
                if patch:
                    events.append(StateDeltaEvent.model_validate({"delta": patch}))
            self.state = output
        return events

    def _done(self, status: str) -> list[BaseEvent]:
        events = self._end_message()
        for call, ended in self.calls.items():
            if not ended:
                events.append(ToolCallEndEvent(tool_call_id=call))
        while self.steps:
            events.append(StepFinishedEvent(step_name=self.steps.pop()))
        waiting = [call for call in self.pending if call not in self.answered]
        if status == "completed":
            events.append(self._finished(result=self.output))
        elif status == "awaiting_tool_output":
            events.append(self._finished(outcome=RunFinishedSuccessOutcome(pending_tool_call_ids=waiting)))
        elif status == "awaiting_approval":
            asked = [
                Interrupt(id=call, reason="approval_required", tool_call_id=call) for call in waiting
            ] or [Interrupt(id=self.run, reason="approval_required")]
            events.append(self._finished(outcome=RunFinishedInterruptOutcome(interrupts=asked)))
        elif status == "cancelled":
            events.append(self._finished(outcome=RunFinishedCancelledOutcome()))
        else:
            code, message = self.error or ("run_failed", "the run failed")
            events.append(RunErrorEvent(message=message, code=code))
        return events

    def _finished(
        self,
        *,
        result: Any = None,
        outcome: RunFinishedSuccessOutcome
        | RunFinishedInterruptOutcome
        | RunFinishedCancelledOutcome
        | None = None,
    ) -> RunFinishedEvent:
        return RunFinishedEvent(thread_id=self.thread_id, run_id=self.run_id, result=result, outcome=outcome)


def frame(event_id: EventId, event: BaseEvent) -> bytes:
    """One event as a server-sent event with its id."""
    return b"id: %d:%d:%d\n%b" % (*event_id, ENCODER.encode(event).encode())


__all__ = [
    "ENCODER",
    "AguiTranslator",
    "EventId",
    "frame",
    "json_patch",
    "parse_event_id",
]
