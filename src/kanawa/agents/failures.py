"""What a client is told of a failed run: the one summary every door uses (the ``error`` chunk of
:mod:`kanawa.server.runs.chunks`, MCP's tool error over stdio and HTTP).

kanawa's own errors keep their message, masked; a provider's failure is named by its fields, never
its text; anything else is ``internal_error`` without its text. It sits with the agents, below
both the MCP server and the run layer, so neither reaches up into the other for it.
"""

from __future__ import annotations

import re
from typing import Final

from kanawa.llm.errors import LLMError
from kanawa.loop.errors import AgentError, LLMCallFailed
from kanawa.secrets import mask
from kanawa.tools.errors import ToolError

SAFE_ERRORS: Final = (AgentError, ToolError, LLMError)
"""kanawa's error families carry messages written to be shown (no prompts, no tool arguments)."""

INTERNAL_MESSAGE: Final = "the run failed with an internal error"


def failure_cause(exc: BaseException) -> tuple[str, str]:
    """``(code, message)`` of a failed run as a client sees it (seed 002 §7)."""
    if isinstance(exc, SAFE_ERRORS):
        return type(exc).__name__, client_message(exc)
    return "internal_error", INTERNAL_MESSAGE


_PATH: Final = re.compile(
    r"(?<![\w:/.~-])(?:~|\.{1,2})?(?:/[\w.@+-]+){2,}/?"  # /srv/app/x.yaml, ~/keys, ../etc/passwd
    r"|\b[A-Za-z]:\\(?:[\w .@+-]+\\?)+"  # C:\Users\me\key.txt
)
PATH_MASK: Final = "[path]"


def client_message(exc: BaseException) -> str:
    """What a client is told of one of kanawa's own errors: a provider failure is summarised from
    its fields (error class, provider and model, HTTP status) without the provider's text — which may
    name the provider's or this server's files, hosts and keys; other messages are masked
    (:func:`kanawa.secrets.mask`) and their file paths replaced with ``[path]``. The whole text stays
    in the server's log (masked, :mod:`kanawa.server.runs.manager`)."""
    if isinstance(exc, LLMCallFailed):
        return f"model request at step {exc.step} failed: {_provider_summary(exc.error)}"
    if isinstance(exc, LLMError):
        return f"model request failed: {_provider_summary(exc)}"
    return _PATH.sub(PATH_MASK, mask(str(exc)))


def _provider_summary(error: LLMError) -> str:
    where = ":".join(part for part in (error.provider, error.model) if part)
    status = f" (HTTP {error.status_code})" if error.status_code is not None else ""
    return f"{type(error).__name__}{f' from {where}' if where else ''}{status}"


__all__ = ["INTERNAL_MESSAGE", "PATH_MASK", "SAFE_ERRORS", "client_message", "failure_cause"]
