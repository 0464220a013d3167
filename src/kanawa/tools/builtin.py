"""Example tools shipped with kanawa, also published as ``kanawa.tools`` entry points.

* :data:`calculator` — safe arithmetic: the expression is parsed with :mod:`ast` and walked by a small
  evaluator that knows numbers, ``+ - * / // % **``, unary signs, parentheses, a few :mod:`math`
  functions and constants. There is no ``eval``; integer results are capped at 10,000 bits and
  expressions at 500 characters, so no input can exhaust CPU or memory.
* :data:`current_time` — the current time in an IANA time zone (:mod:`zoneinfo`).
* :func:`make_read_file_tool` — a ``read_file`` tool bound to a :class:`FileSandbox`.

Each parameter carries an example in its JSON schema (``Field(examples=[...])``): it shows a model
how a call looks, and :class:`~kanawa.llm.testing.models.TestLLM` sends it, so an offline run makes real calls
(``calculator("(17 * 23) + sqrt(144)")``, ``current_time("Asia/Tokyo")``, ``read_file("notes.txt")``).

Invalid input raises, which the invoker reports as ``tool invoke error: failed to execute tool``.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from datetime import datetime
from typing import Annotated
from zoneinfo import ZoneInfo

from pydantic import Field

from kanawa.tools.base import Tool
from kanawa.tools.decorator import make_tool, tool
from kanawa.tools.sandbox import FileSandbox

__all__ = ["calculator", "current_time", "evaluate_expression", "make_read_file_tool"]

MAX_EXPRESSION_LENGTH = 500
MAX_INT_BITS = 10_000

Number = int | float

_BINARY: dict[type[ast.operator], Callable[[Number, Number], Number]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}
_UNARY: dict[type[ast.unaryop], Callable[[Number], Number]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e, "tau": math.tau}


def _round(value: Number, digits: Number = 0) -> Number:
    if not isinstance(digits, int) or abs(digits) > 100:
        raise ValueError("round() takes a whole number of digits between -100 and 100")
    return round(value, digits)


_FUNCTIONS: dict[str, Callable[..., Number]] = {
    "sqrt": math.sqrt,
    "sin": math.sin,
    "cos": math.cos,
    "tan": math.tan,
    "asin": math.asin,
    "acos": math.acos,
    "atan": math.atan,
    "exp": math.exp,
    "log": math.log,
    "log2": math.log2,
    "log10": math.log10,
    "abs": abs,
    "floor": math.floor,
    "ceil": math.ceil,
    "round": _round,
}


def _power(base: Number, exponent: Number) -> Number:
    big = isinstance(base, int) and isinstance(exponent, int) and exponent > 0
    if big and max(abs(int(base)).bit_length(), 1) * int(exponent) > MAX_INT_BITS:
        raise ValueError("the result is too large")
    result: Number = base**exponent
    if isinstance(result, complex):
        raise ValueError("the result is not a real number")
    return result


def _evaluate(node: ast.AST) -> Number:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if (
        isinstance(node, ast.Constant)
        and isinstance(node.value, int | float)
        and not isinstance(node.value, bool)
    ):
        return node.value
    if isinstance(node, ast.BinOp):
        left, right = _evaluate(node.left), _evaluate(node.right)
        if isinstance(node.op, ast.Pow):
            return _checked(_power(left, right))
        binary = _BINARY.get(type(node.op))
        if binary is None:
            raise ValueError(f"operator {type(node.op).__name__} is not supported")
        return _checked(binary(left, right))
    if isinstance(node, ast.UnaryOp):
        unary = _UNARY.get(type(node.op))
        if unary is None:
            raise ValueError(f"operator {type(node.op).__name__} is not supported")
        return unary(_evaluate(node.operand))
    if isinstance(node, ast.Name) and node.id in _CONSTANTS:
        return _CONSTANTS[node.id]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS:
        if node.keywords or any(isinstance(arg, ast.Starred) for arg in node.args):
            raise ValueError(f"{node.func.id}() takes plain positional arguments")
        return _checked(_FUNCTIONS[node.func.id](*(_evaluate(arg) for arg in node.args)))
    raise ValueError(f"unsupported element in expression: {type(node).__name__}")


def _checked(value: Number) -> Number:
    if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
        raise ValueError("the result is too large")
    return value


def evaluate_expression(expression: str) -> Number:
    """Evaluate an arithmetic expression safely; raises :class:`ValueError` (or ``ZeroDivisionError``,
    ``OverflowError``) for anything it will not or cannot compute."""
    if len(expression) > MAX_EXPRESSION_LENGTH:
        raise ValueError(f"the expression is longer than {MAX_EXPRESSION_LENGTH} characters")
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError:
        raise ValueError("the expression is not valid arithmetic") from None
    result = _evaluate(tree)
    if isinstance(result, float) and not math.isfinite(result):
        raise ValueError("the result is not a finite number")
    return result


@tool
def calculator(expression: Annotated[str, Field(examples=["(17 * 23) + sqrt(144)"])]) -> Number:
    """Evaluate an arithmetic expression and return the number.

    Supports + - * / // % ** and parentheses, the constants pi, e and tau, and the functions sqrt,
    sin, cos, tan, asin, acos, atan, exp, log, log2, log10, abs, floor, ceil and round.

    Args:
        expression: the expression to evaluate, e.g. "2 * (3 + 4) ** 2" or "sqrt(2) / 2"
    """
    return evaluate_expression(expression)


@tool
def current_time(timezone: Annotated[str, Field(examples=["Asia/Tokyo"])] = "UTC") -> str:
    """Return the current date and time (ISO 8601, with UTC offset) in a time zone.

    Args:
        timezone: an IANA time zone name such as "UTC", "Asia/Tokyo" or "Europe/Paris"
    """
    return datetime.now(ZoneInfo(timezone)).isoformat(timespec="seconds")


def make_read_file_tool(sandbox: FileSandbox) -> Tool:
    """A ``read_file`` tool that reads UTF-8 text files through ``sandbox`` (size-limited, no escapes)."""

    def read_file(path: Annotated[str, Field(examples=["notes.txt"])]) -> str:
        """Read a UTF-8 text file from the files directory.

        Args:
            path: the file's path relative to the files directory, e.g. "notes/todo.txt"
        """
        return sandbox.read_text(path)

    description = f"Read a UTF-8 text file (at most {sandbox.max_bytes} bytes) from the files directory."
    return make_tool(read_file, name="read_file", description=description)
