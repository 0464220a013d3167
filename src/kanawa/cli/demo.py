"""``kanawa demo``: a real multi-step, tool-using agent run with no API key and no services.

An :class:`~kanawa.Agent` with three real tools — ``calculator``, ``current_time`` and ``read_file``
in a sandbox under ``./.kanawa/demo-files/`` (created with a small ``notes.txt``) — and a pydantic
output type (:class:`~kanawa.cli.demo_model.DemoReport`). Events print live (rich); the JSONL trace
goes to ``./.kanawa/traces/`` (``KANAWA_TRACE_DIR``).

The default model is kanawa's built-in :class:`~kanawa.llm.testing.models.TestLLM` (model string ``"test"``),
unchanged: it calls the three tools in parallel with the example arguments their schemas declare
(``"(17 * 23) + sqrt(144)"``, ``"Asia/Tokyo"``, ``"notes.txt"``), the tools really run, and it fills
the structured answer with a summary of what they returned. ``--model scripted`` runs the narrated
scripted model of :mod:`kanawa.cli.demo_model` (it also shows a sandbox refusal of
``../secrets.env``); any other model string (``openai:gpt-5`` …) runs the same demo on a real provider.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.rule import Rule
from rich.text import Text

from kanawa.agents.agent import Agent
from kanawa.cli.demo_model import NOTES_FILE, NOTES_TEXT, QUESTION, DemoReport, scripted_model
from kanawa.cli.errors import setup_hint
from kanawa.cli.running import EXIT_SETUP, execute, make_tracer
from kanawa.llm.adapter import LLMAdapter
from kanawa.llm.errors import LLMError
from kanawa.llm.models import resolve_model
from kanawa.tools.base import Tool
from kanawa.tools.builtin import calculator, current_time, make_read_file_tool
from kanawa.tools.sandbox import FileSandbox

DEMO_FILES = Path(".kanawa") / "demo-files"
DEMO_MODEL = "test"
"""The default: the built-in TestLLM."""
SCRIPTED_MODEL = "scripted"
"""The narrated scripted model of :mod:`kanawa.cli.demo_model`."""
_ABOUT = {
    DEMO_MODEL: "kanawa's built-in TestLLM: calls each tool with its schema's example arguments",
    SCRIPTED_MODEL: "a scripted model that narrates, then tries a file outside the sandbox",
}
INSTRUCTIONS = (
    "You are kanawa's demo assistant. Use the tools to answer: compute with calculator, tell the time "
    "with current_time and read files with read_file. Call independent tools in parallel."
)


def prepare_files(root: Path = DEMO_FILES) -> FileSandbox:
    """Create the demo's sandbox folder with its notes file (rewritten each time, so it is known)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / NOTES_FILE).write_text(NOTES_TEXT, encoding="utf-8")
    return FileSandbox(root=root)


def demo_tools(sandbox: FileSandbox) -> list[Tool]:
    return [calculator, current_time, make_read_file_tool(sandbox)]


def _model(spec: str) -> LLMAdapter:
    return scripted_model() if spec == SCRIPTED_MODEL else resolve_model(spec)


async def run_demo(console: Console, err: Console, *, model: str = DEMO_MODEL, trace: bool = True) -> int:
    """The whole demo; returns the exit code (0, or 2 with one line on stderr if the model is unusable)."""
    try:
        adapter = _model(model)
    except LLMError as exc:
        err.print(Text(setup_hint(model, exc)), soft_wrap=True, highlight=False)
        return EXIT_SETUP
    try:
        tracer = make_tracer(trace)
    except ValueError as exc:  # a bad KANAWA_TRACE_* setting
        err.print(Text(f"kanawa: {exc}"), soft_wrap=True, highlight=False)
        return EXIT_SETUP
    sandbox = prepare_files()
    tools = demo_tools(sandbox)
    agent = Agent("demo", INSTRUCTIONS, tools=tools, model=adapter, output_type=DemoReport, tracer=tracer)
    offline = model in _ABOUT
    console.print(Rule("[bold]kanawa demo[/bold]" + (" · no API key, no services" if offline else "")))
    model_line = Text.assemble(("model   ", "bold"), f"{adapter.provider}:{adapter.model}")
    if offline:
        model_line.append(f" ({_ABOUT[model]})", style="dim")
    console.print(model_line)
    console.print(Text.assemble(("tools   ", "bold"), ", ".join(t.name for t in tools)))
    console.print(Text.assemble(("sandbox ", "bold"), str(sandbox.root)))
    console.print(Text.assemble(("question ", "bold"), QUESTION))
    console.print(Rule(style="dim"))
    return await execute(agent, QUESTION, model_spec=model, console=console, err=err, stream=True)


__all__ = ["DEMO_FILES", "DEMO_MODEL", "SCRIPTED_MODEL", "demo_tools", "prepare_files", "run_demo"]
