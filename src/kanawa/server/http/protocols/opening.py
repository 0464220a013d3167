"""How every protocol opens a run: admit the stream, start or continue the run, and give back
everything when anything after that fails.

Each of the seven doors (kanawa SSE, OpenAI Responses and Chat, AG-UI, the AI SDK, A2A, MCP) takes
the same steps, so they are written once, in :func:`opened_run`:

1. the request's stream takes a place among the tenant's (and the run's) open streams — refused with
   429 at the cap (:class:`~kanawa.server.http.event_stream.TooManyStreams`);
2. the protocol's ``begin`` starts the run, or continues the one the request names;
3. the route's block answers: it hands the place over to the response that streams the run
   (:meth:`Held.hand_over`; the stream gives it back when it ends), or waits for the answer.

Whatever fails after step 1 — the run refused (its cap, input it cannot take), the block raising, the
request cancelled because its client went away — the place is given back; whatever fails after step
2 also stops the run the request started or continued, so no run is left working for nobody. A
refusal comes out as a :class:`~kanawa.server.http.protocols.errors.ProtocolError` (the one table in
:mod:`.errors`), which the protocol renders in its own shape. A resume, which opens no run, holds
its place with :func:`held_stream` under the same rules.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Final, Generic, TypeVar

import anyio
from fastapi import Request

from kanawa.server.http.event_stream import OpenStreams
from kanawa.server.http.protocols.errors import REFUSALS, protocol_error
from kanawa.server.runs.manager import RunManager

T = TypeVar("T")
R = TypeVar("R")
Admitted = tuple[str, str | None]
"""``(tenant, run id)`` a stream was admitted as (:meth:`OpenStreams.admit`)."""
ENDED: Final = frozenset({"completed", "failed", "cancelled"})
"""Statuses of a run that has nothing left to stop."""

_log = logging.getLogger(__name__)


def streams_of(request: Request) -> OpenStreams:
    """The app's open streams (the caps every protocol's streams count against)."""
    streams: OpenStreams = request.app.state.streams
    return streams


class Held:
    """A place among the open streams, held for one request until it is handed over or given back."""

    __slots__ = ("_given", "_streams", "admitted")

    def __init__(self, streams: OpenStreams, admitted: Admitted) -> None:
        self._streams = streams
        self.admitted = admitted
        self._given = False

    def hand_over(self, build: Callable[[Admitted], R]) -> R:
        """What ``build`` makes of the place (the response that streams the run, which gives the place
        back when it ends). Should ``build`` fail, the place is still this one's to give back."""
        made = build(self.admitted)
        self._given = True
        return made

    def give_back(self) -> None:
        """Free the place, unless it was handed over or freed already."""
        if not self._given:
            self._given = True
            self._streams.release(*self.admitted)


def _admit(streams: OpenStreams, tenant: str, run_id: str | None) -> Held:
    try:
        streams.admit(tenant, run_id)
    except REFUSALS as exc:
        error = protocol_error(exc)
        assert error is not None
        raise error from None
    return Held(streams, (tenant, run_id))


@contextmanager
def held_stream(streams: OpenStreams, tenant: str, run_id: str | None) -> Iterator[Held]:
    """A stream place for a request that opens no run (a resume): 429 at the caps; given back unless
    the block hands it over."""
    held = _admit(streams, tenant, run_id)
    try:
        yield held
    finally:
        held.give_back()


class Opened(Held, Generic[T]):
    """The stream place of a request and what its ``begin`` gave (``value``: the run's part, record …)
    for the run ``run_id``."""

    __slots__ = ("run_id", "value")

    def __init__(self, held: Held, value: T, run_id: str) -> None:
        super().__init__(held._streams, held.admitted)
        self.value = value
        self.run_id = run_id


@asynccontextmanager
async def opened_run(
    streams: OpenStreams,
    manager: RunManager,
    tenant: str,
    begin: Callable[[], Awaitable[T]],
    *,
    run_of: Callable[[T], str],
) -> AsyncIterator[Opened[T]]:
    """Admit the tenant's stream, then ``begin`` (start or continue a run; ``run_of`` names the run
    from what it gives), then the block (module docstring). kanawa's refusals come out as a
    :class:`~.errors.ProtocolError` (:func:`~.errors.protocol_error`); on any failure the place is
    given back and the run begun is stopped."""
    held = _admit(streams, tenant, None)
    try:
        try:
            value = await begin()
        except REFUSALS as exc:
            error = protocol_error(exc)
            assert error is not None
            raise error from None
    except BaseException:
        held.give_back()
        raise
    opened = Opened(held, value, run_of(value))
    try:
        yield opened
    except BaseException:
        with anyio.CancelScope(shield=True):
            await stop_run(manager, tenant, opened.run_id)
        raise
    finally:
        opened.give_back()


async def stop_run(manager: RunManager, tenant: str, run_id: str) -> None:
    """Cancel ``run_id`` unless it has ended; a failure to do so is logged, never raised (the
    request's own failure is what its client must hear of)."""
    try:
        record = await manager.store.get(tenant, run_id)
        if record is not None and record.status not in ENDED:
            await manager.cancel(record)
    except Exception:
        _log.exception("run %s: could not stop it after its request failed", run_id)


__all__ = ["ENDED", "Admitted", "Held", "Opened", "held_stream", "opened_run", "stop_run", "streams_of"]
