"""What the service needs of an "agent" it serves: :class:`ServableAgent` and the run it starts.

An :class:`~kanawa.agents.agent.Agent` is one; so is anything that drives several agents as one run
(SmartAO's coordinator, :mod:`kanawa.apps.smartao.service`). These protocols name exactly the surface
:class:`~kanawa.server.runs.manager.RunManager` and ``GET /v1/agents`` use, so such a
composite is registered like any agent without imitating an ``Agent``'s internals — and a run of it
gets the same chunks, resume, auth and budgets.
"""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from typing import Any, Protocol

from kanawa.loop.options import RunOptions
from kanawa.loop.state import LoopCounters
from kanawa.types import Message, Usage


class Named(Protocol):
    """A tool as ``GET /v1/agents`` lists it."""

    @property
    def name(self) -> str: ...


class ModelNamed(Protocol):
    """A model as ``GET /v1/agents`` lists it (an adapter's ``model`` string)."""

    @property
    def model(self) -> str: ...


class ServableResult(Protocol):
    """How a finished run ended: its termination reason, usage and conversation."""

    @property
    def termination_reason(self) -> object: ...

    @property
    def usage(self) -> Usage: ...

    @property
    def messages(self) -> Sequence[Message]: ...


class ServableRun(Protocol):
    """One run: iterate it for events (:mod:`kanawa.server.runs.chunks` translates them), then read
    ``result``. ``usage``, ``messages`` and :meth:`counters` are what a checkpoint saves; ``cost``
    goes into the ``done`` chunk."""

    def __aiter__(self) -> ServableRun: ...

    def __anext__(self) -> Awaitable[Any]: ...

    @property
    def usage(self) -> Usage: ...

    @property
    def messages(self) -> Sequence[Message]: ...

    @property
    def cost(self) -> float | None: ...

    def counters(self) -> LoopCounters:
        """What the run's limits have counted (its steps at least): saved with each checkpoint."""
        ...

    def restore_counters(self, counters: LoopCounters) -> None:
        """Before the run is iterated: go on counting from an earlier part of it (a checkpoint), so
        its limits hold for the whole run."""
        ...

    @property
    def result(self) -> ServableResult: ...

    async def aclose(self) -> None: ...


class ServableAgent(Protocol):
    """Something the service can run under a name.

    The service never changes it: what it adds to a run — the sink of the run's ``trace`` chunks,
    the tenant's budget guard — it gives that run as ``options``
    (:class:`~kanawa.loop.options.RunOptions`), which must reach the run's nested runs too. ``stream``
    must not raise for a bad input — the run it returns should fail with one of kanawa's errors
    instead, so the client gets an ``error`` chunk. ``options`` also carry the request's own
    additions (instructions, the client's tools, an output cap and schema); a run that calls a client
    tool ends with termination reason ``tools_pending`` and ``result.pending_tool_calls``.
    """

    @property
    def name(self) -> str: ...

    @property
    def tools(self) -> Sequence[Named]: ...

    @property
    def model(self) -> ModelNamed: ...

    def stream(
        self,
        user_input: Any,
        *,
        history: Sequence[Message] = (),
        run_id: str | None = None,
        options: RunOptions | None = None,
    ) -> ServableRun: ...


__all__ = ["ModelNamed", "Named", "ServableAgent", "ServableResult", "ServableRun"]
