"""A composite servable agent like SmartAO's coordinator, for the Celery tests: not an ``Agent`` but
the servable surface, with a resource of its worker process made on its first run and kept — a
helper task answering through a queue, as SmartAO's textlint sidecar and corpora are kept. A run
that finds the helper gone (made in an event loop that has been closed) fails, so a worker that ran
each task in a loop of its own shows here.

:func:`extensions` mounts one more composite the way an application does (``KANAWA_SERVE_EXTENSIONS``):
its own run event translated by the extension, and a lifespan that notes the process it was entered
in — on a prefork worker, each pool process enters it for itself."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Awaitable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from kanawa.loop.errors import AgentError
from kanawa.loop.events import FinalResponse
from kanawa.loop.options import RunOptions
from kanawa.loop.state import LoopCounters
from kanawa.server.runs.chunks import fields_chunk
from kanawa.server.runs.extensions import Extension
from kanawa.types import AssistantMessage, Message, Usage, UserMessage


class Helper:
    """The process's helper: made on first use, a task answering questions through a queue."""

    def __init__(self) -> None:
        self._queue: asyncio.Queue[tuple[str, asyncio.Future[str]]] | None = None
        self._task: asyncio.Task[None] | None = None

    async def ask(self, text: str) -> str:
        loop = asyncio.get_running_loop()
        if self._task is not None and (self._task.done() or self._task.get_loop() is not loop):
            raise AgentError("the worker's helper is gone: it was made in an event loop that has ended")
        if self._task is None or self._queue is None:
            self._queue = asyncio.Queue()
            self._task = loop.create_task(self._serve())
        reply: asyncio.Future[str] = loop.create_future()
        await self._queue.put((text, reply))
        return await reply

    async def _serve(self) -> None:
        assert self._queue is not None
        while True:
            text, reply = await self._queue.get()
            reply.set_result(f"{os.getpid()}:{text.upper()}")


@dataclass(frozen=True, slots=True)
class _Model:
    model: str = "composite"


@dataclass(slots=True)
class _State:
    current_step: int = 0


@dataclass(frozen=True, slots=True)
class _Result:
    termination_reason: str
    usage: Usage
    messages: Sequence[Message]


@dataclass
class Relay:
    """The composite: its run asks the process's :class:`Helper` and answers with the reply."""

    helper: Helper = field(default_factory=Helper)
    name: str = "relay"
    stamps: bool = False
    """Yield a :class:`Stamp` event first (the extension's agent)."""

    @property
    def tools(self) -> tuple[()]:
        return ()

    @property
    def model(self) -> _Model:
        return _Model()

    @property
    def handoffs(self) -> tuple[()]:
        return ()

    def stream(
        self,
        user_input: Any,
        *,
        history: Sequence[Message] = (),
        run_id: str | None = None,
        options: RunOptions | None = None,
    ) -> RelayRun:
        messages = [
            *history,
            *(user_input if isinstance(user_input, list) else [UserMessage(str(user_input))]),
        ]
        return RelayRun(self.helper, messages, stamps=self.stamps)


class RelayRun:
    def __init__(self, helper: Helper, messages: list[Message], *, stamps: bool = False) -> None:
        self._helper = helper
        self._stamps = stamps
        self._messages = messages
        self.state = _State()
        self._result: _Result | None = None
        self._gen = self._run()

    def __aiter__(self) -> RelayRun:
        return self

    def __anext__(self) -> Awaitable[Any]:
        return self._gen.__anext__()

    async def _run(self) -> Any:
        if self._stamps:
            yield Stamp(os.getpid(), StampProcess.entered_in)
        question = next((m.text for m in reversed(self._messages) if isinstance(m, UserMessage)), "")
        answer = await self._helper.ask(question)
        self._messages.append(AssistantMessage(text=answer))
        self.state.current_step += 1
        self._result = _Result("completed", Usage(), self._messages)
        yield FinalResponse(self.state.current_step, answer, answer, Usage())

    @property
    def usage(self) -> Usage:
        return Usage()

    @property
    def messages(self) -> Sequence[Message]:
        return self._messages

    def counters(self) -> LoopCounters:
        return LoopCounters(self.state.current_step)

    def restore_counters(self, counters: LoopCounters) -> None:
        self.state.current_step = counters.steps

    @property
    def cost(self) -> float | None:
        return 0.0

    @property
    def result(self) -> _Result:
        assert self._result is not None
        return self._result

    async def aclose(self) -> None:
        await self._gen.aclose()


@dataclass(frozen=True, slots=True)
class Stamp:
    """An application's own run event: which process ran the run, and which entered the lifespan
    there (``0``: none had) — translated by the extension's ``event_chunks``."""

    pid: int
    entered_in: int


class StampProcess:
    """What the extension's lifespan sets up in a process (the pid it was entered in) and undoes."""

    entered_in = 0

    @classmethod
    @asynccontextmanager
    async def lifespan(cls) -> AsyncIterator[None]:
        cls.entered_in = os.getpid()
        try:
            yield
        finally:
            cls.entered_in = 0


def extensions() -> list[Extension]:
    """``KANAWA_SERVE_EXTENSIONS`` of the test cluster (and the app in front of it)."""
    return [
        Extension(
            "stamps",
            agents={"stamper": Relay(name="stamper", stamps=True)},
            event_chunks={Stamp: fields_chunk("stamp")},
            lifespan=StampProcess.lifespan,
        )
    ]
