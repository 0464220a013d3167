"""Typed chunks, and the one base every protocol's translator is built on.

A run's chunks (:mod:`kanawa.server.runs.chunks`: ``{agent, type, data, seq}``) reach a protocol
as the writer's own :class:`~kanawa.server.runs.chunks.Chunk` (a stream at the head of its run) or
as stored JSON text (a resume, a client behind, another process's run). :func:`typed_chunk` parses
either, once, into one of the classes below — one per row of the chunk table — so a translator reads
fields, never ``data.get("…")`` of an untyped dict, and never branches on a type string:

=====================  ========================  ==============================================
chunk ``type``         class                     hook
=====================  ========================  ==============================================
``delta`` ``text``     :class:`TextChunk`        :meth:`ChunkHooks.on_text`
``delta`` ``reasoning`` :class:`ReasoningChunk`  :meth:`ChunkHooks.on_reasoning`
``tool_call_start``    :class:`ToolStartChunk`   :meth:`ChunkHooks.on_tool_call_start`
``tool_call_delta``    :class:`ToolArgsChunk`    :meth:`ChunkHooks.on_tool_args`
``tool_call``          :class:`ToolCallChunk`    :meth:`ChunkHooks.on_tool_call`
``tool_response``      :class:`ToolResultChunk`  :meth:`ChunkHooks.on_tool_result`
``final``              :class:`FinalChunk`       :meth:`ChunkHooks.on_final`
``usage``              :class:`UsageChunk`       :meth:`ChunkHooks.on_usage`
``error``              :class:`ErrorChunk`       :meth:`ChunkHooks.on_error`
``done``               :class:`DoneChunk`        :meth:`ChunkHooks.on_done`
``handoff_start/end``  :class:`HandoffChunk`     :meth:`ChunkHooks.on_handoff`
``approval_required``  :class:`ApprovalChunk`    :meth:`ChunkHooks.on_approval`
anything else          :class:`OtherChunk`       :meth:`ChunkHooks.on_other`
=====================  ========================  ==============================================

:class:`ChunkHooks` dispatches a typed chunk to its hook (a table from class to hook that each
subclass builds once, with its own overrides: no lookup by string) and leaves out chunks of agents
working inside the run (a handoff's target: their data carry ``depth``) unless the protocol takes
that kind from them (:attr:`ChunkHooks.NESTED`). Every hook gives nothing by default; a protocol
overrides the ones its wire has events for.

:class:`ChunkFraming` is a hooks class that is also a stream's encoder
(:class:`~kanawa.server.http.event_stream.RunEventStream`'s ``encode``): it owns the ended state
(nothing after the terminal chunk), the text-delta fast path (a batch of one text delta the writer
just made is framed by :meth:`ChunkFraming.more_text` from a template, without building a typed
chunk or an event — the one chunk a stream has thousands of) and the loop over a batch, and a protocol
gives how its events become bytes (:meth:`ChunkFraming.frames`) and what closes its stream
(:meth:`ChunkFraming.closing`).
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Final, Generic, TypeVar

from kanawa.server.runs.chunks import Chunk
from kanawa.server.store.base import ChunksExpired, Entry

E = TypeVar("E")
"""What a protocol's hooks give: its events (objects, or frames already encoded)."""


def _spaced_json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


@dataclass(frozen=True, slots=True)
class RunChunk:
    """One chunk of a run, parsed: who wrote it, its seq, whether an agent inside the run did."""

    agent: str
    seq: int
    nested: bool
    """A chunk of an agent working inside the run (a handoff's target), not of the served agent."""


@dataclass(frozen=True, slots=True)
class TextChunk(RunChunk):
    text: str


@dataclass(frozen=True, slots=True)
class ReasoningChunk(RunChunk):
    text: str


@dataclass(frozen=True, slots=True)
class ToolStartChunk(RunChunk):
    """The model began a tool call (before its arguments, long before it runs)."""

    id: str
    name: str


@dataclass(frozen=True, slots=True)
class ToolArgsChunk(RunChunk):
    id: str
    delta: str


