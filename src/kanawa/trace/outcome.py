"""How the runs of a trace ended: the outcome a page's badge shows for a trace file.

An error record inside a run is not the run's outcome: a tool the model was refused, a failed model
call a retry recovered from, a sub-agent that failed while its parent carried on — each leaves an
error record in a run that still ends ``completed``. What a run's outcome is, the run says itself in
its last ``agent_end`` record (written by :meth:`kanawa.loop.tracing.RunTrace.agent_end`): an
``error`` there means the run failed (``cancelled`` when the error is a cancellation), else it ended
for its ``termination_reason``, which is ``awaiting_approval`` for a run paused for a person's approval
(as the server calls it) and ``completed`` for every other reason. A run without ``agent_end`` did not
finish (a killed process).

Only top-level runs count: a run whose ``agent_start`` names a ``parent_run_id`` (an agent used as a
tool, a handoff target) reports to its parent, whose own end already says whether it recovered. A
trace with several top-level runs has the least happy of their outcomes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Literal, TypeAlias

from kanawa.trace.records import TraceRecord

Outcome: TypeAlias = Literal["completed", "awaiting_approval", "unfinished", "cancelled", "failed"]

_RANK: Final[tuple[Outcome, ...]] = ("completed", "awaiting_approval", "unfinished", "cancelled", "failed")
"""From the happiest outcome to the least happy: the order several top-level runs are combined in."""

_CANCELLATIONS: Final = frozenset({"CancelledError", "GeneratorExit", "KeyboardInterrupt"})


def run_outcome(end: TraceRecord | None) -> Outcome:
    """The outcome of one run from its last ``agent_end`` record (``None``: the run never ended)."""
    if end is None:
        return "unfinished"
    if end.error is not None:
        kind = end.data.get("error_type")
        cancelled = kind in _CANCELLATIONS or end.error.split(":", 1)[0] in _CANCELLATIONS
        return "cancelled" if cancelled else "failed"
    if end.data.get("termination_reason") == "approval_required":
        return "awaiting_approval"
    return "completed"


def trace_outcome(records: Sequence[TraceRecord]) -> Outcome | None:
    """The outcome of the top-level runs in ``records`` (``None`` when no record belongs to a run)."""
    children = {r.run_id for r in records if r.event == "agent_start" and "parent_run_id" in r.data}
    roots: dict[str, None] = {}
    ends: dict[str, TraceRecord] = {}
    for record in records:
        if record.event not in ("agent_start", "agent_end") or record.run_id in children:
            continue
        roots.setdefault(record.run_id, None)
        if record.event == "agent_end":
            ends[record.run_id] = record
    if not roots:
        return None
    return max((run_outcome(ends.get(run_id)) for run_id in roots), key=_RANK.index)


__all__ = ["Outcome", "run_outcome", "trace_outcome"]
