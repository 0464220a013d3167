"""Starting a coroutine eagerly, on Python 3.11 and 3.12: its first step runs now, in the caller's turn.

A coroutine that finishes without waiting (an ASGI ``send`` whose socket takes the bytes) is then done
before :func:`start_eagerly` returns, with no task switch and no turn of the event loop; one that has
to wait goes on in a task of its own, so the caller never blocks and what it does next cannot
overtake the part already done.

Python 3.12 does this itself (``asyncio.Task(..., eager_start=True)``), and that is the path taken
there. Python 3.11 has no eager tasks: its first step is driven here by hand, in a copy of the
caller's context (as a task would run it: context variables it sets do not leak back); if it finished,
the answer is an already-completed future (cheaper than a task), otherwise the rest — waiting on what
the first step yielded, then resuming the coroutine — runs in a plain task in that same context. One
difference is left: during the first step on 3.11, ``asyncio.current_task()`` is the caller's task,
not a new one (nothing in the first step of an ASGI ``send`` asks).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

if sys.version_info >= (3, 12):

    def start_eagerly(coro: Coroutine[Any, Any, T], loop: asyncio.AbstractEventLoop) -> asyncio.Future[T]:
        """Run ``coro`` up to its first wait now; the future is done if it needed none."""
        return asyncio.Task(coro, loop=loop, eager_start=True)

else:
    import contextvars
    from collections.abc import Generator

    def start_eagerly(coro: Coroutine[Any, Any, T], loop: asyncio.AbstractEventLoop) -> asyncio.Future[T]:
        """Run ``coro`` up to its first wait now; the future is done if it needed none."""
        context = contextvars.copy_context()
        try:
            yielded = context.run(coro.send, None)
        except StopIteration as stop:
            done: asyncio.Future[T] = loop.create_future()
            done.set_result(stop.value)
            return done
        except asyncio.CancelledError:
            cancelled: asyncio.Future[T] = loop.create_future()
            cancelled.cancel()
            return cancelled
        except (KeyboardInterrupt, SystemExit):  # as a task does: these reach the event loop
            raise
        except BaseException as exc:
            failed: asyncio.Future[T] = loop.create_future()
            failed.set_exception(exc)
            return failed
        return asyncio.Task(_rest(coro, yielded), loop=loop, context=context)

    def _rest(coro: Coroutine[Any, Any, T], yielded: Any) -> Generator[Any, None, T]:
        """The rest of ``coro``, whose first step yielded ``yielded``, for a task to drive: the task
        waits on what the coroutine yielded, and each wake-up (or cancellation) goes on to the
        coroutine — ``yield from`` for a coroutine already past its first step."""
        while True:
            try:
                yield yielded
            except GeneratorExit:
                coro.close()
                raise
            except BaseException as exc:  # the task was cancelled while the coroutine waited
                try:
                    yielded = coro.throw(exc)
                except StopIteration as stop:
                    thrown_result: T = stop.value
                    return thrown_result
                continue
            try:
                yielded = coro.send(None)
            except StopIteration as stop:
                result: T = stop.value
                return result


__all__ = ["start_eagerly"]
