"""Record and replay the HTTP traffic of the provider SDKs at their transport.

The official SDKs kanawa drives (openai, anthropic, google-genai) all send through an httpx-family
client — ``httpx2`` in the versions this project locks, ``httpx`` in older ones — whose default
transports are ``HTTPTransport`` and ``AsyncHTTPTransport``. While a cassette is in use,
:func:`use_cassette` replaces those two classes' ``handle_request``/``handle_async_request`` (of every
installed library of the family) with its own: below every SDK feature (retries, streaming, error
mapping), above the sockets, so a replayed answer goes through exactly the SDK code a live one does.

google-genai sends its *async* requests with aiohttp when aiohttp is installed; for as long as a
cassette is in use, the recorder tells it aiohttp is absent (``google.genai._api_client.has_aiohttp``),
so its async requests go through its httpx-family client too.

What happens to a request depends on the :data:`RecordMode`:

``none``
    Replay only: the answer comes from the cassette (which must exist); a request it has no recording
    for fails as a connection error naming the request, and is listed in :attr:`Cassette.misses`.
    No socket is ever opened.
``once``
    ``none`` when the cassette file exists; otherwise every request goes to the network and is
    recorded, and the file is written at the end.
``new_episodes``
    Replay what the cassette has; requests it has not are sent and added to it.
``all``
    Send every request and record it, replacing the file.

A recorded response is read whole, then handed to the SDK as a stream again; an SSE body is replayed
one event per chunk, so a streaming consumer sees the events arrive one by one, as from the server.
"""

from __future__ import annotations

import contextlib
import importlib
import re
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any, Literal, TypeAlias

from kanawa.testing.cassette import DEFAULT_MATCH_ON, Cassette, CassetteError, Exchange, MatchPart
from kanawa.testing.scrub import DROPPED_RESPONSE_HEADERS, scrub_body, scrub_headers, scrub_uri

RecordMode: TypeAlias = Literal["none", "once", "new_episodes", "all"]
RECORD_MODES: tuple[RecordMode, ...] = ("none", "once", "new_episodes", "all")

_HTTP_LIBRARIES = ("httpx2", "httpx")
_SSE_EVENT = re.compile(rb".*?(?:\r\n\r\n|\n\n|\r\r)", re.DOTALL)
_ACTIVE = threading.Lock()


def _installed(name: str) -> ModuleType | None:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


class _Session:
    """One cassette in use: decides per request between the cassette and the network."""

    def __init__(self, cassette: Cassette, *, record: bool, replay: bool) -> None:
        self.cassette = cassette
        self.record = record
        self.replay = replay
        self.recorded = False

    def recorded_answer(self, method: str, uri: str, body: bytes) -> Exchange | None:
        if not self.replay:
            return None
        return self.cassette.take(method, scrub_uri(uri), scrub_body(body))

    def miss(self, method: str, uri: str) -> str:
        line = f"{method} {scrub_uri(uri)}"
        self.cassette.misses.append(line)
        return (
            f"cassette {self.cassette.path} has no recorded response for {line}; "
            "record it with --kanawa-record=once (new file) or --kanawa-record=new_episodes"
        )

    def keep(
        self, method: str, uri: str, request_headers: Any, request_body: bytes, response: Any
    ) -> Exchange:
        exchange = Exchange(
            method=method,
            uri=scrub_uri(uri),
            request_headers=scrub_headers(request_headers.multi_items()),
            request_body=scrub_body(request_body),
            status=int(response.status_code),
            reason=str(response.reason_phrase or ""),
            response_headers=scrub_headers(response.headers.multi_items(), drop=DROPPED_RESPONSE_HEADERS),
            response_body=scrub_body(response.content),
        )
        self.cassette.record(exchange)
        self.recorded = True
        return exchange


def _chunks(exchange: Exchange) -> list[bytes]:
    """The body as the server sent it: one SSE event per chunk for an event stream, else whole."""
    body = exchange.response_body
    content_type = ",".join(exchange.response_headers.get("content-type", []))
    if "text/event-stream" not in content_type:
        return [body] if body else []
    events = [m.group(0) for m in _SSE_EVENT.finditer(body)]
    rest = body[sum(len(e) for e in events) :]
    return [*events, rest] if rest else events


