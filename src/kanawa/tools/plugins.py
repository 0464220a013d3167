"""Tools published by other packages through entry points (seed 002 §9-2 "Plugin Loader").

A package offers tools by declaring entry points in the ``kanawa.tools`` group::

    [project.entry-points."kanawa.tools"]
    calculator = "kanawa.tools.builtin:calculator"

Each entry point must resolve to a :class:`Tool` or to a plain typed function (wrapped with
``@tool``). The tool keeps its own name; the entry-point name only identifies the plugin in logs.
A plugin that fails to import or is neither of those is logged (with its entry-point name) and
skipped — one broken package never stops an agent from starting.
"""

from __future__ import annotations

from collections.abc import Iterable
from importlib.metadata import EntryPoint, entry_points

from kanawa._logging import get_logger
from kanawa.tools.base import Tool
from kanawa.tools.decorator import make_tool

__all__ = ["ENTRY_POINT_GROUP", "load_entry_point_tools"]

ENTRY_POINT_GROUP = "kanawa.tools"

logger = get_logger(__name__)


def load_entry_point_tools(*, group: str = ENTRY_POINT_GROUP) -> list[Tool]:
    """The tools of every installed entry point in ``group``, in discovery order."""
    return _tools_from_entry_points(entry_points(group=group))


def _tools_from_entry_points(points: Iterable[EntryPoint]) -> list[Tool]:
    tools: list[Tool] = []
    for point in points:
        extra = {"entry_point": point.name, "entry_point_group": point.group}
        try:
            loaded = point.load()
        except Exception:
            logger.warning("tool plugin %r failed to load; skipped", point.name, exc_info=True, extra=extra)
            continue
        if isinstance(loaded, Tool):
            tools.append(loaded)
        elif callable(loaded):
            try:
                tools.append(make_tool(loaded))
            except (TypeError, ValueError):
                logger.warning(
                    "tool plugin %r is not a valid tool; skipped", point.name, exc_info=True, extra=extra
                )
        else:
            logger.warning(
                "tool plugin %r is neither a Tool nor a function (%s); skipped",
                point.name,
                type(loaded).__name__,
                extra=extra,
            )
    return tools
