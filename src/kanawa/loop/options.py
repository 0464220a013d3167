"""What one run gets besides its agent's own configuration: :class:`RunOptions`.

An :class:`~kanawa.agents.agent.Agent` is configuration shared by every run (a server runs one agent
for all its tenants), so whoever starts a run adds what differs per run without touching the agent —
``agent.stream(..., options=RunOptions(...))``:

- a caller's request: extra instructions, tools the *caller* will execute, a cap on the answer's
  length, a JSON schema for the answer;
- a server's needs: the sink that turns the run's trace into the client's ``trace`` chunks and the
  tenant's budget guard. The user's agent objects stay exactly as the user made them, however many
  servers run them at once (wrapping ``agent.tracer`` or appending to ``agent.guardrails`` instead
  would stack a wrapper per server and count a tenant's spending once per guard).

What a nested run inherits (a handoff target, an agent a coordinator routes to) is
:meth:`RunOptions.for_nested`: the trace sinks and the guardrails reach every run working on the
request, so the trace shows them all and the budget counts all their model requests; the caller's
instructions, tools and schema belong to the run it asked for only.

Client tools: their declarations are offered to the model beside the agent's own tools. When the
model calls one, the agent's own calls of that turn run as usual, the run ends with termination
reason ``tools_pending`` and ``RunResult.pending_tool_calls`` lists the calls for the caller; it
goes on by running again with ``history=result.messages`` and the caller's
:class:`~kanawa.types.ToolMessage` answers as the input.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kanawa.llm.settings import ModelSettings
from kanawa.trace.events import TraceEvent, Tracer, TraceSink
from kanawa.types import OutputSchema, ToolSpec

if TYPE_CHECKING:
    from kanawa.loop.hooks import RunHooks


@dataclass(frozen=True, slots=True, kw_only=True)
class RunOptions:
    """Options for one run (module docstring), all optional. Frozen: one value may serve every run a
    server starts.

    Attributes:
        instructions: text appended to the agent's own instructions in the system message.
        client_tools: tools the caller executes: offered to the model, never run by the agent.
        max_output_tokens: a cap on each model response of the run.
        output_schema: a JSON schema for the final answer, asked of the model when the agent itself
            answers in text (an agent with an output type keeps its own schema).
        trace_sinks: sinks that get this run's trace events (and its nested runs'), besides the
            agent's tracer: the agent's own sinks and redaction apply unchanged to what reaches them.
        guardrails: guardrails (and budgets) checked in this run and its nested runs after the
            agent's own.
    """

    instructions: str | None = None
    client_tools: tuple[ToolSpec, ...] = ()
    max_output_tokens: int | None = None
    output_schema: OutputSchema | None = None
    trace_sinks: tuple[TraceSink, ...] = ()
    guardrails: tuple[RunHooks, ...] = ()

    def for_nested(self) -> RunOptions:
        """What a run started inside this one inherits: the trace sinks and the guardrails."""
        if not (self.trace_sinks or self.guardrails):
            return NO_OPTIONS
        return RunOptions(trace_sinks=self.trace_sinks, guardrails=self.guardrails)

    def settings_for(self, settings: ModelSettings | None, *, text_answer: bool) -> ModelSettings | None:
        """``settings`` with what these options ask of every model request: the output cap, and the
        caller's JSON schema when the run answers in text (an agent's own output type wins)."""
        asked: dict[str, Any] = {}
        if self.max_output_tokens is not None:
            asked["max_output_tokens"] = self.max_output_tokens
        if self.output_schema is not None and text_answer:
            asked["response_format"] = "json_schema"
            asked["json_schema"] = dict(self.output_schema.schema)
        if not asked:
            return settings
        run = ModelSettings(**asked)
        return settings.merged(run) if settings is not None else run

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
