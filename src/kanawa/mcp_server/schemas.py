"""What an agent looks like as an MCP tool: its input schema, its output schema, its structured answer.

kanawa agents take a user turn as text, so every agent's input schema is one required ``input``
string. An agent with an output type other than ``str`` declares an ``outputSchema`` built from that
type (pydantic's JSON schema), and its answer goes out as ``structuredContent`` too. MCP requires both
to describe a JSON object: an output type that is not an object (``list[int]``, ``int`` …) is wrapped
as ``{"result": <value>}``, in the schema and in the content alike. A tool's description is the
agent's own ``description``, never its instructions (:func:`describe`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter

from kanawa.agents.agent import Agent
from kanawa.agents.skills import description_or_name
from kanawa.types import JsonObject

INPUT_FIELD = "input"
"""The one argument of every agent tool: the user's turn, as text."""

WRAPPED_FIELD = "result"
"""Where a non-object structured answer goes (``{"result": [1, 2]}``)."""

INPUT_SCHEMA: JsonObject = {
    "type": "object",
    "properties": {
        INPUT_FIELD: {"type": "string", "description": "What to ask the agent: the user's message, as text."}
    },
    "required": [INPUT_FIELD],
    "additionalProperties": False,
}


@dataclass(frozen=True, slots=True)
class OutputShape:
    """How an agent's structured answer is described (``schema``) and dumped (:meth:`content`)."""

    schema: JsonObject
    adapter: TypeAdapter[Any]
    wrapped: bool

    def content(self, output: object) -> dict[str, Any]:
        """``output`` as the ``structuredContent`` object that :attr:`schema` describes."""
        dumped = self.adapter.dump_python(output, mode="json")
        if self.wrapped:
            return {WRAPPED_FIELD: dumped}
        assert isinstance(dumped, dict)
        return dumped


def output_shape(agent: Agent[Any, Any]) -> OutputShape | None:
    """The agent's structured output description, or ``None`` for a text agent (``output_type=str``)."""
    output_type = agent.output_type
    if output_type is str:
        return None
    adapter: TypeAdapter[Any] = TypeAdapter(output_type)
    schema: JsonObject = adapter.json_schema(mode="serialization")
    if schema.get("type") == "object":
        return OutputShape(schema, adapter, wrapped=False)
    definitions = schema.pop("$defs", None)
    wrapper: JsonObject = {
        "type": "object",
        "properties": {WRAPPED_FIELD: schema},
        "required": [WRAPPED_FIELD],
    }
    if definitions is not None:
        wrapper["$defs"] = definitions
    return OutputShape(wrapper, adapter, wrapped=True)


def describe(agent: object, name: str) -> str:
    """The tool description: what the agent says of itself to callers (``Agent(description=...)``,
    :func:`~kanawa.agents.skills.public_description`), else a sentence naming it (``name``). Never its
    instructions: a system prompt may hold what callers must not see, and a tool list is shown to
    every key holder (and to the host's model)."""
    return description_or_name(agent, name)


__all__ = ["INPUT_FIELD", "INPUT_SCHEMA", "WRAPPED_FIELD", "OutputShape", "describe", "output_shape"]