def _replayed(library: ModuleType, exchange: Exchange, request: Any) -> Any:
    """A ``library.Response`` for ``request`` that streams the recorded body."""
    chunks = _chunks(exchange)

    class _ReplayStream(library.SyncByteStream, library.AsyncByteStream):  # type: ignore[misc,name-defined]
        def __iter__(self) -> Iterator[bytes]:
            yield from chunks

        async def __aiter__(self) -> AsyncIterator[bytes]:
            for chunk in chunks:
                yield chunk

    headers = [(name, value) for name, values in exchange.response_headers.items() for value in values]
    return library.Response(
        exchange.status,
        headers=headers,
        stream=_ReplayStream(),
        request=request,
        extensions={
            "http_version": b"HTTP/1.1",
            "reason_phrase": exchange.reason.encode("latin-1", "replace"),
        },
    )


def _patch_library(library: ModuleType, session: _Session) -> Callable[[], None]:
    """Route ``library``'s default transports through ``session``; returns the undo."""
    sync_transport, async_transport = library.HTTPTransport, library.AsyncHTTPTransport
    send_sync = sync_transport.handle_request
    send_async = async_transport.handle_async_request

    def handle_request(transport: Any, request: Any) -> Any:
        body = request.read()
        method, uri = request.method, str(request.url)
        found = session.recorded_answer(method, uri, body)
        if found is not None:
            return _replayed(library, found, request)
        if not session.record:
            raise library.ConnectError(session.miss(method, uri), request=request)
        response = send_sync(transport, request)
        try:
            response.read()
        finally:
            response.close()
        return _replayed(library, session.keep(method, uri, request.headers, body, response), request)

    async def handle_async_request(transport: Any, request: Any) -> Any:
        body = await request.aread()
        method, uri = request.method, str(request.url)
        found = session.recorded_answer(method, uri, body)
        if found is not None:
            return _replayed(library, found, request)
        if not session.record:
            raise library.ConnectError(session.miss(method, uri), request=request)
        response = await send_async(transport, request)
        try:
            await response.aread()
        finally:
            await response.aclose()
        return _replayed(library, session.keep(method, uri, request.headers, body, response), request)

    sync_transport.handle_request = handle_request
    async_transport.handle_async_request = handle_async_request

    def undo() -> None:
        sync_transport.handle_request = send_sync
        async_transport.handle_async_request = send_async

    return undo


def _genai_without_aiohttp() -> Callable[[], None]:
    """Make google-genai send async requests through its httpx-family client (see module docstring)."""
    module = _installed("google.genai._api_client") if _installed("google.genai") is not None else None
    if module is None or not hasattr(module, "has_aiohttp"):
        return lambda: None
    before = getattr(module, "has_aiohttp")  # noqa: B009 - a private flag, checked just above
    setattr(module, "has_aiohttp", False)  # noqa: B010

    def undo() -> None:
        setattr(module, "has_aiohttp", before)  # noqa: B010

    return undo


@contextlib.contextmanager
def use_cassette(
    path: str | Path, *, record: RecordMode = "none", match_on: Sequence[MatchPart] = DEFAULT_MATCH_ON
) -> Iterator[Cassette]:
    """Record the provider traffic inside the ``with`` block into ``path``, or replay it from there.

    ``record`` is the :data:`RecordMode` (module docstring). Raises :class:`CassetteError` when
    ``record="none"`` and the file does not exist, or when another cassette is already in use (the
    transports are patched process-wide, so one at a time). Requests that found no recording are
    listed in the yielded cassette's ``misses``.
    """
    if record not in RECORD_MODES:
        raise ValueError(f"record mode must be one of {', '.join(RECORD_MODES)}, not {record!r}")
    file = Path(path)
    exists = file.is_file()
    if record == "none" and not exists:
        raise CassetteError(f"no cassette at {file}: record it once with --kanawa-record=once")
    fresh = record == "all" or (record == "once" and not exists)
    cassette = Cassette(file, match_on=tuple(match_on)) if fresh else Cassette.load(file, match_on=match_on)
    session = _Session(cassette, record=fresh or record == "new_episodes", replay=not fresh)
    if not _ACTIVE.acquire(blocking=False):
        raise CassetteError("another cassette is already in use in this process")
    undo: list[Callable[[], None]] = []
    try:
        for name in _HTTP_LIBRARIES:
            library = _installed(name)
            if library is not None:
                undo.append(_patch_library(library, session))
        undo.append(_genai_without_aiohttp())
        yield cassette
    finally:
        for step in reversed(undo):
            step()
        _ACTIVE.release()
        if session.recorded or record == "all":
            cassette.save()


__all__ = ["RECORD_MODES", "RecordMode", "use_cassette"]
