"""What ``from kanawa import Agent, tool`` and one plain run load: nothing a plain run does not use.

A scripted agent with two tools runs once in a fresh interpreter, which then lists its modules. None of
:data:`HEAVY` may be among them: provider SDKs and their HTTP stacks, the CLI, the server and its stores,
tracing exporters, and the kanawa layers (server, apps, evals, memory, compaction, MCP …) and helpers a
plain run never calls. An eager import of any of them anywhere on the run's path (a provider adapter at
the top of the agent module, the server in a package ``__init__``) fails
:func:`test_a_plain_run_loads_nothing_heavy`; the planted-import tests show the check catches exactly
that. Peak memory and import time themselves are measured against the peers in
``bench/import_memory.py``, never asserted here.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import kanawa

SOURCE = Path(kanawa.__file__).resolve().parent.parent

HEAVY: tuple[str, ...] = (
    # provider SDKs and the HTTP stacks under them
    "openai",
    "anthropic",
    "google.genai",
    "boto3",
    "botocore",
    "httpx",
    "httpcore",
    "h11",
    "anyio",
    # the CLI and terminal rendering
    "typer",
    "click",
    "rich",
    # the server, its stores and protocols
    "fastapi",
    "starlette",
    "uvicorn",
    "redis",
    "asyncpg",
    "mcp",
    # tracing exporters and template engines
    "opentelemetry",
    "jinja2",
    # kanawa layers and features a plain run does not use
    "kanawa.server",
    "kanawa.apps",
    "kanawa.evals",
    "kanawa.cli",
    "kanawa.a2a",
    "kanawa.mcp_server",
    "kanawa.testing",
    "kanawa.llm.openai",
    "kanawa.llm.anthropic",
    "kanawa.llm.gemini",
    "kanawa.llm.vertex",
    "kanawa.llm.catalogue",
    "kanawa.llm.retry",
    "kanawa.trace.otel",
    "kanawa.trace.jsonl",
    "kanawa.tools.mcp",
    "kanawa.tools.builtin",
    "kanawa.tools.sandbox",
    "kanawa.tools.plugins",
    "kanawa.agents.memory",
    "kanawa.agents.team",
    "kanawa.agents.budget",
    "kanawa.agents.guardrails",
    "kanawa.agents.routing",
    "kanawa.loop.compaction",
    # helpers only some tools need: sectioned docstrings, media types of files
    "docstring_parser",
    "mimetypes",
)

PROBE = """
import json, sys
from kanawa import Agent, tool
from kanawa.llm.testing import FunctionLLM
from kanawa.types import AssistantMessage, ToolCall

@tool
async def add(a: int, b: int) -> int:
    '''Add two integers.'''
    return a + b

@tool
def mul(a: int, b: int) -> int:
    '''Multiply two integers.'''
    return a * b

def respond(request):
    turn = sum(1 for m in request.messages if m.role == "assistant")
    if turn == 0:
        return AssistantMessage(tool_calls=(ToolCall("c1", "add", '{"a": 1, "b": 2}'),
                                            ToolCall("c2", "mul", '{"a": 3, "b": 4}')))
    return "3 and 12"

agent = Agent("probe", instructions="Do the arithmetic.", tools=[add, mul], model=FunctionLLM(respond))
result = agent.run("go")
assert result.output == "3 and 12", result.output
print(json.dumps(sorted(sys.modules)))
"""


def heavy_loaded(modules: list[str]) -> list[str]:
    """The modules of ``modules`` that are, or are inside, one of :data:`HEAVY`."""
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))


def probe(source_root: Path) -> list[str]:
    """The modules a fresh interpreter holds after the probe's run, importing kanawa from
    ``source_root``."""
    env = {**os.environ, "PYTHONPATH": str(source_root)}
    proc = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120, env=env, check=False
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    modules: list[str] = json.loads(proc.stdout.strip().splitlines()[-1])
    return modules


def test_every_heavy_name_is_a_real_module() -> None:
    """A rename must not leave the list guarding names that no longer exist."""
    missing = [name for name in HEAVY if importlib.util.find_spec(name) is None]
    assert missing == []


def test_a_plain_run_loads_nothing_heavy() -> None:
    modules = probe(SOURCE)
    assert "kanawa.loop.runner" in modules  # the probe did run an agent
    assert heavy_loaded(modules) == []


@pytest.fixture(scope="module")
def source_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The kanawa package's Python files, copied once, for planting imports in."""
    root = tmp_path_factory.mktemp("src")
    shutil.copytree(
        SOURCE / "kanawa", root / "kanawa", ignore=shutil.ignore_patterns("__pycache__", "node_modules")
    )
    return root


@pytest.mark.parametrize(
    ("where", "planted", "expected"),
    [
        ("kanawa/agents/agent.py", "import kanawa.llm.openai.responses\n", "kanawa.llm.openai.responses"),
        ("kanawa/tools/__init__.py", "import kanawa.server\n", "kanawa.server"),
        ("kanawa/loop/runner.py", "import httpx\n", "httpx"),
    ],
)
def test_a_planted_eager_import_is_caught(source_copy: Path, where: str, planted: str, expected: str) -> None:
    path = source_copy / where
    original = path.read_text(encoding="utf-8")
    head, future, rest = original.partition("from __future__ import annotations\n")
    path.write_text(head + future + planted + rest, encoding="utf-8")
    try:
        found = heavy_loaded(probe(source_copy))
    finally:
        path.write_text(original, encoding="utf-8")
    assert expected in found


def test_the_import_alone_builds_no_pydantic_model() -> None:
    """``from kanawa import Agent, tool`` defines no validated model: pydantic's plugin loader and
    :mod:`importlib.metadata` (about fifty modules) wait for the first tool."""
    code = "import json, sys\nfrom kanawa import Agent, tool\nprint(json.dumps(sorted(sys.modules)))\n"
    env = {**os.environ, "PYTHONPATH": str(SOURCE)}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    modules = set(json.loads(proc.stdout.strip().splitlines()[-1]))
    assert "kanawa.tools.schema" in modules
    assert {"pydantic.plugin._loader", "importlib.metadata"} & modules == set()
