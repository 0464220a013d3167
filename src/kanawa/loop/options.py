"""What one run gets besides its agent's own configuration: :class:`RunOptions`.

Whoever starts a run may add to it without touching the agent — ``agent.stream(..., options=
RunOptions(...))``. A server gives each run it serves the sink that turns its trace into the client's
``trace`` chunks and the tenant's budget guard this way: the user's agent objects stay exactly as the
user made them, however many servers run them at once (wrapping ``agent.tracer`` or appending to
``agent.guardrails`` instead would stack a wrapper per server and count a tenant's spending once per
guard).

What a nested run inherits (a handoff target, an agent a coordinator routes to) is
:meth:`RunOptions.for_nested`: the trace sinks and the guardrails reach every run working on the
request, so the trace shows them all and the budget counts all their model requests.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from kanawa.trace.events import TraceEvent, Tracer, TraceSink

if TYPE_CHECKING:
    from kanawa.loop.hooks import RunHooks


@dataclass(frozen=True, slots=True, kw_only=True)
class RunOptions:
    """Options for one run (module docstring). Frozen: one value may serve every run a server starts."""

    trace_sinks: tuple[TraceSink, ...] = ()
    """Sinks that get this run's trace events (and its nested runs'), besides the agent's tracer:
    the agent's own sinks and redaction apply unchanged to what reaches them."""
    guardrails: tuple[RunHooks, ...] = ()
    """Guardrails (and budgets) checked in this run and its nested runs after the agent's own."""

    def for_nested(self) -> RunOptions:
        """What a run started inside this one inherits: the trace sinks and the guardrails."""
        if not (self.trace_sinks or self.guardrails):
            return NO_OPTIONS
        return RunOptions(trace_sinks=self.trace_sinks, guardrails=self.guardrails)

    def tracer_for(self, tracer: Tracer | None) -> Tracer | None:
        """The run's tracer: ``tracer`` (the agent's, or ``None``) with this run's sinks besides —
        a new tracer that sends each event to them and on to ``tracer``, never a change to it."""
        if not self.trace_sinks:
            return tracer
        if tracer is None:
            return Tracer(sinks=self.trace_sinks)
        sinks = [*self.trace_sinks, _Forward(tracer)] if tracer.enabled else list(self.trace_sinks)
        return Tracer(sinks=sinks, session=tracer.session)


NO_OPTIONS = RunOptions()
"""A run with nothing added."""


class _Forward:
    """Sends events on to the agent's own tracer (its redaction and sinks apply unchanged); it belongs
    to the agent, so closing the run's tracer leaves it open."""

    __slots__ = ("_tracer",)

    def __init__(self, tracer: Tracer) -> None:
        self._tracer = tracer

    def emit(self, event: TraceEvent) -> None:
        self._tracer.emit(event)

    async def aclose(self) -> None:
        """The agent's tracer outlives the run: its owner closes it."""


__all__ = ["NO_OPTIONS", "RunOptions"]
