"""Direct sends (kanawa.server.http.direct): a reader at the head of a run's stream is sent each chunk from
the writer's side, and whenever that cannot go on in order the reader takes over — with no gap and no
duplicate. Both run stores; then a real client that stops reading, over uvicorn on loopback."""

from __future__ import annotations

import asyncio
import socket
import time
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest

from kanawa import Agent
from kanawa.llm.testing import FunctionLLM
from kanawa.server.http.app import create_app
from kanawa.server.http.direct import DirectSender
from kanawa.server.http.protocols.kanawa_sse import sse_frame, sse_frames
from kanawa.server.store.base import Entry, RunRecord, RunStore
from kanawa.server.store.memory import MemoryRunStore
from kanawa.server.store.redis.store import RedisRunStore
from tests.server.conftest import LiveServer, run_store, settings_for
from tests.server.sse import AUTH_A, KEY_A, parse_blocks


@pytest.fixture(params=["memory", "redis"])
async def store(request: pytest.FixtureRequest) -> AsyncIterator[RunStore]:
    async with run_store(request, request.param, cap=1000) as made:
        yield made


class Wire:
    """An ASGI ``send`` that records the body bytes it is given; ``hold(seq)`` makes the send of the
    frame of chunk ``seq`` wait until ``release()`` (a client whose socket is full)."""

    def __init__(self) -> None:
        self.sent: list[bytes] = []
        self.held_at: int | None = None
        self._gate = asyncio.Event()
        self.fail = False

    def hold(self, seq: int) -> None:
        self.held_at = seq

    def release(self) -> None:
        self._gate.set()

    async def __call__(self, message: dict[str, Any]) -> None:
        body = message["body"]
        if self.held_at is not None and body.startswith(b"id: %d\r\n" % self.held_at):
            await self._gate.wait()
        if self.fail:
            raise OSError("the client is gone")
        self.sent.append(body)


async def _new_run(store: RunStore, run_id: str) -> None:
    now = time.time()
    await store.create(RunRecord(run_id, "alpha", "echo", "running", now, now), writes_here=True)


async def _eventually(check: Callable[[], bool]) -> None:
    for _ in range(500):
        if check():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("condition never held")


def _seqs(frames: list[bytes]) -> list[int]:
    events, rest, _ = parse_blocks(b"".join(frames))
    assert rest == b""
    return [event.id for event in events if event.id is not None]


async def _read_all(store: RunStore, run_id: str, sender: DirectSender, into: list[bytes]) -> None:
    async for batch in store.read_batches(run_id, after=0, subscriber=sender):
        into.append(sse_frames(batch))


async def test_a_reader_at_the_head_is_sent_each_chunk_by_the_writer_and_never_wakes(store: RunStore) -> None:
    await _new_run(store, "d1")
    wire = Wire()
    sender = DirectSender(wire, encode=sse_frames)  # type: ignore[arg-type]
    yielded: list[bytes] = []
    reader = asyncio.create_task(_read_all(store, "d1", sender, yielded))
    await _eventually(lambda: sender.attached)
    for seq in range(1, 6):
        await store.append("d1", Entry(seq, f'{{"n":{seq}}}', False))
        if isinstance(store, MemoryRunStore):  # sent before the writer's append even returned
            assert wire.sent[-1] == sse_frame(seq, f'{{"n":{seq}}}')
    await store.append("d1", Entry(6, '{"end":true}', True))
    await reader
    assert _seqs(wire.sent) == [1, 2, 3, 4, 5, 6]
    assert yielded == []  # the reader only waited: it neither woke nor sent anything itself


async def test_a_send_that_must_wait_hands_the_rest_to_the_reader_in_order(store: RunStore) -> None:
    await _new_run(store, "d2")
    wire = Wire()
    wire.hold(3)
    sender = DirectSender(wire, encode=sse_frames)  # type: ignore[arg-type]
    yielded: list[bytes] = []
    reader = asyncio.create_task(_read_all(store, "d2", sender, yielded))
    await _eventually(lambda: sender.attached)
    for seq in range(1, 21):  # the writer goes on while chunk 3 waits for the socket
        await store.append("d2", Entry(seq, f'{{"n":{seq}}}', seq == 20))
        await asyncio.sleep(0)
    await _eventually(lambda: len(wire.sent) == 2)
    assert not sender.attached
    wire.release()
    await reader
    assert _seqs(wire.sent + yielded) == list(range(1, 21))  # each exactly once, in order
    assert yielded  # what came while chunk 3 waited went out from the reader


