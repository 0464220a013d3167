"""The one opening every protocol uses (``kanawa.server.http.protocols.opening``): whatever fails after
the stream was admitted gives the place back, and whatever fails after the run began stops it.

Each failure a door can meet is taken in turn with a real run manager and run store: the stream cap,
the run cap, input the run cannot take, a block that raises before it hands the place over, a
response that cannot be built (what an A2A answer echoing ``NaN`` metadata once did), the request
cancelled while it waits. After each, the tenant's stream count is zero and no run is left going;
the refusals come out as the error table's statuses."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from kanawa.server.http.event_stream import OpenStreams
from kanawa.server.http.protocols.errors import ProtocolError, protocol_error
from kanawa.server.http.protocols.openai_inputs import InvalidInput
from kanawa.server.http.protocols.opening import ENDED, held_stream, opened_run
from kanawa.server.runs.manager import RunManager
from kanawa.server.store.base import RunRecord
from kanawa.server.store.memory import MemoryRunStore
from tests.server.protocols.a2a_agents import GATES, agents

TENANT = "alpha"


def _manager(*, max_runs: int = 8) -> RunManager:
    return RunManager(agents(), MemoryRunStore(), max_runs=max_runs)  # type: ignore[arg-type]


def _run_id(record: RunRecord) -> str:
    return record.run_id


async def _going(manager: RunManager) -> list[str]:
    """The tenant's runs not yet ended, once each cancelled one has had the time to stop (waits on
    the statuses, at most 10 s)."""
    for _ in range(200):
        going = [r.run_id for r in await manager.store.list(TENANT, limit=100) if r.status not in ENDED]
        if not going:
            return going
        await asyncio.sleep(0.05)
    return going


def _start(manager: RunManager, question: str) -> Callable[[], Awaitable[RunRecord]]:
    async def begin() -> RunRecord:
        return await manager.start(TENANT, "teller", question)

    return begin


async def test_a_failure_after_the_run_began_gives_the_place_back_and_stops_the_run() -> None:
    manager, streams = _manager(), OpenStreams(per_tenant=1)
    question = "built badly"

    def unbuildable(admitted: tuple[str, str | None]) -> Any:
        raise ValueError("Out of range float values are not JSON compliant")

    async def fails_to_stream() -> None:
        async with opened_run(streams, manager, TENANT, _start(manager, question), run_of=_run_id) as opened:
            assert streams.held() == 1
            opened.hand_over(unbuildable)

    with pytest.raises(ValueError, match="not JSON compliant"):
        await fails_to_stream()
    assert streams.held() == 0
    assert await _going(manager) == []
    GATES[question].set()


async def test_a_block_that_raises_or_is_cancelled_gives_everything_back() -> None:
    manager, streams = _manager(), OpenStreams(per_tenant=1)
    with pytest.raises(ProtocolError):
        async with opened_run(streams, manager, TENANT, _start(manager, "refused"), run_of=_run_id):
            raise ProtocolError(404, "no such thing")

    inside = asyncio.Event()

    async def waits() -> None:
        async with opened_run(streams, manager, TENANT, _start(manager, "waits"), run_of=_run_id):
            inside.set()
            await asyncio.Event().wait()  # a non-streaming request waiting for its answer

    waiting = asyncio.create_task(waits())
    await inside.wait()
    assert streams.held() == 1
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert streams.held() == 0
    assert await _going(manager) == []
    GATES["refused"].set()
    GATES["waits"].set()


async def test_refusals_before_the_run_come_out_as_the_tables_errors_and_hold_nothing() -> None:
    manager, streams = _manager(max_runs=1), OpenStreams(per_tenant=1)
    async with opened_run(streams, manager, TENANT, _start(manager, "holds"), run_of=_run_id) as held:
        with pytest.raises(ProtocolError) as at_cap:  # the tenant's one stream place is taken
            async with opened_run(streams, manager, TENANT, _start(manager, "second"), run_of=_run_id):
                pass
        assert at_cap.value.status == 429
        assert at_cap.value.headers == {"Retry-After": "1"}
        holding = held.run_id
    assert streams.held() == 0
    with pytest.raises(ProtocolError) as run_cap:  # the tenant's one run is still going
        async with opened_run(streams, manager, TENANT, _start(manager, "third"), run_of=_run_id):
            pass
    assert run_cap.value.status == 429
    assert run_cap.value.client_error
    assert streams.held() == 0

    async def bad_input() -> RunRecord:
        raise InvalidInput("content other than text", param="input[0]")

    with pytest.raises(ProtocolError) as invalid:
        async with opened_run(streams, manager, TENANT, bad_input, run_of=_run_id):
            pass
    assert (invalid.value.status, invalid.value.param) == (400, "input[0]")
    assert streams.held() == 0
    GATES["holds"].set()
    record = await manager.store.get(TENANT, holding)
    assert record is not None


def test_a_resume_place_is_given_back_unless_handed_over() -> None:
    streams = OpenStreams(per_tenant=1, per_run=1)
    with pytest.raises(RuntimeError), held_stream(streams, TENANT, "r1"):
        raise RuntimeError("the response could not be made")
    assert streams.held() == 0
    with held_stream(streams, TENANT, "r1") as held:
        admitted = held.hand_over(lambda place: place)
    assert admitted == (TENANT, "r1")
    assert streams.held() == 1
    streams.release(*admitted)
    assert streams.held() == 0


def test_anything_outside_the_table_is_a_server_fault() -> None:
    assert protocol_error(ValueError("x")) is None
    assert protocol_error(KeyError("x")) is None
    refusal = protocol_error(InvalidInput("no"))
    assert refusal is not None
    assert refusal.client_error
    assert refusal.status == 400
