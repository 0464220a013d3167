"""Built-in example tools: calculator (safe, no eval), current_time, read_file (sandboxed)."""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from kanawa.tools import FileAccessError, FileSandbox, SandboxViolation, ToolErrorKind, ToolInvoker
from kanawa.tools.builtin import calculator, current_time, evaluate_expression, make_read_file_tool
from kanawa.types import ToolCall, text_of


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("1 + 2 * 3", 7),
        ("(1 + 2) * 3", 9),
        ("7 // 2", 3),
        ("7 % 4", 3),
        ("2 ** 10", 1024),
        ("-3 + +4", 1),
        ("1 / 4", 0.25),
        ("sqrt(16)", 4.0),
        ("round(2.567, 2)", 2.57),
        ("log(e)", 1.0),
        ("2 ** -1", 0.5),
    ],
)
def test_calculator_evaluates_arithmetic(expression: str, expected: float) -> None:
    assert calculator(expression) == expected


def test_calculator_knows_pi_and_trigonometry() -> None:
    assert math.isclose(evaluate_expression("cos(pi)"), -1.0)
    assert math.isclose(evaluate_expression("sin(pi / 2)"), 1.0)


@pytest.mark.parametrize(
    "expression",
    [
        "__import__('os').system('true')",
        "open('/etc/passwd')",
        "(1).__class__",
        "x + 1",
        "[1, 2]",
        "'a' * 3",
        "1 if True else 2",
        "lambda: 1",
        "sqrt(x=4)",
        "True + 1",
        "1 << 2",
        "",
    ],
)
def test_calculator_refuses_anything_but_arithmetic(expression: str) -> None:
    with pytest.raises(ValueError, match=r"unsupported|not supported|not valid arithmetic|positional"):
        evaluate_expression(expression)


@pytest.mark.parametrize("expression", ["9 ** 9 ** 9", "10 ** 100000", "2 ** 5000 * 2 ** 5000 * 2 ** 5000"])
def test_calculator_bounds_huge_results(expression: str) -> None:
    with pytest.raises(ValueError, match="too large"):
        evaluate_expression(expression)


def test_calculator_bounds_expression_length_and_round_digits() -> None:
    with pytest.raises(ValueError, match="longer than"):
        evaluate_expression("1+" * 300 + "1")
    with pytest.raises(ValueError, match="round"):
        evaluate_expression("round(5, -1000000000)")


def test_calculator_non_finite_and_zero_division_raise() -> None:
    with pytest.raises(ValueError, match="finite"):
        evaluate_expression("1e308 * 10")
    with pytest.raises(ZeroDivisionError):
        evaluate_expression("1 / 0")


def test_current_time_in_a_zone() -> None:
    stamp = datetime.fromisoformat(current_time("Asia/Tokyo"))
    assert stamp.utcoffset() == timedelta(hours=9)
    assert datetime.fromisoformat(current_time()).utcoffset() == timedelta(0)


async def test_current_time_unknown_zone_becomes_the_fixed_tool_error() -> None:
    result = await ToolInvoker([current_time]).invoke(
        ToolCall("c", "current_time", '{"timezone": "Mars/Olympus"}')
    )
    assert result.error_kind is ToolErrorKind.EXECUTION_ERROR
    assert text_of(result.content) == "tool invoke error: failed to execute tool"
    assert result.detail is not None
    assert "ZoneInfoNotFoundError" in result.detail


async def test_calculator_through_the_invoker() -> None:
    result = await ToolInvoker([calculator]).invoke(ToolCall("c", "calculator", '{"expression": "6 * 7"}'))
    assert text_of(result.content) == "42"
    assert result.output == 42


def test_builtin_schemas_describe_their_parameters() -> None:
    assert calculator.parameters["required"] == ["expression"]
    calculator_props: Any = calculator.parameters["properties"]
    time_props: Any = current_time.parameters["properties"]
    assert "description" in calculator_props["expression"]
    assert time_props["timezone"]["default"] == "UTC"


async def test_builtin_schemas_carry_an_example_for_each_parameter_and_it_works(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello", encoding="utf-8")
    read_file = make_read_file_tool(FileSandbox(root=tmp_path))
    properties: list[tuple[str, Any]] = [
        (t.name, t.parameters["properties"]) for t in (calculator, current_time, read_file)
    ]
    examples = {
        (tool, name): prop.get("examples") for tool, props in properties for name, prop in props.items()
    }
    assert examples == {
        ("calculator", "expression"): ["(17 * 23) + sqrt(144)"],
        ("current_time", "timezone"): ["Asia/Tokyo"],
        ("read_file", "path"): ["notes.txt"],
    }
    assert calculator("(17 * 23) + sqrt(144)") == 403.0  # each example is a call that succeeds
    assert datetime.fromisoformat(current_time("Asia/Tokyo")).utcoffset() == timedelta(hours=9)
    assert read_file("notes.txt") == "hello"


async def test_read_file_tool_reads_text_inside_the_sandbox_only(tmp_path: Path) -> None:
    root = tmp_path / "files"
    root.mkdir()
    (root / "notes.txt").write_text("こんにちは", encoding="utf-8")
    (tmp_path / "secret.txt").write_text("secret")
    read_file = make_read_file_tool(FileSandbox(root=root, max_bytes=1024))
    assert read_file.name == "read_file"
    assert "1024 bytes" in read_file.description
    assert read_file("notes.txt") == "こんにちは"
    with pytest.raises(SandboxViolation):
        read_file("../secret.txt")
    with pytest.raises(FileAccessError):
        read_file("missing.txt")

    invoker = ToolInvoker([read_file])
    ok = await invoker.invoke(ToolCall("1", "read_file", '{"path": "notes.txt"}'))
    assert text_of(ok.content) == "こんにちは"
    refused = await invoker.invoke(ToolCall("2", "read_file", '{"path": "../secret.txt"}'))
    assert refused.is_error
    assert "secret" not in text_of(refused.content)
    assert refused.detail is not None
    assert refused.detail.startswith("kanawa.tools.errors.SandboxViolation")
