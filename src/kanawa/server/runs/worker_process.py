"""What one Celery worker process keeps for all the runs it executes: its event loop, its run manager
and the resources of the extensions it serves.

A worker serves the same runs the app accepts, so it loads the same things from the same settings:
the agents of ``KANAWA_SERVE_AGENTS`` and the extensions of ``KANAWA_SERVE_EXTENSIONS`` — their agents
beside the registry's, their events' chunks in the run manager's translation (a run of SmartAO's
coordinator yields its own ``findings``, ``patch`` and ``rubric`` events, which a worker without them
could not stream) and their ``lifespan`` functions, entered once per process on the process's loop before
its first run and left when the process stops. The app enters the same lifespans in each of its own
processes; a worker is one more process with the resources its runs need.

Every task of the process runs on the one loop (:attr:`WorkerProcess.loop`): what an extension or a
composite agent makes once and keeps — a helper task, a sidecar's pipes, a database pool — belongs
to the loop it was made in, and a loop per task would leave the second run with objects of a closed
loop. The loop runs while a task runs (Celery calls the task, which runs the loop until the run
ends), so what a lifespan leaves going in the background goes on during the process's runs.
"""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack
from functools import cached_property
from typing import TYPE_CHECKING

from kanawa.server.runs.loaders import LoadError, load_agents, load_extensions
from kanawa.server.runs.manager import RunManager
from kanawa.server.settings import ServerSettings

if TYPE_CHECKING:
    from kanawa.server.runs.extensions import Extension


class WorkerProcess:
    """The process's loop, manager and extension resources (one instance per process:
    :func:`kanawa.server.runs.workers.this_process`)."""

    def __init__(self, settings: ServerSettings) -> None:
        self.settings = settings
        self._resources: AsyncExitStack | None = None

    @cached_property
    def extensions(self) -> tuple[Extension, ...]:
        """The extensions of ``KANAWA_SERVE_EXTENSIONS``, loaded once (their factories run once)."""
        return load_extensions(self.settings.serve_extensions)

    @cached_property
    def manager(self) -> RunManager:
        """The run manager over the registry and the extensions' agents and events (its store is
        set per task: :mod:`kanawa.server.runs.workers`). A bad registry or extension raises
        :class:`LoadError` here, at the worker's start."""
        from kanawa.server.runs.budgets import tenant_guard
        from kanawa.server.runs.extensions import merged_agents, merged_translation
        from kanawa.server.store.memory import MemoryRunStore

        guard = tenant_guard(self.settings)
        try:
            agents = merged_agents(load_agents(self.settings.serve_agents), self.extensions)
            translation = merged_translation(self.extensions)
        except LoadError:
            raise
        except ValueError as exc:  # a name taken twice, an event translated twice
            raise LoadError(str(exc)) from None
        return RunManager(
            agents,
            MemoryRunStore(),
            translation=translation,
            guardrails=(guard,) if guard is not None else (),
        )

    @cached_property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The process's one event loop (made on first use: after the pool forked)."""
        return asyncio.new_event_loop()

    async def ready(self) -> None:
        """Enter the extensions' lifespans, once per process (on :attr:`loop`); a later call returns
        at once. A lifespan that raises leaves none entered, and the next call tries again."""
        if self._resources is not None:
            return
        stack = AsyncExitStack()
        try:
            for extension in self.extensions:
                if extension.lifespan is not None:
                    await stack.enter_async_context(extension.lifespan())
        except BaseException:
            await stack.aclose()
            raise
        self._resources = stack

    def start(self) -> None:
        """At the process's start (Celery's ``worker_process_init``): the resources begin before the
        first run arrives, and a lifespan that fails stops the process rather than each run."""
        asyncio.set_event_loop(self.loop)
        self.loop.run_until_complete(self.ready())

    def stop(self) -> None:
        """At the process's end: leave the extensions' lifespans (their sidecars end with the process),
        then close the loop."""
        resources, self._resources = self._resources, None
        if "loop" not in self.__dict__ or self.loop.is_closed():
            return
        try:
            if resources is not None:
                self.loop.run_until_complete(resources.aclose())
        finally:
            self.loop.close()


__all__ = ["WorkerProcess"]
