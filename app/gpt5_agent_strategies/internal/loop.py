"""Running kanawa's asyncio agent loop inside Dify's gevent-patched plugin process (seed 001 §4.5).

The plugin SDK patches the process with gevent and serves each request in a greenlet; two asyncio
loops cannot run in greenlets of one OS thread at once. So each run's loop gets a native thread (from
the hub's thread pool) with an unpatched selector, and every SDK call that must happen on the hub — a
backwards LLM or tool invocation, handing a message to the request's output — is marshalled to a
greenlet there by :class:`HubBridge`, the native thread waiting on an unpatched queue.

Iteration rules: ``maximum_iterations`` is the number of model requests (kanawa's ``max_steps``); with
``on_max_steps="finalize"`` the last one offers no tools, so a run that reaches the limit still ends
with an answer instead of an error. Identical successful calls may repeat twice, as in kanawa.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Iterable, Iterator
from typing import Any, TypeVar

import gevent
from gevent import monkey
from gevent.queue import Queue as HubQueue

from kanawa.loop.config import AgentConfiguration

__all__ = ["MAXIMUM_ITERATIONS_RANGE", "HubBridge", "iteration_config", "run_on_native_thread"]

T = TypeVar("T")

MAXIMUM_ITERATIONS_RANGE = (1, 30)
_NativeQueue = monkey.get_original("queue", "Queue")
_NativeSelector = monkey.get_original("selectors", "DefaultSelector")
_END = object()


def iteration_config(maximum_iterations: object) -> AgentConfiguration:
    """``AgentConfiguration(max_steps=maximum_iterations, on_max_steps="finalize")``; the value must be
    a whole number in 1..30 (§4.3)."""
    if isinstance(maximum_iterations, bool) or not isinstance(maximum_iterations, int | float):
        raise ValueError("maximum_iterations must be a number from 1 to 30")
    if maximum_iterations != int(maximum_iterations):
        raise ValueError("maximum_iterations must be a whole number from 1 to 30")
    low, high = MAXIMUM_ITERATIONS_RANGE
    if not low <= maximum_iterations <= high:
        raise ValueError("maximum_iterations must be a number from 1 to 30")
    return AgentConfiguration(
        max_steps=int(maximum_iterations), on_max_steps="finalize", parallel_tool_calls=False
    )


class HubBridge:
    """Calls into the gevent hub from the run's native thread (module docstring)."""

    def __init__(self) -> None:
        self._hub = gevent.get_hub()

    def call(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` in a new greenlet on the hub and wait (natively) for its result or exception."""
        box: Any = _NativeQueue()

        def job() -> None:
            try:
                box.put((True, fn()))
            except BaseException as exc:
                box.put((False, exc))

        self._hub.loop.run_callback_threadsafe(lambda: gevent.spawn(job))
        ok, value = box.get()
        if ok:
            return value  # type: ignore[no-any-return]
        raise value

    def iterate(self, make: Callable[[], Iterable[T]]) -> Iterator[T]:
        """Iterate ``make()`` on the hub, handing each item over as it arrives."""
        box: Any = _NativeQueue()

        def job() -> None:
            try:
                for item in make():
                    box.put((True, item))
                box.put((True, _END))
            except BaseException as exc:
                box.put((False, exc))

        self._hub.loop.run_callback_threadsafe(lambda: gevent.spawn(job))
        while True:
            ok, value = box.get()
            if not ok:
                raise value
            if value is _END:
                return
            yield value


def run_on_native_thread(
    body: Callable[[Callable[[object], None]], Coroutine[Any, Any, None]],
) -> Iterator[object]:
    """Run ``body(emit)`` on its own event loop in a native thread; yield what it emits, in order,
    to the calling greenlet. An exception in ``body`` is re-raised here after the emitted items."""
    outbox: HubQueue[tuple[bool, object]] = HubQueue()
    bridge = HubBridge()

    def emit(item: object) -> None:
        bridge.call(lambda: outbox.put((True, item)))

    def native() -> None:
        loop = asyncio.SelectorEventLoop(_NativeSelector())
        try:
            loop.run_until_complete(body(emit))
            bridge.call(lambda: outbox.put((True, _END)))
        except BaseException as exc:
            failure = exc
            bridge.call(lambda: outbox.put((False, failure)))
        finally:
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    bridge._hub.threadpool.spawn(native)
    while True:
        ok, item = outbox.get()
        if not ok:
            raise item  # type: ignore[misc]
        if item is _END:
            return
        yield item
