"""Loop state: the current step, the phase and the tool-call history (seed 003 "状態管理").

One :class:`AgentLoopState` per run, owned by the runner (Python's single-threaded event loop gives us
what the seed's actor gave it). Policies read it; only the runner writes it. Counts are kept in
dictionaries as calls are recorded, so the duplicate and per-tool checks cost one lookup each instead
of a scan of the history.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import Final, Literal, TypeAlias

from kanawa.types import ToolCall

# --------------------------------------------------------------------------------------------- phases


@dataclass(frozen=True, slots=True)
class ToolUsePhase:
    """The model may call tools; no response schema is sent while tools are offered."""

    _: KW_ONLY
    kind: Literal["tool_use"] = "tool_use"


@dataclass(frozen=True, slots=True)
class FinalOutputPhase:
    """Tools are off and the response schema is sent; ``retry_count`` decode retries have been asked for."""

    _: KW_ONLY
    retry_count: int = 0
    kind: Literal["final_output"] = "final_output"


@dataclass(frozen=True, slots=True)
class CompletedPhase:
    """The loop has finished; no further request may be sent."""

    _: KW_ONLY
    kind: Literal["completed"] = "completed"


LoopPhase: TypeAlias = ToolUsePhase | FinalOutputPhase | CompletedPhase
"""Seed 003 ``LoopPhase``: ``tool_use → final_output(retry_count) → completed``."""

TOOL_USE: Final = ToolUsePhase()
COMPLETED: Final = CompletedPhase()

# ------------------------------------------------------------------------------------------- history


def input_hash(arguments: str) -> str:
    """A stable hash of a tool call's input: canonical JSON of the parsed arguments (sorted keys, no
    whitespace), so ``{"a":1, "b":2}`` and ``{"b": 2, "a": 1}`` are the same call. ``""`` counts as
    ``{}`` (as the invoker treats it); text that is not JSON, or JSON nested too deep to parse, is
    hashed as it is (model output must never raise here: the invoker reports the parse error)."""
    text = arguments.strip()
    if not text:
        canonical = "{}"
    else:
        try:
            canonical = json.dumps(
                json.loads(text), sort_keys=True, separators=(",", ":"), ensure_ascii=False
            )
        except (ValueError, RecursionError):  # not JSON, or nested past the interpreter's limit
            canonical = arguments
    return hashlib.blake2b(canonical.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


@dataclass(frozen=True, slots=True)
class ToolCallRecord:
    """One tool call the loop accepted (seed 003 ``ToolCallRecord``)."""

    name: str
    input_hash: str
    timestamp: float
    _: KW_ONLY
    call_id: str = ""
    step: int = 0


@dataclass(slots=True)
class AgentLoopState:
    """Mutable state of one run (seed 003 ``AgentLoopStateManager``).

    ``current_step`` counts model requests started so far (1-based once the first request starts).
    """

    _: KW_ONLY
    current_step: int = 0
    phase: LoopPhase = TOOL_USE
    tool_call_history: list[ToolCallRecord] = field(default_factory=list)
    _by_call: dict[tuple[str, str], int] = field(default_factory=dict)
    _by_tool: dict[str, int] = field(default_factory=dict)
    _hashes: dict[str, str] = field(default_factory=dict)
    _grouped: tuple[Sequence[ToolCall], tuple[list[ToolCall], list[int]]] | None = field(
        default=None, repr=False, compare=False
    )

    def increment_step(self) -> int:
        self.current_step += 1
        return self.current_step

    def hash_input(self, arguments: str) -> str:
        """:func:`input_hash`, memoised for the run (policies and the history hash the same calls)."""
        digest = self._hashes.get(arguments)
        if digest is None:
            digest = self._hashes[arguments] = input_hash(arguments)
        return digest

    def record_tool_call(self, call: ToolCall) -> ToolCallRecord:
        """Add ``call`` to the history and to the duplicate and per-tool counts."""
        digest = self.hash_input(call.arguments)
        record = ToolCallRecord(call.name, digest, time.time(), call_id=call.id, step=self.current_step)
        self.tool_call_history.append(record)
        key = (call.name, digest)
        self._by_call[key] = self._by_call.get(key, 0) + 1
        self._by_tool[call.name] = self._by_tool.get(call.name, 0) + 1
        return record

    def restore_tool_calls(self, records: Sequence[ToolCallRecord]) -> None:
        """Take over the calls an earlier part of this run recorded (a run continued from a
        checkpoint, on another worker or after an approval), so the duplicate and per-tool counts
        cover the whole run, not just the part after the continuation."""
        for record in records:
            self.tool_call_history.append(record)
            key = (record.name, record.input_hash)
            self._by_call[key] = self._by_call.get(key, 0) + 1
            self._by_tool[record.name] = self._by_tool.get(record.name, 0) + 1

    def count_duplicate_tool_calls(self, name: str, input_hash: str) -> int:
        """How many recorded calls had this tool name and input hash."""
        return self._by_call.get((name, input_hash), 0)

    def group_identical(self, calls: Sequence[ToolCall]) -> tuple[list[ToolCall], list[int]]:
        """Identical calls (same name, same :func:`input_hash`) inside one response are one call.

        Returns the distinct calls (the first of each group, in order) and, for each of ``calls``, the
        index of its group's first call in that list: the loop runs the distinct calls once and gives
        every copy its original's result. The policy and the tool turn both group a response's
        calls: the last grouping is kept, so the same ``calls`` object is grouped once."""
        grouped = self._grouped
        if grouped is not None and grouped[0] is calls:
            return grouped[1]
        index_of: dict[tuple[str, str], int] = {}
        distinct: list[ToolCall] = []
        groups: list[int] = []
        for call in calls:
            key = (call.name, self.hash_input(call.arguments))
            position = index_of.get(key)
            if position is None:
                position = index_of[key] = len(distinct)
                distinct.append(call)
            groups.append(position)
        result = (distinct, groups)
        self._grouped = (calls, result)
        return result

    def count_tool_calls(self, name: str) -> int:
        """How many recorded calls named this tool, whatever their input."""
        return self._by_tool.get(name, 0)

    @property
    def is_completed(self) -> bool:
        return isinstance(self.phase, CompletedPhase)

    def mark_completed(self) -> None:
        self.phase = COMPLETED

    def counters(self) -> LoopCounters:
        """The counts the run's limits check, now."""
        phase = self.phase
        return LoopCounters(
            self.current_step,
            tool_calls=tuple(self.tool_call_history),
            decode_retries=phase.retry_count if isinstance(phase, FinalOutputPhase) else None,
        )

    def restore(self, counters: LoopCounters) -> None:
        """Take over ``counters`` of an earlier part of this run (into a state nothing has counted in)."""
        self.current_step = counters.steps
        self.restore_tool_calls(counters.tool_calls)
        if counters.decode_retries is not None:
            self.phase = FinalOutputPhase(retry_count=counters.decode_retries)


@dataclass(frozen=True, slots=True)
class LoopCounters:
    """What a run's limits count, as one value: the steps taken, the tool calls recorded (the
    duplicate and per-tool checks) and the retries of a structured answer that did not decode.

    A run continued elsewhere — by another worker after a checkpoint, or after a person's approval —
    takes them over (:meth:`AgentLoopState.restore`), so ``max_steps`` and the tool-call limits hold
    for the whole run, not for each part of it."""

    steps: int
    _: KW_ONLY
    tool_calls: tuple[ToolCallRecord, ...] = ()
    decode_retries: int | None = None
    """The retry count of the final-output phase the run was in (``None``: not in that phase)."""


__all__ = [
    "COMPLETED",
    "TOOL_USE",
    "AgentLoopState",
    "CompletedPhase",
    "FinalOutputPhase",
    "LoopCounters",
    "LoopPhase",
    "ToolCallRecord",
    "ToolUsePhase",
    "input_hash",
]
