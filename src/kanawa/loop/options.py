"""Per-run options: what one caller asks of one run without changing the agent that serves it.

An :class:`~kanawa.agents.agent.Agent` is configuration shared by every run (a server runs one
agent for all its tenants), so what differs per request — extra instructions, tools the *caller*
will execute, a cap on the answer's length, a JSON schema for the answer — travels with the run:
``agent.stream(text, options=RunOptions(...))``. Nothing here mutates the agent.

Client tools: their declarations are offered to the model beside the agent's own tools. When the
model calls one, the agent's own calls of that turn run as usual, the run ends with termination
reason ``tools_pending`` and ``RunResult.pending_tool_calls`` lists the calls for the caller; it
goes on by running again with ``history=result.messages`` and the caller's
:class:`~kanawa.types.ToolMessage` answers as the input.
"""

from __future__ import annotations

from dataclasses import dataclass

from kanawa.types import OutputSchema, ToolSpec


@dataclass(frozen=True, slots=True, kw_only=True)
class RunOptions:
    """What one run adds to its agent's configuration (all optional).

    Attributes:
        instructions: text appended to the agent's own instructions in the system message.
        client_tools: tools the caller executes: offered to the model, never run by the agent.
        max_output_tokens: a cap on each model response of the run.
        output_schema: a JSON schema for the final answer, asked of the model when the agent itself
            answers in text (an agent with an output type keeps its own schema).
    """

    instructions: str | None = None
    client_tools: tuple[ToolSpec, ...] = ()
    max_output_tokens: int | None = None
    output_schema: OutputSchema | None = None


__all__ = ["RunOptions"]
