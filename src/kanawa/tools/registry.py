"""``ToolRegistry``: the named set of tools an agent may call (seed 002 §3-2, §9-2).

* ``register`` takes a :class:`Tool` or a plain function (wrapped with ``@tool``, seed 002 §3-1).
  Registering a *different* tool under a taken name is an error unless ``replace=True``.
* ``load(name)`` returns a :class:`LoadedTool` ``(tool, schema_json)`` from an LRU cache of 256
  entries; the compact schema JSON is rendered once per tool, not per prompt. Re-registering a name
  drops its cache entry.
* ``get_prompt_stub()`` renders ``"name": {"type":"object", ...}`` lines for text-only prompts.
* ``load_plugins()`` registers the tools other packages publish under the ``kanawa.tools`` entry-point
  group (see :mod:`kanawa.tools.plugins`).
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

from kanawa._logging import get_logger
from kanawa.tools.base import Tool
from kanawa.tools.decorator import make_tool
from kanawa.tools.errors import ToolNotFound
from kanawa.types import ToolSpec

__all__ = ["LOADED_TOOL_CACHE_SIZE", "LoadedTool", "ToolRegistry"]

LOADED_TOOL_CACHE_SIZE = 256
"""Seed 002 §3-2: ``LoadedTool`` entries kept in the LRU cache."""

logger = get_logger(__name__)


class LoadedTool(NamedTuple):
    """A tool together with its JSON schema rendered as compact JSON text."""

    tool: Tool
    schema_json: str


class ToolRegistry:
    """Tools by name, in registration order."""

    __slots__ = ("_cache", "_tools", "_view")

    def __init__(self, *, tools: Iterable[Tool | Callable[..., Any]] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        self._view: Mapping[str, Tool] = MappingProxyType(self._tools)
        self._cache: OrderedDict[str, LoadedTool] = OrderedDict()
        for item in tools:
            self.register(item)

    def register(self, tool: Tool | Callable[..., Any], *, replace: bool = False) -> Tool:
        """Add ``tool`` (a :class:`Tool`, or a function to wrap) and return the registered :class:`Tool`.

        Raises :class:`ValueError` when another tool already has the name and ``replace`` is false;
        registering the very same tool again is a no-op.
        """
        item = tool if isinstance(tool, Tool) else make_tool(tool)
        existing = self._tools.get(item.name)
        if existing is not None and existing is not item:
            if not replace:
                raise ValueError(
                    f"a different tool named {item.name!r} is already registered (use replace=True)"
                )
            self._cache.pop(item.name, None)
        self._tools[item.name] = item
        return item

    def unregister(self, name: str) -> Tool:
        """Remove and return the tool called ``name`` (:class:`~kanawa.tools.errors.ToolNotFound` if
        there is none)."""
        self._cache.pop(name, None)
        try:
            return self._tools.pop(name)
        except KeyError:
            raise ToolNotFound(name) from None

    def get(self, name: str) -> Tool:
        """The tool called ``name``; :class:`~kanawa.tools.errors.ToolNotFound` when there is none."""
        try:
            return self._tools[name]
        except KeyError:
            raise ToolNotFound(name) from None

    def load(self, name: str) -> LoadedTool:
        """The tool called ``name`` with its compact schema JSON, through the LRU cache (seed 002 §3-2)."""
        cache = self._cache
        loaded = cache.get(name)
        if loaded is not None:
            cache.move_to_end(name)
            return loaded
        item = self.get(name)
        loaded = LoadedTool(item, json.dumps(item.parameters, ensure_ascii=False, separators=(",", ":")))
        cache[name] = loaded
        if len(cache) > LOADED_TOOL_CACHE_SIZE:
            cache.popitem(last=False)
        return loaded

    def get_prompt_stub(self) -> str:
        """One ``"name": {schema}`` line per tool, for prompts of models without native tool calling."""
        return "\n".join(
            f"{json.dumps(name, ensure_ascii=False)}: {self.load(name).schema_json}" for name in self._tools
        )

    def load_plugins(self, group: str | None = None, *, replace: bool = False) -> list[Tool]:
        """Register the tools published under the entry-point ``group`` (default ``kanawa.tools``).

        Broken plugins and name clashes are logged and skipped. Returns the tools registered.
        """
        from kanawa.tools.plugins import ENTRY_POINT_GROUP, load_entry_point_tools

        registered: list[Tool] = []
        for item in load_entry_point_tools(group=group or ENTRY_POINT_GROUP):
            try:
                registered.append(self.register(item, replace=replace))
            except ValueError:
                logger.warning("tool plugin %r skipped: the name is already registered", item.name)
        return registered

    def names(self) -> list[str]:
        """Tool names, in registration order."""
        return list(self._tools)

    def as_mapping(self) -> Mapping[str, Tool]:
        """A live, read-only name → tool view (what :class:`~kanawa.tools.invoker.ToolInvoker` reads)."""
        return self._view

    @property
    def specs(self) -> list[ToolSpec]:
        """The tools as :class:`~kanawa.types.ToolSpec` objects, for an LLM request."""
        return [t.spec for t in self._tools.values()]

    def __contains__(self, item: object) -> bool:
        """``"name" in registry`` or ``some_tool in registry``."""
        if isinstance(item, Tool):
            return self._tools.get(item.name) is item
        return isinstance(item, str) and item in self._tools

    def __iter__(self) -> Iterator[Tool]:
        return iter(list(self._tools.values()))

    def __len__(self) -> int:
        return len(self._tools)

    def __repr__(self) -> str:
        return f"ToolRegistry({self.names()!r})"
