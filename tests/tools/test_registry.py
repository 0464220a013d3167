"""``ToolRegistry`` (seed 002 §3-2): LoadedTool LRU (256), prompt stub, duplicate names."""

from __future__ import annotations

import json

import pytest

from kanawa.loop import AgentError
from kanawa.tools import LoadedTool, Tool, ToolError, ToolNotFound, ToolRegistry, make_tool, tool
from kanawa.tools.registry import LOADED_TOOL_CACHE_SIZE


@tool
def add(a: int, b: int = 0) -> int:
    """Add two integers.

    Args:
        a: first addend
        b: second addend
    """
    return a + b


@tool
def echo(text: str) -> str:
    """Echo."""
    return text


def make_numbered(i: int) -> Tool:
    def fn(x: int) -> int:
        return x + i

    return make_tool(fn, name=f"t{i}")


def test_register_get_contains_iter_len_names() -> None:
    registry = ToolRegistry(tools=[add])
    registry.register(echo)
    assert registry.get("add") is add
    assert "add" in registry
    assert echo in registry
    assert "nope" not in registry
    assert 3 not in registry
    assert list(registry) == [add, echo]
    assert len(registry) == 2
    assert registry.names() == ["add", "echo"]
    assert [s.name for s in registry.specs] == ["add", "echo"]


def test_register_wraps_plain_functions() -> None:
    def triple(n: int) -> int:
        return 3 * n

    registered = ToolRegistry().register(triple)
    assert isinstance(registered, Tool)
    assert registered.name == "triple"


def test_get_unknown_raises_tool_not_found() -> None:
    with pytest.raises(ToolNotFound, match="there is not a tool named 'nope'") as info:
        ToolRegistry().get("nope")
    assert isinstance(info.value, ToolError)
    assert isinstance(info.value, LookupError)
    assert info.value.tool_name == info.value.name == "nope"


def test_the_registry_raises_the_tool_layers_error_not_a_run_error() -> None:
    # the registry sits below the loop: its "no such tool" is a ToolError, never an AgentError
    with pytest.raises(ToolNotFound) as info:
        ToolRegistry().unregister("gone")
    assert type(info.value) is ToolNotFound
    assert not isinstance(info.value, AgentError)


def test_tool_not_found_is_still_importable_from_the_loop_package() -> None:
    # it moved to kanawa.tools; code written for 0.1 (`from kanawa.loop import ToolNotFound`) still works
    from kanawa import loop

    assert loop.ToolNotFound is ToolNotFound
    assert "ToolNotFound" not in loop.__all__


def test_duplicate_name_needs_replace() -> None:
    registry = ToolRegistry(tools=[add])
    registry.register(add)  # the same tool again is fine
    other = make_tool(lambda a: a, name="add")
    with pytest.raises(ValueError, match="already registered"):
        registry.register(other)
    registry.register(other, replace=True)
    assert registry.get("add") is other


def test_load_returns_loaded_tool_with_compact_schema_json() -> None:
    loaded = ToolRegistry(tools=[add]).load("add")
    assert isinstance(loaded, LoadedTool)
    tool_, schema_json = loaded
    assert tool_ is add
    assert json.loads(schema_json) == add.parameters
    assert ": " not in schema_json
    assert ", " not in schema_json


def test_load_is_cached_and_invalidated_on_replace() -> None:
    registry = ToolRegistry(tools=[add])
    first = registry.load("add")
    assert registry.load("add") is first
    replacement = make_tool(echo.function, name="add")
    registry.register(replacement, replace=True)
    again = registry.load("add")
    assert again is not first
    assert again.tool is replacement
    registry.unregister("add")
    with pytest.raises(ToolNotFound):
        registry.load("add")


def test_loaded_tool_cache_is_lru_of_256() -> None:
    assert LOADED_TOOL_CACHE_SIZE == 256
    registry = ToolRegistry(tools=[make_numbered(i) for i in range(LOADED_TOOL_CACHE_SIZE + 1)])
    first = registry.load("t0")
    for i in range(1, LOADED_TOOL_CACHE_SIZE):
        registry.load(f"t{i}")
    assert registry.load("t0") is first  # touched: now most recent
    registry.load(f"t{LOADED_TOOL_CACHE_SIZE}")  # evicts the least recent, t1
    assert registry.load("t0") is first
    evicted = registry.load("t1")
    assert evicted.tool.name == "t1"  # rebuilt, still correct


def test_prompt_stub_has_one_name_schema_line_per_tool() -> None:
    stub = ToolRegistry(tools=[add, echo]).get_prompt_stub()
    lines = stub.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith('"add": {"type":"object",')
    name, _, schema = lines[1].partition(": ")
    assert json.loads(name) == "echo"
    assert json.loads(schema) == echo.parameters


def test_prompt_stub_of_empty_registry_is_empty() -> None:
    assert ToolRegistry().get_prompt_stub() == ""
