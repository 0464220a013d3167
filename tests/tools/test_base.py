"""``Tool`` / ``ToolResult`` contract additions: direct calls, ``make_tool``, ``to_message``."""

from __future__ import annotations

from kanawa.tools import ToolErrorKind, ToolResult, make_tool, tool
from kanawa.types import TextPart, ToolMessage, ToolSpec


def test_calling_a_tool_calls_its_function() -> None:
    @tool
    def greet(name: str, *, punctuation: str = "!") -> str:
        return f"hi {name}{punctuation}"

    assert greet("kanawa", punctuation="?") == "hi kanawa?"


def test_spec_and_defaults() -> None:
    t = make_tool(lambda_free, name="free")
    assert t.spec == ToolSpec("free", "Free function.", t.parameters, strict=False)
    assert t.timeout is None


def lambda_free() -> None:
    """Free function."""


def test_to_message_builds_tool_message() -> None:
    result = ToolResult("id1", "calc", (TextPart("2"),))
    assert result.to_message() == ToolMessage("id1", "2", is_error=False, name="calc")
    failed = ToolResult(
        "id2", "calc", (TextPart("x"),), is_error=True, error_kind=ToolErrorKind.EXECUTION_ERROR
    )
    assert failed.to_message().is_error is True
