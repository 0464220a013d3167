"""A registry and an extension for ``test_worker_start_failures``: a composite whose runs cannot take
their restored counters, and an extension whose resources fail to start."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from kanawa.loop.state import LoopCounters
from kanawa.server.runs.extensions import Extension
from tests.server.composite_agents import Relay, RelayRun


class StubbornRun(RelayRun):
    """A run that refuses the counters a worker restores from the checkpoint."""

    def restore_counters(self, counters: LoopCounters) -> None:
        raise RuntimeError("these counters do not fit this run")


@dataclass
class Stubborn(Relay):
    name: str = "stubborn"

    def stream(self, user_input: object, **kwargs: object) -> StubbornRun:  # type: ignore[override]
        return StubbornRun(self.helper, [])


def agents() -> dict[str, object]:
    return {"stubborn": Stubborn(), "relay": Relay()}


@asynccontextmanager
async def _broken_resources() -> AsyncIterator[None]:
    raise ConnectionError("the sidecar did not start")
    yield


def broken_extension() -> Extension:
    return Extension("broken", lifespan=_broken_resources)