async def test_a_reader_that_joins_behind_the_writer_catches_up_then_goes_direct(store: RunStore) -> None:
    await _new_run(store, "d3")
    for seq in range(1, 8):
        await store.append("d3", Entry(seq, f'{{"n":{seq}}}', False))
    await store.save_checkpoint("d3", "{}")  # waited for: the chunks before it are stored
    wire = Wire()
    sender = DirectSender(wire, encode=sse_frames)  # type: ignore[arg-type]
    yielded: list[bytes] = []
    reader = asyncio.create_task(_read_all(store, "d3", sender, yielded))
    await _eventually(lambda: sender.attached)
    for seq in range(8, 13):
        await store.append("d3", Entry(seq, f'{{"n":{seq}}}', seq == 12))
    await reader
    assert _seqs(yielded) == list(range(1, 8))
    assert _seqs(wire.sent) == list(range(8, 13))


async def test_a_send_that_fails_ends_the_stream_and_the_run_goes_on(store: RunStore) -> None:
    await _new_run(store, "d4")
    wire = Wire()
    sender = DirectSender(wire, encode=sse_frames)  # type: ignore[arg-type]
    reader = asyncio.create_task(_read_all(store, "d4", sender, []))
    await _eventually(lambda: sender.attached)
    await store.append("d4", Entry(1, "{}", False))
    wire.fail = True
    await store.append("d4", Entry(2, "{}", False))
    await asyncio.wait_for(reader, 5)
    assert sender.failed
    await store.append("d4", Entry(3, "{}", True))  # the writer is not hurt by a client gone
    assert [entry.seq async for entry in store.read("d4", after=0)] == [1, 2, 3]


async def test_a_framing_that_fails_in_the_writer_leaves_the_batch_to_the_reader(store: RunStore) -> None:
    """A protocol's framing that raises in the writer's task does not fail the run: the sender steps
    aside untouched (its cursor where it was) and the reader sends the batch itself."""
    await _new_run(store, "d7")
    wire = Wire()
    failures = [ValueError("cannot frame this here")]

    def encode(entries: Any) -> bytes:
        if failures:
            raise failures.pop()
        return sse_frames(entries)

    sender = DirectSender(wire, encode=encode)  # type: ignore[arg-type]
    yielded: list[bytes] = []
    reader = asyncio.create_task(_read_all(store, "d7", sender, yielded))
    await _eventually(lambda: sender.attached)
    await store.append("d7", Entry(1, '{"n":1}', False))
    await store.append("d7", Entry(2, '{"n":2}', True))
    await asyncio.wait_for(reader, 5)
    assert _seqs(yielded)[0] == 1  # the batch the framing failed on, from the reader
    assert sorted(_seqs(wire.sent) + _seqs(yielded)) == [1, 2]  # each once
    assert [entry.seq async for entry in store.read("d7", after=0)] == [1, 2]


# ------------------------------------------------------------------ a real client that stops reading

BIG = "".join(f"{n:07d}-" for n in range(40_000))  # 320 kB: 40,000 text deltas of 8 characters


@pytest.fixture(params=["embedded", "redis"])
def slow_reader_server(request: pytest.FixtureRequest) -> Any:
    agent = Agent("big", "Say it all.", tools=(), model=FunctionLLM(lambda _: BIG))
    redis = request.getfixturevalue("redis_url") if request.param == "redis" else None
    server = LiveServer(
        create_app(agents={"big": agent}, settings=settings_for(request.param, redis, run_buffer=100_000))
    )
    server.start()
    try:
        yield server
    finally:
        server.stop()


def _dechunk(raw: bytes) -> bytes:
    """An HTTP/1.1 chunked body (uvicorn streams SSE that way)."""
    out = bytearray()
    at = 0
    while True:
        line_end = raw.index(b"\r\n", at)
        size = int(raw[at:line_end], 16)
        if size == 0:
            return bytes(out)
        out += raw[line_end + 2 : line_end + 2 + size]
        at = line_end + 2 + size + 2


