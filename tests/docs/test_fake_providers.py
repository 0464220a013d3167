"""The made-up model behind the local provider servers the documented blocks run against: what it
answers decides what the docs' ``# prints:`` comments can truthfully show."""

from __future__ import annotations

import json

from tests.docs.fake_providers import Conversation, Turn, decide

ADD = {
    "type": "object",
    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
    "required": ["a", "b"],
}
ANSWER = {
    "type": "object",
    "properties": {"value": {"type": "integer"}, "explanation": {"type": "string"}},
    "required": ["value", "explanation"],
}


def test_tools_offered_and_none_called_yet_calls_the_first_with_the_users_numbers() -> None:
    conv = Conversation(tools=[("add", ADD), ("multiply", ADD)])
    conv.user_said("What is 17 + 25?")
    assert decide(conv) == Turn(calls=(("add", {"a": 17, "b": 25}),))


def test_after_a_tool_result_the_answer_quotes_it() -> None:
    conv = Conversation(tools=[("add", ADD)])
    conv.user_said("What is 17 + 25?")
    conv.calls.append(("add", {"a": 17, "b": 25}))
    conv.results.append("42")
    assert decide(conv) == Turn(text="The answer is 42.")


def test_a_structured_answer_asked_for_after_the_tools_uses_the_whole_conversation() -> None:
    conv = Conversation()
    conv.user_said("What is 2 + 3?")
    conv.calls.append(("add", {"a": 2, "b": 3}))
    conv.results.append("5")
    conv.user_said("Answer with the JSON schema now.")
    conv.schema = ANSWER
    answer = json.loads(decide(conv).text)
    assert answer == {"value": 5, "explanation": "add(a=2, b=3) returned 5"}


def test_without_tools_it_answers_the_question_back() -> None:
    conv = Conversation()
    conv.user_said("Hello")
    assert decide(conv) == Turn(text="You asked: Hello")
