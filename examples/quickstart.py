"""The tour of docs/guide.md, runnable offline: ``python examples/quickstart.py``.

It uses the built-in test models, so it needs no API key; swap ``model=`` for ``"openai:gpt-5"``,
``"anthropic:claude-sonnet-4-5"``, ``"gemini:gemini-2.5-flash"`` or
``"openai-chat:<model>@http://localhost:11434/v1"`` to run it on a real model.
"""

from __future__ import annotations

import asyncio

from pydantic import BaseModel

from kanawa import Agent, ScriptedLLM, tool
from kanawa.llm.testing import ModelRequest
from kanawa.types import AssistantMessage, ToolCall


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: first addend
        b: second addend
    """
    return a + b


@tool
async def multiply(a: int, b: int) -> int:
    """Multiply two integers.

    Args:
        a: first factor
        b: second factor
    """
    return a * b


class Answer(BaseModel):
    value: int
    explanation: str


def no_tools_offered(request: ModelRequest) -> None:
    assert not request.tools, "the final-output request must not offer tools"
    assert request.response_schema is not None


# A scripted model: turn 1 calls two tools in parallel, turn 2 says it is done, and the loop then asks
# for the structured answer (tools withdrawn, schema sent) — exactly what a real model would see.
model = ScriptedLLM(
    [
        AssistantMessage(
            tool_calls=(
                ToolCall("c1", "add", '{"a": 2, "b": 3}'),
                ToolCall("c2", "multiply", '{"a": 4, "b": 5}'),
            )
        ),
        "2 + 3 = 5 and 4 × 5 = 20.",
        '{"value": 25, "explanation": "(2 + 3) + (4 × 5) = 25"}',
    ],
    checks=[None, None, no_tools_offered],
)

agent = Agent(
    "calc",
    instructions="Answer with arithmetic. Use the tools.",
    tools=[add, multiply],
    model=model,
    output_type=Answer,
)


async def main() -> None:
    async for step in agent.stream("What is (2 + 3) + (4 × 5)?"):
        if step.kind == "tool_call":
            print(f"→ {step.call.name}({step.call.arguments})")
        elif step.kind == "tool_result":
            print(f"← {step.result.name}: {step.result.content[0].text}")  # type: ignore[union-attr]
        elif step.kind == "final_response":
            print("answer:", step.output)


asyncio.run(main())

# The same agent, synchronously, with a fresh script — and a look at what the run cost.
agent.model = ScriptedLLM(
    [
        AssistantMessage(tool_calls=(ToolCall("c1", "add", '{"a": 1, "b": 1}'),)),
        "2",
        '{"value": 2, "explanation": "1+1"}',
    ]
)
result = agent.run("1 + 1?")
print(
    result.output,
    "|",
    result.usage.requests,
    "requests,",
    len(result.messages),
    "messages,",
    result.termination_reason,
)
