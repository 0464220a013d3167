"""The protocol-neutral core of kanawa's MCP server: agents as MCP tools, one call as one run.

Transports (stdio here, streamable HTTP in ``kanawa serve``) only move messages; this module decides
what the tools are and what a call does. The story of one ``tools/call``:

1. the tool name picks the agent (an unknown name is a protocol error, :class:`UnknownAgentToolError`);
2. the arguments are checked against the input schema — ``{"input": "<text>"}`` and nothing else —
   and refused with the tool rules' validation message (an ``isError`` result the host's model can
   act on, the agent never started);
3. the agent runs (``agent.stream(input)``, or the ``start_run`` the server supplies); each event
   worth showing is reported to ``report`` (:mod:`.progress`) as it streams;
4. the answer is the result: its text as text content and, for an agent with an output type, the
   structured answer as ``structuredContent`` matching the tool's ``outputSchema`` (:mod:`.schemas`).
   The text is every protocol's answer text (docs/design.md, "One answer text"): all the agent
   writes in the run, every step's in order (what it said before a tool call included); the final
   step's text only when nothing streamed;
5. a run that fails, or ends without an answer (stopped for a person's approval, out of steps), is an
   ``isError`` result with the tool rules' wording and, for a failure, its cause as every protocol
   tells a client (:func:`failure_message`, the same text over stdio and HTTP); the whole story is
   logged (masked) for the operator — no traceback, no provider's text, no secret reaches the host.

Cancellation is the caller's: when the host cancels the request, the transport cancels the task
awaiting :meth:`AgentToolset.call`, which stops the run where it is (its model request or tool call).
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import mcp_types as types
from pydantic import BaseModel, ConfigDict, ValidationError

from kanawa._logging import get_logger
from kanawa.agents.agent import Agent
from kanawa.agents.failures import failure_cause
from kanawa.loop.result import RunResult
from kanawa.mcp_server.progress import progress_message
from kanawa.mcp_server.schemas import INPUT_SCHEMA, OutputShape, describe, output_shape
from kanawa.secrets import mask
from kanawa.tools.messages import EXECUTION_ERROR_MESSAGE, describe_exception, validation_message
from kanawa.types import TextDelta

logger = get_logger(__name__)

_BAD_NAME_CHARS = re.compile(r"[^A-Za-z0-9_.-]+")

APPROVAL_MESSAGE = (
    "tool invoke error: the agent stopped to wait for a person's approval of {calls}, which cannot be "
    "given over MCP; ask for something that does not need it"
)


class StartedRun(Protocol):
    """A run as the toolset consumes it: its events, then its result (an ``AgentLoopRunner``)."""

    def __aiter__(self) -> AsyncIterator[object]: ...

    @property
    def result(self) -> RunResult[Any]: ...


StartRun = Callable[[Agent[Any, Any], str], StartedRun]
"""How a call becomes a run: ``(agent, input) -> run``. The default is ``agent.stream(input)``; a
server passes its own to run calls under its tenants, budgets and durable runs."""

Report = Callable[[str], Awaitable[None]]
"""Where progress messages go (the transport turns them into ``notifications/progress``)."""


class UnknownAgentToolError(LookupError):
    """``tools/call`` named no agent this server offers (a protocol error, not a tool result)."""

    def __init__(self, name: str) -> None:
        super().__init__(f"there is no agent tool named {name!r}")
        self.name = name


class _AgentInput(BaseModel):
    """The arguments every agent tool takes (:data:`~kanawa.mcp_server.schemas.INPUT_SCHEMA`)."""

    model_config = ConfigDict(extra="forbid", strict=True)
    input: str


@dataclass(frozen=True, slots=True)
class _AgentTool:
    agent: Agent[Any, Any]
    tool: types.Tool
    shape: OutputShape | None


def _default_start(agent: Agent[Any, Any], text: str) -> StartedRun:
    return agent.stream(text)


def tool_name(name: str) -> str:
    """An MCP tool name (``[A-Za-z0-9_.-]``, 128 characters at most) for the agent registered as ``name``."""
    return (_BAD_NAME_CHARS.sub("_", name.strip()).strip("_") or "agent")[:128]


class AgentToolset:
    """Each agent of ``agents`` (name → agent, as ``kanawa serve`` loads them) as one MCP tool.

    Tool descriptions and schemas are built once here; a name that is not a valid MCP tool name is
    made one (runs of other characters become ``_``). Raises ``ValueError`` when two agents end up
    with the same tool name.
    """

    def __init__(self, agents: Mapping[str, Agent[Any, Any]], *, start_run: StartRun | None = None) -> None:
        self._start = start_run or _default_start
        tools: dict[str, _AgentTool] = {}
        for registered, agent in agents.items():
            name = tool_name(registered)
            if name in tools:
                raise ValueError(
                    f"agents {registered!r} and {tools[name].agent.name!r} share the tool name {name!r}"
                )
            shape = output_shape(agent)
            tool = types.Tool(
                name=name,
                title=agent.name,
                description=describe(agent, agent.name),
                input_schema=INPUT_SCHEMA,
                output_schema=None if shape is None else shape.schema,
            )
            tools[name] = _AgentTool(agent, tool, shape)
        self._tools = tools

    def list_tools(self) -> list[types.Tool]:
        """The tools, in the order the agents were given."""
        return [entry.tool for entry in self._tools.values()]

    async def call(
        self, name: str, arguments: Mapping[str, Any] | None, *, report: Report | None = None
    ) -> types.CallToolResult:
        """Run the agent behind tool ``name`` on ``arguments`` (see the module); never raises for a run
        that fails, only :class:`UnknownAgentToolError` for a name no agent has."""
        entry = self._tools.get(name)
        if entry is None:
            raise UnknownAgentToolError(name)
        text = agent_input(arguments)
        if not isinstance(text, str):
            return text
        answer: list[str] = []  # the agent's text, every step's (answer_text)
        announced: set[str] = set()  # calls told at their start (progress_message)
        try:
            run = self._start(entry.agent, text)
            async for event in run:
                if isinstance(event, TextDelta):  # the agent's own: a handed-off one's come nested
                    answer.append(event.text)
                if report is not None:
                    message = progress_message(event, announced)
                    if message is not None:
                        await report(message)
            result = run.result
        except Exception as exc:  # the run failed: the host gets the tool rules' error, the log the detail
            logger.warning("agent %s failed over MCP: %s", entry.agent.name, mask(describe_exception(exc)))
            code, message = failure_cause(exc)
            return error_result(failure_message({"code": code, "message": message}))
        return _answer(entry, result, "".join(answer))


def agent_input(arguments: Mapping[str, Any] | None) -> str | types.CallToolResult:
    """The user's turn from a call's ``arguments``, or the validation error result that refuses them
    (the tool rules' wording: the host's model can correct its call)."""
    try:
        return _AgentInput.model_validate(dict(arguments or {})).input
    except ValidationError as exc:
        return error_result(validation_message(exc))


def _answer(entry: _AgentTool, result: RunResult[Any], streamed: str) -> types.CallToolResult:
    if result.pending_approvals:
        return error_result(approval_message(call.name for call in result.pending_approvals))
    if not result.completed:
        logger.warning("agent %s ended without an answer (%s)", entry.agent.name, result.termination_reason)
        return error_result(EXECUTION_ERROR_MESSAGE)
    return answer_result(entry.shape, streamed or result.text, result.output)


def answer_result(shape: OutputShape | None, text: str, output: object) -> types.CallToolResult:
    """A completed run's answer as a tool result: its text, or for an agent with an output type
    (``shape``) the structured answer as ``structuredContent`` and its JSON as the text."""
    if shape is None:
        return types.CallToolResult(content=[types.TextContent(text=text)])
    structured = shape.content(output)
    return types.CallToolResult(
        content=[types.TextContent(text=json.dumps(structured, ensure_ascii=False))],
        structured_content=structured,
    )


def approval_message(names: Iterable[str]) -> str:
    """The error text of a run that stopped for a person's approval of the tools ``names``."""
    return APPROVAL_MESSAGE.format(calls=", ".join(sorted(set(names))))


def failure_message(cause: object) -> str:
    """The error text of a run that failed, the same over stdio and HTTP: the tool rules' wording,
    then the cause as every protocol tells a client — the run's ``error`` chunk's ``code`` and
    ``message`` (:func:`~kanawa.agents.failures.failure_cause`): kanawa's own errors by class and
    masked message, a provider's failure by its class, provider, model and HTTP status and never its
    text, anything else ``internal_error``. Without a cause, the wording alone."""
    if not isinstance(cause, Mapping) or not cause.get("code"):
        return EXECUTION_ERROR_MESSAGE
    return f"{EXECUTION_ERROR_MESSAGE} ({cause.get('code')}: {cause.get('message')})"


def error_result(message: str) -> types.CallToolResult:
    """An ``isError`` result saying ``message`` (already in the tool rules' wording)."""
    return types.CallToolResult(content=[types.TextContent(text=message)], is_error=True)


__all__ = [
    "APPROVAL_MESSAGE",
    "AgentToolset",
    "Report",
    "StartRun",
    "StartedRun",
    "UnknownAgentToolError",
    "agent_input",
    "answer_result",
    "approval_message",
    "error_result",
    "failure_message",
    "tool_name",
]
