"""Seed 002 §3-3 ``normalize_model_name``: one rule shared by every adapter."""

from __future__ import annotations

import pytest

from kanawa.llm.adapter import canonical_model_name


@pytest.mark.parametrize(
    ("name", "prefixes", "expected"),
    [
        ("openai:GPT_5 mini", ("openai:",), "gpt-5-mini"),
        ("  Anthropic:Claude_3_Opus ", ("anthropic:",), "claude-3-opus"),
        ("gemini:models/Gemini-2.5-Pro", ("gemini:", "models/"), "gemini-2.5-pro"),
        ("models/gemini:x", ("gemini:", "models/"), "x"),
        ("llama3.1:8b", ("openai-chat:",), "llama3.1:8b"),
    ],
)
def test_canonical_model_name(name: str, prefixes: tuple[str, ...], expected: str) -> None:
    assert canonical_model_name(name, prefixes=prefixes) == expected
