"""Which tool call a run was started from, so a nested run's trace can name its parent.

A run started while a tool call is executing (an agent used as a tool, and handoffs offered as
``transfer_to_<agent>`` tools) is that call's child. The loop marks each executing call with
:func:`tool_call_scope`; the nested run's ``agent_start`` event reads :func:`current_parent` and
carries it as ``data.parent_run_id`` / ``parent_step`` / ``parent_call_id``. Sinks that build a tree
(OpenTelemetry) parent the nested ``invoke_agent`` span under that ``execute_tool`` span.

A context variable is the right carrier: each concurrent tool call runs in its own task (its own copy
of the context) and ``asyncio.to_thread`` copies the context into the worker thread of a sync tool,
so parallel calls never see each other's marks. Code that starts agent runs outside a tool (a
coordinator running agents itself) can set a parent with :func:`tool_call_scope` too.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TraceParent:
    """The tool call (of run ``run_id``, model turn ``step``) under which a nested run is executing."""

    run_id: str
    step: int
    call_id: str


_PARENT: ContextVar[TraceParent | None] = ContextVar("kanawa_trace_parent", default=None)


def current_parent() -> TraceParent | None:
    """The tool call the current code runs inside, if any."""
    return _PARENT.get()


@contextmanager
def tool_call_scope(parent: TraceParent) -> Iterator[None]:
    """Mark ``parent`` as the executing tool call for the body (restored afterwards)."""
    token = _PARENT.set(parent)
    try:
        yield
    finally:
        _PARENT.reset(token)


__all__ = ["TraceParent", "current_parent", "tool_call_scope"]
