"""``A2AAgent``: a remote A2A agent that a kanawa agent hands off to or calls as a tool.

It *is* a kanawa :class:`~kanawa.agents.agent.Agent` whose model is the remote agent
(:class:`~kanawa.a2a.model.A2AModel`), so it fits everywhere an agent does:

* as a **handoff target** — ``Agent("triage", handoffs=[remote])``: the remote answer streams into the
  source run as :class:`~kanawa.loop.events.NestedEvent` text deltas between ``HandoffStarted`` and
  ``HandoffEnded``, exactly like a local target's;
* as a **tool** — ``Agent("boss", tools=[remote.as_tool()])``: one ``input`` string in, the remote
  answer out;
* on its own — ``await remote.arun("question")``.

Failures follow the tool rules (fail closed, the run goes on): a timeout, a ``401``, an unreachable
server or a failed remote task makes the handoff or tool call an error result the calling model sees
(``tool invoke error: failed to execute tool``), with the cause kept for the trace, never a credential.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Annotated, Any

from pydantic import Field

from kanawa.a2a.client import DEFAULT_CONNECT_TIMEOUT, DEFAULT_TIMEOUT, A2AConnection
from kanawa.a2a.model import A2AModel
from kanawa.agents.agent import Agent
from kanawa.loop.hooks import RunHooks
from kanawa.tools.base import Tool
from kanawa.tools.decorator import make_tool
from kanawa.trace.events import Tracer

_BAD_NAME_CHARS = re.compile(r"[^A-Za-z0-9_-]+")


class A2AAgent(Agent[str, Any]):
    """The A2A agent served at ``url`` (its card at ``<url>/.well-known/agent-card.json``).

    Args:
        url: the agent's base URL.
        name: the name kanawa knows it by (handoff tool ``transfer_to_<name>``, trace events).
        description: what it does; shown to the calling model in the handoff tool's and
            :meth:`as_tool`'s description (the remote agent brings its own instructions).
        bearer_token: sent as ``Authorization: Bearer …`` on every request (and masked everywhere).
        headers: more request headers (credential-named ones are masked too).
        timeout: seconds one whole turn may take (default 120).
        connect_timeout: seconds to open the connection (default 10).
        tracer, guardrails: as for :class:`~kanawa.agents.agent.Agent`.

    The remote agent gets the latest user turn as one text message (in a handoff: the handing
    agent's message, else the user's last words) and answers with text.
    """

    def __init__(
        self,
        url: str,
        *,
        name: str,
        description: str = "",
        bearer_token: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        tracer: Tracer | None = None,
        guardrails: Sequence[RunHooks] = (),
    ) -> None:
        self.connection = A2AConnection(
            url, bearer_token=bearer_token, headers=headers, timeout=timeout, connect_timeout=connect_timeout
        )
        super().__init__(
            name, description, model=A2AModel(self.connection), tracer=tracer, guardrails=guardrails
        )
        self.description = description

    def as_tool(self, *, name: str | None = None, description: str | None = None) -> Tool:
        """This agent as a tool taking one ``input`` string and returning the remote answer.

        ``name`` defaults to the agent's name made tool-safe, ``description`` to the agent's
        description. The tool's timeout is the agent's ``timeout``; an error of any kind fails the
        call closed (the invoker's rules), and the calling run goes on."""
        connection = self.connection
        tool_name = name or (_BAD_NAME_CHARS.sub("_", self.name).strip("_") or "a2a_agent")[:64]
        about = description or self.description or f"Ask the remote agent {self.name!r}."

        async def ask(
            input: Annotated[str, Field(description="What to ask the agent, in plain words.")],
        ) -> str:
            return "".join([piece.text async for piece in connection.stream(input)])

        return make_tool(ask, name=tool_name, description=about, timeout=connection.timeout)


__all__ = ["A2AAgent"]
