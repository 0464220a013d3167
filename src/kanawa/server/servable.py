"""What the service needs of an "agent" it serves: :class:`ServableAgent` and the run it starts.

An :class:`~kanawa.agents.agent.Agent` is one; so is anything that drives several agents as one run
(SmartAO's coordinator, :mod:`kanawa.apps.smartao.service`). These protocols name exactly the surface
:class:`~kanawa.server.runs.RunManager`, ``GET /v1/agents`` and the tenant budgets use, so such a
composite is registered like any agent without imitating an ``Agent``'s internals — and a run of it
gets the same chunks, resume, auth and budgets.
"""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from typing import Any, Protocol

from kanawa.loop.hooks import RunHooks
from kanawa.loop.options import RunOptions
from kanawa.trace.events import Tracer
from kanawa.types import Message, Usage


class Named(Protocol):
    """A tool as ``GET /v1/agents`` lists it."""

    @property
    def name(self) -> str: ...


class ModelNamed(Protocol):
    """A model as ``GET /v1/agents`` lists it (an adapter's ``model`` string)."""

    @property
    def model(self) -> str: ...


class ServableState(Protocol):
    """The step counter a continued run sets (steps go on numbering after a checkpoint)."""

    current_step: int


class ServableResult(Protocol):
    """How a finished run ended: its termination reason, usage and conversation."""

    @property
    def termination_reason(self) -> object: ...

    @property
    def usage(self) -> Usage: ...

    @property
    def messages(self) -> Sequence[Message]: ...


class ServableRun(Protocol):
    """One run: iterate it for events (their ``kind`` picks the chunk type), then read ``result``.
    ``usage``, ``messages`` and ``step`` are what a checkpoint saves; ``cost`` goes into the ``done``
    chunk."""

    def __aiter__(self) -> ServableRun: ...

    def __anext__(self) -> Awaitable[Any]: ...

    @property
    def usage(self) -> Usage: ...

    @property
    def messages(self) -> Sequence[Message]: ...

    @property
    def step(self) -> int: ...

    @property
    def cost(self) -> float | None: ...

    @property
    def state(self) -> ServableState: ...

    @property
    def result(self) -> ServableResult: ...

    async def aclose(self) -> None: ...


class ServableAgent(Protocol):
    """Something the service can run under a name.

    ``tracer`` is replaced by the run manager (its trace chunks); ``guardrails`` gets the tenant budget
    (:mod:`kanawa.server.budgets`), which also walks ``handoffs``; ``stream`` must not raise for a bad
    input — the run it returns should fail with one of kanawa's errors instead, so the client gets an
    ``error`` chunk. ``options`` are the request's own additions (:class:`~kanawa.loop.options.RunOptions`:
    instructions, the client's tools, an output cap and schema); a run that calls a client tool ends
    with termination reason ``tools_pending`` and ``result.pending_tool_calls``.
    """

    tracer: Tracer | None

    @property
    def name(self) -> str: ...

    @property
    def tools(self) -> Sequence[Named]: ...

    @property
    def model(self) -> ModelNamed: ...

    @property
    def handoffs(self) -> Sequence[object]: ...

    @property
    def guardrails(self) -> tuple[RunHooks, ...]: ...

    @guardrails.setter
    def guardrails(self, value: Sequence[RunHooks]) -> None: ...

    def stream(
        self,
        user_input: Any,
        *,
        history: Sequence[Message] = (),
        run_id: str | None = None,
        options: RunOptions | None = None,
    ) -> ServableRun: ...


__all__ = ["ModelNamed", "Named", "ServableAgent", "ServableResult", "ServableRun", "ServableState"]
