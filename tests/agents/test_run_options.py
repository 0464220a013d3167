"""Per-run options (``RunOptions``): a caller's instructions, its own tools, an output cap and schema
reach the model for that run only; a call of a client tool ends the run ``tools_pending`` after the
agent's own calls of the turn ran, and the caller's answers continue it."""

from __future__ import annotations

from pydantic import BaseModel

from kanawa import Agent, RunContext, tool
from kanawa.llm.testing import FunctionLLM, ModelRequest
from kanawa.llm.testing.models import Script
from kanawa.loop.options import RunOptions
from kanawa.server.runs.checkpoint import Checkpoint
from kanawa.types import (
    AssistantMessage,
    OutputSchema,
    SystemMessage,
    ToolCall,
    ToolMessage,
    ToolSpec,
    UserMessage,
)

SEARCH = ToolSpec("search_files", "Search the user's files.", {"type": "object", "properties": {}})
RAN: list[str] = []


@tool
def clock() -> str:
    """The time."""
    RAN.append("clock")
    return "noon"


def _model(request: ModelRequest) -> Script:
    answered = {m.name: m.text for m in request.tool_results}
    if "search_files" in answered:
        return f"found {answered['search_files']} at {answered.get('clock')}"
    if "search_files" in request.tool_names:
        return AssistantMessage(
            tool_calls=(ToolCall("c1", "clock", "{}"), ToolCall("c2", "search_files", '{"q": "x"}'))
        )
    system = request.messages[0]
    assert isinstance(system, SystemMessage)
    settings = request.settings
    cap = settings.max_output_tokens if settings is not None else None
    schema = settings.json_schema if settings is not None else None
    return f"system={system.content!r} cap={cap} schema={schema}"


def agent() -> Agent[str, None]:
    return Agent("helper", "Be helpful.", tools=[clock], model=FunctionLLM(_model))


async def test_instructions_cap_and_schema_reach_the_model_for_that_run_only() -> None:
    helper = agent()
    options = RunOptions(
        instructions="Answer in French.",
        max_output_tokens=50,
        output_schema=OutputSchema("answer", {"type": "object"}),
    )
    result = await helper.arun("hi", options=options)
    assert result.text == "system='Be helpful.\\n\\nAnswer in French.' cap=50 schema={'type': 'object'}"
    plain = await helper.arun("hi")
    assert plain.text == "system='Be helpful.' cap=None schema=None", "the agent was not changed"


async def test_dynamic_instructions_keep_the_runs_own() -> None:
    def today(ctx: RunContext[None]) -> str:
        return "Today is Monday."

    helper: Agent[str, None] = Agent("helper", today, tools=(), model=FunctionLLM(_model))
    result = await helper.arun("hi", options=RunOptions(instructions="Be brief."))
    assert result.text.startswith("system='Today is Monday.\\n\\nBe brief.'")


async def test_a_typed_agent_keeps_its_own_schema() -> None:
    class Answer(BaseModel):
        text: str

    def typed(request: ModelRequest) -> Script:
        schema = request.settings.json_schema if request.settings is not None else None
        return f'{{"text": "{schema}"}}'

    helper: Agent[Answer, None] = Agent(
        "typed", "Answer.", tools=(), model=FunctionLLM(typed), output_type=Answer
    )
    result = await helper.arun("hi", options=RunOptions(output_schema=OutputSchema("x", {"type": "object"})))
    assert result.output == Answer(text="None")


async def test_a_client_tool_call_ends_the_run_and_its_answer_continues_it() -> None:
    RAN.clear()
    helper = agent()
    options = RunOptions(client_tools=(SEARCH,))
    first = await helper.arun("find x", options=options)
    assert str(first.termination_reason) == "tools_pending"
    assert [c.name for c in first.pending_tool_calls] == ["search_files"]
    assert RAN == ["clock"], "the agent's own call of the turn ran"
    assert isinstance(first.messages[-1], ToolMessage)
    assert first.messages[-1].name == "clock"
    answer = ToolMessage("c2", "x.txt", name="search_files")
    second = await helper.arun([answer], history=first.messages, options=options)
    assert second.text == "found x.txt at noon"
    assert RAN == ["clock"], "nothing ran twice"


async def test_an_agent_tool_of_the_same_name_wins() -> None:
    helper = agent()
    clash = ToolSpec("clock", "A client clock.", {"type": "object"})
    seen: list[tuple[str, ...]] = []

    def model(request: ModelRequest) -> Script:
        seen.append(request.tool_names)
        return "ok"

    helper.model = FunctionLLM(model)
    await helper.arun("hi", options=RunOptions(client_tools=(clash, SEARCH)))
    assert seen == [("clock", "search_files")]


def test_a_checkpoint_keeps_the_options_and_the_callers_messages() -> None:
    options = RunOptions(
        instructions="x",
        client_tools=(SEARCH,),
        max_output_tokens=9,
        output_schema=OutputSchema("s", {"type": "object"}, strict=False, description="d"),
    )
    point = Checkpoint(
        "helper",
        (UserMessage("hi"),),
        3,
        options=options,
        pending=(ToolMessage("c2", "x.txt", name="search_files"),),
    )
    loaded = Checkpoint.loads(point.dumps())
    assert loaded.options == options
    assert loaded.pending == point.pending
    old = Checkpoint.loads(Checkpoint("helper", (UserMessage("hi"),), 3).dumps())
    assert old.options is None
    assert old.pending == ()
