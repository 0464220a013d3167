"""The framing base every protocol's translator is built on (``protocols/framing.py``): a chunk is
typed the same whether the writer hands it over or it is read back from the store, each class
reaches its own hook (a subclass's override), an agent inside the run is left out unless the
protocol takes that kind from it, and a stream frames nothing after its terminal chunk."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, ClassVar

import pytest

from kanawa.server.http.protocols.framing import (
    ApprovalChunk,
    ChunkFraming,
    DoneChunk,
    ErrorChunk,
    FinalChunk,
    HandoffChunk,
    OtherChunk,
    ReasoningChunk,
    RunChunk,
    TextChunk,
    ToolArgsChunk,
    ToolCallChunk,
    ToolResultChunk,
    ToolStartChunk,
    UsageChunk,
    typed_chunk,
)
from kanawa.server.runs.chunks import Chunk
from kanawa.server.store.base import ChunksExpired, Entry

ROWS: list[tuple[str, dict[str, Any], type[RunChunk]]] = [
    ("delta", {"text": "hi"}, TextChunk),
    ("delta", {"reasoning": "hmm"}, ReasoningChunk),
    ("tool_call_start", {"index": 0, "id": "c1", "name": "look"}, ToolStartChunk),
    ("tool_call_delta", {"index": 0, "id": "c1", "delta": "{"}, ToolArgsChunk),
    ("tool_call", {"step": 1, "id": "c1", "name": "look", "arguments": "{}"}, ToolCallChunk),
    (
        "tool_response",
        {"step": 1, "call_id": "c1", "name": "look", "content": "x", "is_error": True},
        ToolResultChunk,
    ),
    ("final", {"step": 1, "output": {"a": 1}, "text": ""}, FinalChunk),
    ("usage", {"input_tokens": 1, "output_tokens": 2}, UsageChunk),
    ("error", {"code": "LLMCallFailed", "message": "down"}, ErrorChunk),
    ("done", {"status": "completed", "termination_reason": None, "cost_usd": None}, DoneChunk),
    ("handoff_start", {"source": "a", "target": "b", "depth": 1}, HandoffChunk),
    ("handoff_end", {"source": "a", "target": "b", "depth": 1}, HandoffChunk),
    ("approval_required", {"step": 1, "calls": [{"id": "c1", "name": "send"}]}, ApprovalChunk),
    ("thinking", {"step": 1, "reason": "r", "text": "t"}, OtherChunk),
]


def _entry(seq: int, kind: str, data: dict[str, Any], *, sourced: bool, agent: str = "a") -> Entry:
    chunk = Chunk(agent, kind, data, time.time())
    return Entry(seq, chunk.encode(seq), kind == "done", chunk if sourced else None)


@pytest.mark.parametrize(("kind", "data", "cls"), ROWS, ids=[f"{r[0]}-{r[2].__name__}" for r in ROWS])
def test_a_chunk_is_typed_the_same_from_the_writer_and_from_the_store(
    kind: str, data: dict[str, Any], cls: type[RunChunk]
) -> None:
    from_writer = typed_chunk(_entry(7, kind, data, sourced=True))
    read_back = typed_chunk(_entry(7, kind, data, sourced=False))
    assert type(from_writer) is cls
    assert from_writer == read_back
    assert (from_writer.agent, from_writer.seq, from_writer.nested) == ("a", 7, "depth" in data)


def test_fields_are_read_from_the_chunk_table() -> None:
    result = typed_chunk(_entry(3, *ROWS[5][:2], sourced=True))
    assert result == ToolResultChunk("a", 3, False, "c1", "look", "x", True)
    final = typed_chunk(_entry(4, *ROWS[6][:2], sourced=True))
    assert isinstance(final, FinalChunk)
    assert final.answer_text() == '{"a": 1}'  # no text streamed: the output, as JSON
    error = typed_chunk(_entry(5, *ROWS[8][:2], sourced=False))
    assert isinstance(error, ErrorChunk)
    assert error.summary == "LLMCallFailed: down"


class Recording(ChunkFraming[str]):
    """Names each chunk its hooks saw; a template for text while a message is open."""

    NESTED: ClassVar[frozenset[type[RunChunk]]] = frozenset({HandoffChunk})

    def __init__(self) -> None:
        super().__init__()
        self.open = False

    def more_text(self, text: str, seq: int) -> bytes | None:
        return f"<fast {seq} {text}>".encode() if self.open else None

    def frames(self, seq: int, events: Sequence[str]) -> bytes:
        return "".join(f"<{seq} {event}>" for event in events).encode()

    def closing(self) -> bytes:
        return b"<end>"

    def expired(self, exc: ChunksExpired) -> bytes:
        return b"<gone>"

    def on_text(self, chunk: TextChunk) -> list[str]:
        self.open = True
        return [f"text {chunk.text}"]

    def on_tool_call_start(self, chunk: ToolStartChunk) -> list[str]:
        return [f"start {chunk.name}"]

    def on_handoff(self, chunk: HandoffChunk) -> list[str]:
        return [f"handoff {chunk.target} {chunk.started}"]

    def on_done(self, chunk: DoneChunk) -> list[str]:
        return [f"done {chunk.status}"]


def test_each_chunk_reaches_its_hook_and_nothing_is_framed_after_the_end() -> None:
    framing = Recording()
    first = framing([_entry(1, "delta", {"text": "Hel"}, sourced=True)])
    assert first == b"<1 text Hel>"  # no message open yet: typed and fed
    assert framing([_entry(2, "delta", {"text": "lo"}, sourced=True)]) == b"<fast 2 lo>"
    assert framing([_entry(3, "delta", {"text": "!"}, sourced=False)]) == b"<3 text !>"  # read back
    behind = [  # a client behind the head: the writer's text deltas are still framed from the template
        _entry(4, "delta", {"text": "a"}, sourced=True),
        _entry(5, "delta", {"text": "inside", "depth": 1}, sourced=True, agent="b"),  # left out
        _entry(6, "delta", {"text": "c"}, sourced=True),
    ]
    assert framing(behind) == b"<fast 4 a><fast 6 c>"
    batch = [
        _entry(7, "tool_call_start", {"index": 0, "id": "c", "name": "look"}, sourced=True),
        _entry(8, "handoff_start", {"source": "a", "target": "b", "depth": 1}, sourced=True),  # taken
        _entry(9, "usage", {"input_tokens": 1}, sourced=True),  # no hook: nothing
        _entry(10, "done", {"status": "completed"}, sourced=True),
        _entry(11, "delta", {"text": "after"}, sourced=True),
    ]
    assert framing(batch) == b"<7 start look><8 handoff b True><10 done completed><end>"
    assert framing.ended
    assert framing([_entry(12, "delta", {"text": "late"}, sourced=True)]) == b""