async def test_a_client_that_stops_reading_gets_every_chunk_once_when_it_reads_again(
    slow_reader_server: LiveServer,
) -> None:
    """The client's receive buffer is tiny and it reads nothing until the run has ended, so the
    server's sends have to wait for the socket; then it reads the whole stream."""
    body = b'{"agent":"big","input":"go"}'
    request = (
        b"POST /v1/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Authorization: Bearer %b\r\nContent-Length: %d\r\n\r\n%b" % (KEY_A.encode(), len(body), body)
    )
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", slow_reader_server.port))
    try:
        sock.sendall(request)
        head = b""
        while b"\r\n\r\n" not in head:
            head += sock.recv(1)
        run_id = next(
            line.split(b":", 1)[1].strip().decode()
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"x-run-id:")
        )
        async with httpx.AsyncClient(base_url=slow_reader_server.url, headers=AUTH_A) as http:
            for _ in range(3000):
                status = (await http.get(f"/v1/runs/{run_id}")).json()["status"]
                if status != "running":
                    break
                await asyncio.sleep(0.01)
            assert status == "completed"
        raw = bytearray()
        sock.settimeout(30)
        while not raw.endswith(b"0\r\n\r\n"):
            piece = await asyncio.to_thread(sock.recv, 1 << 20)
            assert piece, "the server closed the stream early"
            raw += piece
    finally:
        sock.close()
    events, rest, _ = parse_blocks(_dechunk(bytes(raw)))
    assert rest == b""
    seqs = [event.id for event in events]
    assert seqs == list(range(1, len(seqs) + 1))  # no gap, no duplicate
    assert events[-1].chunk["type"] == "done"
    text = "".join(e.chunk["data"].get("text", "") for e in events if e.chunk["type"] == "delta")
    assert text == BIG


async def test_the_chunks_of_one_step_reach_a_reader_at_the_head_in_one_send(store: RunStore) -> None:
    await _new_run(store, "d5")
    wire = Wire()
    sender = DirectSender(wire, encode=sse_frames)  # type: ignore[arg-type]
    reader = asyncio.create_task(_read_all(store, "d5", sender, []))
    await _eventually(lambda: sender.attached)
    await store.append_many("d5", [Entry(seq, f'{{"n":{seq}}}', False) for seq in (1, 2, 3)])
    await _eventually(lambda: len(wire.sent) == 1)
    assert _seqs(wire.sent) == [1, 2, 3]  # one body, three events
    await store.append_many("d5", [Entry(4, "{}", False), Entry(5, "{}", True)])
    await reader
    assert [_seqs([body]) for body in wire.sent] == [[1, 2, 3], [4, 5]]


async def test_a_batch_with_a_seq_out_of_order_keeps_none_of_it() -> None:
    store = MemoryRunStore()
    await _new_run(store, "d6")
    await store.append("d6", Entry(1, "{}", False))
    with pytest.raises(ValueError, match="seq 2 is not above the last seq 2"):
        await store.append_many("d6", [Entry(2, "{}", False), Entry(2, "{}", False)])
    assert (await store.get_any("d6")).last_seq == 1  # type: ignore[union-attr]


async def test_the_watchdog_leaves_a_live_direct_stream_alone_and_ends_an_idle_one(redis_url: str) -> None:
    """A reader of a run written elsewhere, sent chunks directly by the hub: while chunks keep coming
    it is never given up, even for longer than the patience (the run TTL, 0.6 s here); once they stop
    without a terminal chunk (the writer vanished), it ends."""
    prefix = f"kanawa-test-{uuid.uuid4().hex[:8]}:"
    writer = RedisRunStore(redis_url, ttl=30, cap=1000, prefix=prefix)
    reader = RedisRunStore(redis_url, ttl=0.6, cap=1000, prefix=prefix)
    try:
        await writer.create(RunRecord("live", "alpha", "echo", "running", time.time(), time.time()))
        wire = Wire()
        sender = DirectSender(wire, encode=sse_frames)  # type: ignore[arg-type]
        yielded: list[bytes] = []
        reading = asyncio.create_task(_read_all(reader, "live", sender, yielded))
        for seq in range(1, 37):  # 1.8 s of chunks, 0.05 s apart: three times the patience
            await writer.append("live", Entry(seq, f'{{"n":{seq}}}', False))
            await asyncio.sleep(0.05)
        assert not reading.done(), "a stream that keeps getting chunks is not given up"
        await asyncio.wait_for(reading, timeout=20)  # the writer stops: the wait ends
        assert sorted(_seqs(yielded + wire.sent)) == list(range(1, 37))
        assert wire.sent, "the hub sent chunks directly"
    finally:
        await reader.aclose()
        await writer.aclose()
