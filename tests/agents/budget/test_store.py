"""The in-memory store: sessions expire after ``ttl`` seconds without updates (a sliding window) and
expired sessions are swept, measured with a clock the tests move by hand."""

from __future__ import annotations

from kanawa.agents.budget import Charge, MemoryBudgetStore, TokenGuard
from tests.agents.budget._support import Counted, text_response


class Clock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_memory_totals_expire_after_ttl_of_inactivity() -> None:
    clock = Clock()
    guard = TokenGuard(max_requests=5, ttl=60, store=MemoryBudgetStore(clock=clock))
    await Counted(tool_turns=0).agent(guard).arun("add")
    clock.now += 59
    assert (await guard.totals()).requests == 1
    await Counted(tool_turns=0).agent(guard).arun("add")  # activity slides the window
    clock.now += 59
    assert (await guard.totals()).requests == 2
    clock.now += 1
    assert (await guard.totals()).requests == 0


def test_text_response_helper_reports_its_usage() -> None:
    assert text_response().usage.total_tokens == 110


async def test_the_memory_store_forgets_expired_sessions_it_is_never_asked_about_again() -> None:
    clock = Clock()
    store = MemoryBudgetStore(clock=clock)
    charge = Charge(1, 1, 0, unpriced=False)
    for i in range(100):
        await store.add(f"old-{i}", charge, ttl=10)
    clock.now += 11
    for _ in range(MemoryBudgetStore._SWEEP_EVERY):
        await store.add("live", charge, ttl=10)
    assert len(store) == 1
    assert (await store.totals("live")).tokens == 2 * MemoryBudgetStore._SWEEP_EVERY
