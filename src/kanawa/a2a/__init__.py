"""A2A (agent-to-agent protocol) client: remote A2A agents inside kanawa agents.

* :class:`A2AAgent` — a remote agent as a handoff target, a tool (:meth:`A2AAgent.as_tool`) or an
  agent run on its own, built on the official ``a2a-sdk`` client;
* :class:`A2AModel` — the :class:`~kanawa.llm.adapter.LLMAdapter` that speaks to it;
* :class:`A2AConnection` — one agent's URL, headers and timeouts, and one turn over the wire.

Needs the ``a2a`` extra (``pip install 'kanawa[a2a]'``); nothing is imported until used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kanawa._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "A2AAgent": "kanawa.a2a.agent",
    "A2AConnection": "kanawa.a2a.client",
    "A2AModel": "kanawa.a2a.model",
}

if TYPE_CHECKING:
    from kanawa.a2a.agent import A2AAgent
    from kanawa.a2a.client import A2AConnection
    from kanawa.a2a.model import A2AModel

__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)

__all__ = ["A2AAgent", "A2AConnection", "A2AModel"]
