"""Entry-point plugin loader (seed 002 §9-2): external packages register tools; broken ones are skipped."""

from __future__ import annotations

import logging
from importlib.metadata import EntryPoint

import pytest

from kanawa.tools import ENTRY_POINT_GROUP, Tool, ToolRegistry, load_entry_point_tools, make_tool
from kanawa.tools.builtin import calculator
from kanawa.tools.plugins import _tools_from_entry_points


def point(name: str, value: str) -> EntryPoint:
    return EntryPoint(name=name, value=value, group=ENTRY_POINT_GROUP)


def test_installed_project_publishes_builtin_tools() -> None:
    tools = load_entry_point_tools()
    names = [t.name for t in tools]
    assert "calculator" in names
    assert "current_time" in names
    assert next(t for t in tools if t.name == "calculator") is calculator


def test_unknown_group_yields_no_tools() -> None:
    assert load_entry_point_tools(group="kanawa.tools.no-such-group") == []


def test_entry_point_may_be_a_tool_or_a_plain_function() -> None:
    tools = _tools_from_entry_points(
        [
            point("shout", "tests.tools.plugin_targets:shout"),
            point("sq", "tests.tools.plugin_targets:plain_function"),
        ]
    )
    assert [t.name for t in tools] == ["shout", "plain_function"]
    assert all(isinstance(t, Tool) for t in tools)
    assert tools[1].description == "Square a number."


def test_broken_plugins_are_logged_with_their_name_and_skipped(caplog: pytest.LogCaptureFixture) -> None:
    points = [
        point("missing_module", "tests.tools.no_such_module:thing"),
        point("missing_attr", "tests.tools.plugin_targets:nothing_here"),
        point("bad_sig", "tests.tools.plugin_targets:bad_signature"),
        point("not_callable", "tests.tools.plugin_targets:NOT_CALLABLE"),
        point("good", "tests.tools.plugin_targets:shout"),
    ]
    with caplog.at_level(logging.WARNING, logger="kanawa.tools.plugins"):
        tools = _tools_from_entry_points(points)
    assert [t.name for t in tools] == ["shout"]
    logged = [r.getMessage() for r in caplog.records]
    for name in ("missing_module", "missing_attr", "bad_sig", "not_callable"):
        assert any(repr(name) in message and "skipped" in message for message in logged)
    assert {getattr(r, "entry_point", None) for r in caplog.records} >= {"missing_module", "not_callable"}


def test_registry_load_plugins_registers_and_skips_clashes(caplog: pytest.LogCaptureFixture) -> None:
    registry = ToolRegistry()
    loaded = registry.load_plugins()
    assert {"calculator", "current_time"} <= set(registry.names())
    assert loaded

    @make_tool
    def calculator(expression: str) -> str:  # a different tool under a taken name
        return expression

    clash = ToolRegistry(tools=[calculator])
    with caplog.at_level(logging.WARNING, logger="kanawa.tools.registry"):
        clash.load_plugins()
    assert clash.get("calculator") is calculator
    assert any("'calculator'" in r.getMessage() for r in caplog.records)
