"""A server for the hostile-client tests, run in its own process so its memory can be measured:
``python -m tests.server.hostile_server PORT`` with its settings from ``KANAWA_*`` variables.

Its agent ``bulk`` makes a large run: one step of :data:`BLOBS` tool calls whose results are
:data:`BLOB_CHARS` characters of letters each (little that compresses), then a short answer."""

from __future__ import annotations

import hashlib
import sys
from typing import Any, Final

import uvicorn

from kanawa import Agent, tool
from kanawa.llm.testing import FunctionLLM
from kanawa.llm.testing.models import ModelRequest, Script
from kanawa.loop.config import AgentConfiguration
from kanawa.server.http.app import create_app
from kanawa.server.settings import ServerSettings
from kanawa.types import AssistantMessage, ToolCall
from tests.server.agents import server_agents

BLOBS: Final = 10
BLOB_CHARS: Final = 1024 * 1024


def blob_text(n: int) -> str:
    """``BLOB_CHARS`` pseudo-random lowercase letters (one long word: cheap for the token estimate,
    hardly compressible), the same for the same ``n``."""
    seed = hashlib.sha256(str(n).encode()).digest()
    raw = bytearray()
    index = 0
    while len(raw) < BLOB_CHARS:
        raw += hashlib.sha256(seed + index.to_bytes(4, "big")).digest()
        index += 1
    return bytes(raw[:BLOB_CHARS]).translate(_LETTERS).decode()


_LETTERS: Final = bytes(ord("a") + value % 26 for value in range(256))


@tool
def blob(n: int) -> str:
    """A large piece of text.

    Args:
        n: which piece
    """
    return blob_text(n)


def _bulk(request: ModelRequest) -> Script:
    if request.tool_results:
        return "all pieces sent"
    return AssistantMessage(
        tool_calls=tuple(ToolCall(f"call_{n}", "blob", f'{{"n": {n}}}') for n in range(BLOBS))
    )


def agents() -> dict[str, Agent[Any, Any]]:
    found = server_agents()
    found["bulk"] = Agent(
        "bulk",
        "Send pieces.",
        tools=[blob],
        model=FunctionLLM(_bulk),
        config=AgentConfiguration(max_tool_calls_per_tool=None),
    )
    return found


def main(port: int) -> None:
    app = create_app(agents=agents(), settings=ServerSettings.from_env())
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on", ws="none")


if __name__ == "__main__":
    main(int(sys.argv[1]))
