"""Objects that simulated entry points in ``test_plugins.py`` resolve to."""

from __future__ import annotations

from kanawa.tools import tool


@tool
def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


def plain_function(n: int) -> int:
    """Square a number."""
    return n * n


def bad_signature(*values: int) -> int:
    return sum(values)


NOT_CALLABLE = 42
