"""Eager starts (kanawa._eager): the first step of a coroutine runs before ``start_eagerly`` returns, the
rest in a task of its own, with results, errors, cancellation and context variables as a task gives
them. The suite runs on Python 3.12 (eager tasks) and 3.11 (the first step driven by hand): the same
tests hold for both paths."""

from __future__ import annotations

import asyncio
import contextvars

import pytest

from kanawa._eager import start_eagerly

LABEL: contextvars.ContextVar[str] = contextvars.ContextVar("LABEL", default="caller")


async def test_a_coroutine_that_never_waits_is_done_before_the_call_returns() -> None:
    steps: list[str] = []

    async def send() -> int:
        steps.append("sent")
        return 7

    sending = start_eagerly(send(), asyncio.get_running_loop())
    assert steps == ["sent"]
    assert sending.done()
    assert sending.result() == 7


async def test_a_coroutine_that_waits_runs_its_first_step_now_and_the_rest_after_the_wait() -> None:
    steps: list[str] = []
    gate = asyncio.Event()

    async def send() -> str:
        steps.append("first")
        await gate.wait()
        steps.append("rest")
        assert asyncio.current_task() is sending  # the rest runs in the task the caller was given
        return "out"

    sending = start_eagerly(send(), asyncio.get_running_loop())
    steps.append("caller")
    assert not sending.done()
    await asyncio.sleep(0)
    assert steps == ["first", "caller"]  # still waiting: nothing ran past the wait
    gate.set()
    assert await sending == "out"
    assert steps == ["first", "caller", "rest"]


async def test_an_error_in_the_first_step_is_held_by_the_future_not_raised_to_the_caller() -> None:
    async def send() -> None:
        raise OSError("the client is gone")

    sending = start_eagerly(send(), asyncio.get_running_loop())
    assert sending.done()
    assert isinstance(sending.exception(), OSError)


async def test_an_error_after_a_wait_is_held_by_the_future() -> None:
    async def send() -> None:
        await asyncio.sleep(0)
        raise OSError("reset")

    sending = start_eagerly(send(), asyncio.get_running_loop())
    with pytest.raises(OSError, match="reset"):
        await sending


async def test_a_failed_wait_is_raised_where_the_coroutine_waits() -> None:
    broken: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    async def send() -> str:
        try:
            await broken
        except LookupError as exc:
            return f"handled {exc}"
        return "not reached"

    sending = start_eagerly(send(), asyncio.get_running_loop())
    broken.set_exception(LookupError("gone"))
    assert await sending == "handled gone"


async def test_cancelling_a_waiting_coroutine_reaches_it_where_it_waits() -> None:
    cleaned: list[str] = []

    async def send() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            cleaned.append("finally")

    sending = start_eagerly(send(), asyncio.get_running_loop())
    await asyncio.sleep(0)
    sending.cancel()
    with pytest.raises(asyncio.CancelledError):
        await sending
    assert sending.cancelled()
    assert cleaned == ["finally"]


async def test_a_coroutine_that_absorbs_its_cancellation_returns_its_value() -> None:
    async def send() -> str:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            return "stopped cleanly"
        return "not reached"

    sending = start_eagerly(send(), asyncio.get_running_loop())
    await asyncio.sleep(0)
    sending.cancel()
    assert await sending == "stopped cleanly"


async def test_a_coroutine_cancelled_in_its_first_step_gives_a_cancelled_future() -> None:
    async def send() -> None:
        raise asyncio.CancelledError

    sending = start_eagerly(send(), asyncio.get_running_loop())
    assert sending.done()
    assert sending.cancelled()


async def test_context_variables_set_by_the_coroutine_stay_in_its_own_context() -> None:
    seen: list[str] = []
    gate = asyncio.Event()

    async def send() -> None:
        seen.append(LABEL.get())
        LABEL.set("send")
        await gate.wait()
        seen.append(LABEL.get())

    LABEL.set("writer")
    sending = start_eagerly(send(), asyncio.get_running_loop())
    assert LABEL.get() == "writer"  # the first step's set did not leak back
    gate.set()
    await sending
    assert seen == ["writer", "send"]  # it saw the caller's value, and its own after the wait
