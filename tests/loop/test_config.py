"""Seed 003 "設定パラメータ": AgentConfiguration defaults and validation."""

from __future__ import annotations

import dataclasses

import pytest

from kanawa.loop.config import AgentConfiguration


def test_defaults_are_seed_003s() -> None:
    config = AgentConfiguration()
    assert config.max_steps == 10
    assert config.auto_execute_tools is True
    assert config.max_duplicate_tool_calls == 2
    assert config.max_tool_calls_per_tool == 5
    assert config.max_decode_retries == 2
    assert config.on_max_steps == "error"
    assert config.tool_timeout == 60.0  # beyond seed 003: a hung tool must not hang the run
    assert config.parallel_tool_calls is True


def test_configuration_is_frozen_and_keyword_only() -> None:
    config = AgentConfiguration(max_steps=3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.max_steps = 4  # type: ignore[misc]
    with pytest.raises(TypeError):
        AgentConfiguration(3)  # type: ignore[call-arg]


@pytest.mark.parametrize(
    ("field", "value", "error"),
    [
        ("max_steps", 0, ValueError),
        ("max_steps", 2.5, TypeError),
        ("max_steps", True, TypeError),
        ("max_duplicate_tool_calls", 0, ValueError),
        ("max_tool_calls_per_tool", 0, ValueError),
        ("max_decode_retries", -1, ValueError),
        ("on_max_steps", "explode", ValueError),
        ("tool_timeout", 0, ValueError),
        ("tool_timeout", "5", ValueError),
        ("prompt_language", "", ValueError),
    ],
)
def test_invalid_values_fail_at_construction(field: str, value: object, error: type[Exception]) -> None:
    with pytest.raises(error, match=field):
        AgentConfiguration(**{field: value})  # type: ignore[arg-type]


def test_valid_edge_values_are_accepted() -> None:
    config = AgentConfiguration(
        max_steps=1,
        max_tool_calls_per_tool=None,
        max_decode_retries=0,
        on_max_steps="finalize",
        tool_timeout=0.5,
    )
    assert config.max_tool_calls_per_tool is None
    assert config.on_max_steps == "finalize"