@dataclass(frozen=True, slots=True)
class ToolCallChunk(RunChunk):
    """A whole tool call, with its arguments as the model wrote them (text). The loop records it
    with its result once the tool ran — or, for a client's tool, when the run stops for it."""

    step: object
    id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class ToolResultChunk(RunChunk):
    call_id: str
    name: str
    content: str
    is_error: bool


@dataclass(frozen=True, slots=True)
class FinalChunk(RunChunk):
    """The answer: its ``text`` and its ``output`` (JSON data for an agent with an output type)."""

    step: object
    output: Any
    text: str

    def answer_text(self, dumps: Callable[[Any], str] = _spaced_json) -> str:
        """The answer as text: its text, else its output (a string as is, anything else as JSON
        written by ``dumps``)."""
        if self.text or self.output is None:
            return self.text
        return self.output if isinstance(self.output, str) else dumps(self.output)


@dataclass(frozen=True, slots=True)
class UsageChunk(RunChunk):
    usage: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ErrorChunk(RunChunk):
    data: dict[str, Any]
    """``{"code", "message"}`` as the run wrote them."""

    @property
    def code(self) -> str:
        return str(self.data.get("code", "error"))

    @property
    def message(self) -> str:
        return str(self.data.get("message", "the run failed"))

    @property
    def summary(self) -> str:
        """``code: message``, as the run wrote them (what a protocol's one error text says)."""
        return f"{self.data.get('code')}: {self.data.get('message')}"


@dataclass(frozen=True, slots=True)
class DoneChunk(RunChunk):
    status: str


@dataclass(frozen=True, slots=True)
class HandoffChunk(RunChunk):
    """A handoff to ``target`` began (``started``) or ended."""

    target: str
    started: bool


@dataclass(frozen=True, slots=True)
class ApprovalChunk(RunChunk):
    calls: list[Any]


@dataclass(frozen=True, slots=True)
class OtherChunk(RunChunk):
    """A chunk no protocol frames as such (thinking, guardrail, route, an application's own)."""

    type: str
    data: object


def _text(data: Mapping[str, Any], key: str, default: str = "") -> str:
    value = data.get(key, default)
    return value if type(value) is str else str(value)


def _delta(agent: str, seq: int, nested: bool, data: Mapping[str, Any]) -> RunChunk:
    if "text" in data:
        return TextChunk(agent, seq, nested, _text(data, "text"))
    if "reasoning" in data:
        return ReasoningChunk(agent, seq, nested, _text(data, "reasoning"))
    return OtherChunk(agent, seq, nested, "delta", dict(data))


def _arguments(value: object) -> str:
    return value if isinstance(value, str) else _spaced_json(value)


