"""The demo agents a server offers when it is given none (``kanawa serve`` with no ``module:attr``).

They run offline with no API key, so a newcomer sees the service work:

- ``calc`` — asks the ``calculator`` tool for the arithmetic in the question, then answers with it;
- ``echo`` — streams the question back (handy for load tests).
"""

from __future__ import annotations

import re
from typing import Any

from kanawa.agents.agent import Agent
from kanawa.llm.testing.models import FunctionLLM, ModelRequest, Script
from kanawa.tools.builtin import calculator
from kanawa.types import AssistantMessage, ToolCall, ToolMessage, UserMessage

_ARITHMETIC = re.compile(r"[0-9(][0-9+\-*/().% ]*[0-9)]")


class _DemoLLM(FunctionLLM):
    """A FunctionLLM that keeps no request history (a server's demo model runs forever)."""

    async def _produce(self, request: ModelRequest) -> Script:
        self.requests.clear()
        return await super()._produce(request)


def _calc_answer(request: ModelRequest) -> Script:
    """The calculator's result for the latest question. Only the tool results after the last user
    message answer it: in a continued conversation (Responses ``previous_response_id``, a thread's
    next run) the earlier results belong to earlier questions. Each question's call has its own id
    (``call_<n>`` for the n-th question), as a real model's calls would."""
    messages = request.messages
    questions = [i for i, message in enumerate(messages) if isinstance(message, UserMessage)]
    since = questions[-1] + 1 if questions else 0
    results = [message for message in messages[since:] if isinstance(message, ToolMessage)]
    if results:
        return f"The answer is {results[-1].text}."
    match = _ARITHMETIC.search(request.last_user_text)
    if match is None:
        return "Ask me some arithmetic, for example: what is 2 + 3?"
    arguments = '{"expression": "' + match.group(0).strip() + '"}'
    return AssistantMessage(tool_calls=(ToolCall(f"call_{len(questions)}", "calculator", arguments),))


def _echo_answer(request: ModelRequest) -> Script:
    return request.last_user_text or "(nothing to echo)"


def demo_agents() -> dict[str, Agent[Any, Any]]:
    """The built-in agents (no key, no services)."""
    return {
        "calc": Agent(
            "calc",
            "Answer arithmetic with the calculator tool.",
            tools=[calculator],
            model=_DemoLLM(_calc_answer),
        ),
        "echo": Agent("echo", "Repeat the user's words.", tools=(), model=_DemoLLM(_echo_answer)),
    }


__all__ = ["demo_agents"]
