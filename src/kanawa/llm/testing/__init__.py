"""Test models: stand-ins for a real provider that speak the same :class:`LLMAdapter` protocol.

:class:`ScriptedLLM` replays a script, :class:`FunctionLLM` answers with a function of the request
and :class:`TestLLM` invents schema-valid answers. None of them is ever used unless asked for by
name (``model=ScriptedLLM(...)`` or the model string ``"test"``).
"""

from kanawa.llm.testing.models import (
    FunctionLLM,
    ModelRequest,
    Script,
    ScriptedLLM,
    TestLLM,
    events_for,
    response_from,
)

__all__ = [
    "FunctionLLM",
    "ModelRequest",
    "Script",
    "ScriptedLLM",
    "TestLLM",
    "events_for",
    "response_from",
]