def _calls(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


_Parse = Callable[[str, int, bool, Mapping[str, Any]], RunChunk]
_PARSERS: Final[dict[str, _Parse]] = {
    "delta": _delta,
    "tool_call_start": lambda a, s, n, d: ToolStartChunk(a, s, n, _text(d, "id"), _text(d, "name")),
    "tool_call_delta": lambda a, s, n, d: ToolArgsChunk(a, s, n, _text(d, "id"), _text(d, "delta")),
    "tool_call": lambda a, s, n, d: ToolCallChunk(
        a, s, n, d.get("step"), _text(d, "id"), _text(d, "name"), _arguments(d.get("arguments", ""))
    ),
    "tool_response": lambda a, s, n, d: ToolResultChunk(
        a, s, n, _text(d, "call_id"), _text(d, "name"), _text(d, "content"), bool(d.get("is_error"))
    ),
    "final": lambda a, s, n, d: FinalChunk(a, s, n, d.get("step"), d.get("output"), str(d.get("text") or "")),
    "usage": lambda a, s, n, d: UsageChunk(a, s, n, dict(d)),
    "error": lambda a, s, n, d: ErrorChunk(a, s, n, dict(d)),
    "done": lambda a, s, n, d: DoneChunk(a, s, n, _text(d, "status", "completed")),
    "handoff_start": lambda a, s, n, d: HandoffChunk(a, s, n, _text(d, "target"), True),
    "handoff_end": lambda a, s, n, d: HandoffChunk(a, s, n, _text(d, "target"), False),
    "approval_required": lambda a, s, n, d: ApprovalChunk(a, s, n, _calls(d.get("calls"))),
}
"""How each chunk type of :mod:`kanawa.server.runs.chunks`'s table becomes its class."""


def parse_chunk(agent: object, kind: object, data: object, seq: int) -> RunChunk:
    """A chunk's fields as its class (data that is not an object: an :class:`OtherChunk`)."""
    who = agent if type(agent) is str else str(agent or "")
    if not isinstance(data, dict):
        return OtherChunk(who, seq, False, str(kind), data)
    nested = "depth" in data
    parse = _PARSERS.get(kind) if type(kind) is str else None
    if parse is None:
        return OtherChunk(who, seq, nested, str(kind), data)
    return parse(who, seq, nested, data)


def typed_chunk(entry: Entry) -> RunChunk:
    """An entry's chunk, typed: from the writer's own chunk when the run writes in this process (no
    JSON parsed), from its stored text otherwise."""
    source = entry.source
    if isinstance(source, Chunk):
        return parse_chunk(source.agent, source.type, source.data, entry.seq)
    raw = json.loads(entry.text)
    if not isinstance(raw, dict):
        return OtherChunk("", entry.seq, False, "", raw)
    return parse_chunk(raw.get("agent"), raw.get("type"), raw.get("data"), entry.seq)


def typed_dict(chunk: Mapping[str, Any]) -> RunChunk:
    """A chunk given as its JSON object (``{agent, type, data, seq}``), typed."""
    seq = chunk.get("seq")
    seq = seq if type(seq) is int else 0
    return parse_chunk(chunk.get("agent"), chunk.get("type"), chunk.get("data"), seq)


def text_delta(entry: Entry) -> str | None:
    """The text of a text delta of the served agent that the writer handed over itself — the chunk
    a stream has thousands of, framed without a typed chunk — or ``None`` for any other entry (one
    read back from the store included)."""
    source = entry.source
    if type(source) is Chunk and source.type == "delta":
        data = source.data
        if type(data) is dict and len(data) == 1:  # a nested agent's delta also has its depth
            text = data.get("text")
            if type(text) is str:
                return text
    return None


class ChunkHooks(Generic[E]):
    """A protocol's translation of typed chunks: one hook per chunk class, each giving the
    protocol's events for it (nothing by default). :meth:`feed` is the dispatch."""

    __slots__ = ()

    NESTED: ClassVar[frozenset[type[RunChunk]]] = frozenset()
    """The chunk classes taken from agents working inside the run too (others of theirs are left
    out: only the served agent's answer is the protocol's)."""

    _HOOKS: ClassVar[dict[type[RunChunk], Callable[[Any, Any], Sequence[Any]]]]
    """Each chunk class's hook, as this class has it (:meth:`__init_subclass__`)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._bind_hooks()

    @classmethod
    def _bind_hooks(cls) -> None:
        cls._HOOKS = {
            TextChunk: cls.on_text,
            ReasoningChunk: cls.on_reasoning,
            ToolStartChunk: cls.on_tool_call_start,
            ToolArgsChunk: cls.on_tool_args,
            ToolCallChunk: cls.on_tool_call,
            ToolResultChunk: cls.on_tool_result,
            FinalChunk: cls.on_final,
            UsageChunk: cls.on_usage,
            ErrorChunk: cls.on_error,
            DoneChunk: cls.on_done,
            HandoffChunk: cls.on_handoff,
            ApprovalChunk: cls.on_approval,
            OtherChunk: cls.on_other,
        }

    def feed(self, chunk: RunChunk) -> Sequence[E]:
        """The events ``chunk`` becomes: its class's hook's."""
        if chunk.nested and type(chunk) not in self.NESTED:
            return ()
        events: Sequence[E] = self._HOOKS[type(chunk)](self, chunk)
        return events

    def on_text(self, chunk: TextChunk) -> Sequence[E]:
        return ()

    def on_reasoning(self, chunk: ReasoningChunk) -> Sequence[E]:
        return ()

    def on_tool_call_start(self, chunk: ToolStartChunk) -> Sequence[E]:
        return ()

    def on_tool_args(self, chunk: ToolArgsChunk) -> Sequence[E]:
        return ()

    def on_tool_call(self, chunk: ToolCallChunk) -> Sequence[E]:
        return ()

    def on_tool_result(self, chunk: ToolResultChunk) -> Sequence[E]:
        return ()

    def on_final(self, chunk: FinalChunk) -> Sequence[E]:
        return ()

    def on_usage(self, chunk: UsageChunk) -> Sequence[E]:
        return ()

    def on_error(self, chunk: ErrorChunk) -> Sequence[E]:
        return ()

    def on_done(self, chunk: DoneChunk) -> Sequence[E]:
        return ()

    def on_handoff(self, chunk: HandoffChunk) -> Sequence[E]:
        return ()

    def on_approval(self, chunk: ApprovalChunk) -> Sequence[E]:
        return ()

    def on_other(self, chunk: OtherChunk) -> Sequence[E]:
        return ()


ChunkHooks._bind_hooks()


class ChunkFraming(ChunkHooks[E], ABC):
    """A protocol's stream: its hooks, and the bytes of each batch of entries (module docstring).
    An instance is a :class:`~kanawa.server.http.protocols.run_parts.Framing`."""

    __slots__ = ("ended",)

    def __init__(self) -> None:
        self.ended = False
        """The terminal chunk was framed: nothing more is sent."""

    def opening(self) -> bytes:
        """The events before the first chunk (sent with the headers)."""
        return b""

    def more_text(self, text: str, seq: int) -> bytes | None:
        """The frame of one more text delta of the served agent (chunk ``seq``) when the protocol
        can write it from a template now, else ``None`` (the delta is then typed and fed)."""
        return None

    @abstractmethod
    def frames(self, seq: int, events: Sequence[E]) -> bytes:
        """The bytes of the events chunk ``seq`` became."""

    def closing(self) -> bytes:
        """What follows the terminal chunk's events (the stream's last bytes)."""
        return b""

    @abstractmethod
    def expired(self, exc: ChunksExpired) -> bytes:
        """What the client gets when the stream's chunks are no longer kept."""

    def __call__(self, entries: Sequence[Entry]) -> bytes:
        if self.ended:
            return b""
        if len(entries) == 1:  # the common batch: one more text delta the writer just made
            entry = entries[0]
            source = entry.source  # text_delta(entry), inlined: this runs for nearly every chunk
            if type(source) is Chunk and source.type == "delta":
                data = source.data
                if type(data) is dict and len(data) == 1:
                    text = data.get("text")
                    if type(text) is str:
                        frame = self.more_text(text, entry.seq)
                        if frame is not None:
                            return frame
        out = []
        more_text = self.more_text
        for entry in entries:  # a batch behind the head: each text delta the writer made still framed at once
            text = text_delta(entry)
            frame = None if text is None else more_text(text, entry.seq)
            if frame is not None:
                out.append(frame)
            else:
                events = self.feed(typed_chunk(entry))
                if events:
                    out.append(self.frames(entry.seq, events))
            if entry.terminal:
                self.ended = True
                out.append(self.closing())
                break
        return out[0] if len(out) == 1 else b"".join(out)


__all__ = [
    "ApprovalChunk",
    "ChunkFraming",
    "ChunkHooks",
    "DoneChunk",
    "ErrorChunk",
    "FinalChunk",
    "HandoffChunk",
    "OtherChunk",
    "ReasoningChunk",
    "RunChunk",
    "TextChunk",
    "ToolArgsChunk",
    "ToolCallChunk",
    "ToolResultChunk",
    "ToolStartChunk",
    "UsageChunk",
    "parse_chunk",
    "text_delta",
    "typed_chunk",
    "typed_dict",
]
