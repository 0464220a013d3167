"""The run-store contract, for the in-memory ring and Redis Streams alike (kanawa.server.store)."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import os
import time
import uuid
from collections.abc import AsyncIterator, Sequence

import pytest
from redis.asyncio import Redis
from redis.exceptions import NoScriptError

from kanawa.server.http.resume import resume_point
from kanawa.server.store.base import RECORD_BYTES, ChunksExpired, Entry, RunExists, RunRecord, RunStore
from kanawa.server.store.memory import MemoryRunStore
from kanawa.server.store.redis.store import RedisRunStore
from tests.server.conftest import run_store


@pytest.fixture(params=["memory", "redis"])
async def store(request: pytest.FixtureRequest) -> AsyncIterator[RunStore]:
    async with run_store(request, request.param, cap=32) as made:
        yield made


def _record(run_id: str, tenant: str = "alpha") -> RunRecord:
    now = time.time()
    return RunRecord(run_id, tenant, "echo", "running", now, now)


async def _collect(store: RunStore, run_id: str, after: int) -> list[int]:
    return [entry.seq async for entry in store.read(run_id, after=after)]


async def test_readers_get_every_entry_after_their_seq_then_stop_at_the_terminal_one(store: RunStore) -> None:
    await store.create(_record("r1"))
    reader = asyncio.create_task(_collect(store, "r1", 0))
    late = asyncio.create_task(_collect(store, "r1", 3))
    for seq in range(1, 11):
        await store.append("r1", Entry(seq, f'{{"n":{seq}}}', seq == 10))
        await asyncio.sleep(0)
    assert await reader == list(range(1, 11))
    assert await late == list(range(4, 11))
    assert await _collect(store, "r1", 7) == [8, 9, 10]


async def test_seq_must_increase(store: RunStore) -> None:
    """A refused seq reaches the writer by its terminal chunk at the latest (Redis answers a chunk's
    ``XADD`` while the run goes on), and the refused chunk never reaches a reader."""
    await store.create(_record("r2"))
    await store.append("r2", Entry(1, '{"n":1}', False))

    async def the_rest() -> None:
        await store.append("r2", Entry(1, '{"n":"again"}', False))
        await store.append("r2", Entry(2, '{"n":2}', True))

    with pytest.raises(ValueError, match="seq 1"):
        await the_rest()
    stored = [entry.text for entry in await anext(store.read_batches("r2", after=0))]
    assert stored[0] == '{"n":1}'
    assert '{"n":"again"}' not in stored


async def test_runs_belong_to_their_tenant(store: RunStore) -> None:
    await store.create(_record("r3", "alpha"))
    assert await store.get("alpha", "r3") is not None
    assert await store.get("beta", "r3") is None
    assert [r.run_id for r in await store.list("alpha", limit=10)] == ["r3"]
    assert await store.list("beta", limit=10) == []


async def test_status_cancel_and_checkpoint(store: RunStore) -> None:
    await store.create(_record("r4"))
    assert await store.append("r4", Entry(1, "{}", False)) is False
    assert await store.cancel_requested("r4") is False
    await store.request_cancel("r4")
    assert await store.cancel_requested("r4") is True
    await asyncio.sleep(0.25)  # a Redis writer reads the flag every 0.2 s, with a chunk
    told = [await store.append("r4", Entry(2, "{}", False))]
    await store.save_checkpoint("r4", "{}")  # a write waited for: chunk 2's reply is in by then
    told.append(await store.append("r4", Entry(3, "{}", False)))
    assert told[-1] is True  # Redis: the flag read with chunk 2 comes back with its reply
    await store.set_status("r4", "cancelled", reason="cancelled")
    record = await store.get("alpha", "r4")
    assert record is not None
    assert (record.status, record.termination_reason, record.last_seq) == ("cancelled", "cancelled", 3)
    await store.save_checkpoint("r4", '{"x":1}')
    assert await store.load_checkpoint("r4") == '{"x":1}'


async def test_notes_are_kept_with_the_record_and_never_without_it(store: RunStore) -> None:
    """What a protocol keeps of a request (an OpenAI response's metadata) lives with the run's record."""
    run_id = uuid.uuid4().hex
    await store.save_note(run_id, "n", "ghost")  # no such run: nothing is kept
    assert await store.load_note(run_id, "n") is None
    await store.create(_record(run_id))
    await store.save_note(run_id, "openai.response.0", '{"metadata": {"k": "v"}}')
    await store.save_note(run_id, "openai.response.7", '{"store": false}')
    assert await store.load_note(run_id, "openai.response.0") == '{"metadata": {"k": "v"}}'
    assert await store.load_note(run_id, "openai.response.7") == '{"store": false}'
    assert await store.load_note(run_id, "other") is None
    record = await store.get("alpha", run_id)
    assert record is not None
    assert (record.agent, record.status) == ("echo", "running")  # the record reads as it did
    assert await store.load_note("0" * 32, "openai.response.0") is None


async def test_a_capped_buffer_reports_dropped_chunks_instead_of_a_gap(store: RunStore) -> None:
    await store.create(_record("r5"))
    for seq in range(1, 101):
        await store.append("r5", Entry(seq, "{}", seq == 100))
    with pytest.raises(ChunksExpired):
        await _collect(store, "r5", 0)
    assert await _collect(store, "r5", 95) == [96, 97, 98, 99, 100]


async def test_memory_runs_expire_after_their_ttl() -> None:
    store = MemoryRunStore(ttl=0.05, cap=16)
    await store.create(_record("old"))
    await asyncio.sleep(0.06)
    store._swept = 0.0  # sweep on the next lookup
    await store.create(_record("new"))
    assert await store.get("alpha", "old") is None
    assert await store.get("alpha", "new") is not None


async def test_redis_keys_carry_a_ttl_refreshed_deliberately(redis_url: str) -> None:
    prefix = f"kanawa-test-{uuid.uuid4().hex[:8]}:"
    store = RedisRunStore(redis_url, ttl=30, cap=100, prefix=prefix)
    probe = Redis.from_url(redis_url)
    try:
        await store.create(_record("r6"))
        await store.append("r6", Entry(1, "{}", False))
        await store.save_checkpoint("r6", "{}")  # waited for: every earlier write is in too
        assert await probe.pttl(f"{prefix}run:r6:chunks") > 20_000  # the first chunk sets it
        await probe.pexpire(f"{prefix}run:r6:chunks", 3000)
        await probe.pexpire(f"{prefix}run:r6", 3000)
        await asyncio.sleep(1.05)  # XADD alone would leave the TTL running down; the writer refreshes it
        await store.append("r6", Entry(2, "{}", False))
        await store.save_checkpoint("r6", "{}")
        assert await probe.pttl(f"{prefix}run:r6:chunks") > 20_000
        assert await probe.pttl(f"{prefix}run:r6") > 20_000
        await probe.pexpire(f"{prefix}run:r6:chunks", 3000)
        await store.append("r6", Entry(3, "{}", True))  # and always with the last chunk
        assert await probe.pttl(f"{prefix}run:r6:chunks") > 20_000
        ids = [entry_id for entry_id, _ in await probe.xrange(f"{prefix}run:r6:chunks")]
        assert ids == [b"1-0", b"2-0", b"3-0"]  # the stream's own ids are the seqs
        record = await store.get("alpha", "r6")
        assert record is not None
        assert record.last_seq == 3
        await store.save_note("r6", "n", "kept")  # a field of the record's hash: the same TTL
        assert await probe.hget(f"{prefix}run:r6", "note:n") == b"kept"
        await store.save_note("gone", "n", "ghost")  # never a hash without its TTL
        assert await probe.exists(f"{prefix}run:gone") == 0
    finally:
        await probe.aclose()
        await store.aclose()


async def test_redis_fans_out_from_one_connection_whatever_the_number_of_readers(redis_url: str) -> None:
    """Readers on one worker, the run written by another: one XREAD connection serves all 150."""
    prefix = f"kanawa-test-{uuid.uuid4().hex[:8]}:"
    name = f"kanawa-test-reader-{uuid.uuid4().hex[:8]}"  # tells the reader's connections from any other
    writer = RedisRunStore(redis_url, ttl=30, cap=1000, prefix=prefix)
    reader = RedisRunStore(f"{redis_url}?client_name={name}", ttl=30, cap=1000, prefix=prefix)
    probe = Redis.from_url(redis_url)

    async def blocked_reads() -> int:
        clients = await probe.client_list()
        return sum(1 for c in clients if c.get("name") == name and c.get("cmd") == "xread")

    readers: list[asyncio.Task[list[int]]] = []
    try:
        await writer.create(_record("r7"))
        await writer.append("r7", Entry(1, "{}", False))
        readers = [asyncio.create_task(_collect(reader, "r7", 0)) for _ in range(150)]
        counts = []
        for _ in range(500):  # until the reader blocks (a loaded machine may take a while), at most 10 s
            counts.append(await blocked_reads())
            if counts[-1]:
                break
            await asyncio.sleep(0.02)
        for _ in range(10):  # and while all 150 wait, it stays one connection
            await asyncio.sleep(0.02)
            counts.append(await blocked_reads())
        assert max(counts) == 1
        assert counts[-1] == 1
        for seq in range(2, 6):
            await writer.append("r7", Entry(seq, "{}", seq == 5))
        results = await asyncio.gather(*readers)
        assert all(r == [1, 2, 3, 4, 5] for r in results)
    finally:
        for task in readers:
            task.cancel()
        await asyncio.gather(*readers, return_exceptions=True)
        await probe.aclose()
        await reader.aclose()
        await writer.aclose()


async def test_redis_readers_of_a_run_written_here_need_no_redis_reader(redis_url: str) -> None:
    prefix = f"kanawa-test-{uuid.uuid4().hex[:8]}:"
    store = RedisRunStore(redis_url, ttl=30, cap=1000, prefix=prefix)
    try:
        await store.create(_record("r8"))
        await store.append("r8", Entry(1, "{}", False))
        readers = [asyncio.create_task(_collect(store, "r8", 0)) for _ in range(20)]
        await asyncio.sleep(0.05)
        for seq in range(2, 6):
            await store.append("r8", Entry(seq, "{}", seq == 5))
        results = await asyncio.gather(*readers)
        assert all(r == [1, 2, 3, 4, 5] for r in results)
        assert store.hub._task is None  # the writer fed them; no XREAD connection was opened
    finally:
        await store.aclose()


async def test_chunk_text_is_kept_exactly_whatever_its_characters(store: RunStore) -> None:
    """The Redis writer packs its commands by hand: multi-byte text and separators must survive."""
    texts = ['{"text":"金輪際、漏らさない"}', '{"text":"a\\r\\n$5\\r\\nb"}', '{"text":"🙂 ok"}']
    await store.create(_record("r9"), writes_here=True)
    reader = asyncio.create_task(_collect_texts(store, "r9", 0))
    for seq, text in enumerate(texts, start=1):
        await store.append("r9", Entry(seq, text, seq == len(texts)))
    assert await reader == texts
    assert await _collect_texts(store, "r9", 1) == texts[1:]


async def _collect_texts(store: RunStore, run_id: str, after: int) -> list[str]:
    return [entry.text async for entry in store.read(run_id, after=after)]


async def test_batches_hold_what_arrived_together_and_end_at_the_terminal_entry(store: RunStore) -> None:
    await store.create(_record("r10"), writes_here=True)
    for seq in range(1, 6):
        await store.append("r10", Entry(seq, "{}", seq == 5))
    batches = [[entry.seq for entry in batch] async for batch in store.read_batches("r10", after=2)]
    assert batches == [[3, 4, 5]]


async def test_a_redis_reader_of_a_stream_whose_writer_vanished_stops_after_the_ttl(redis_url: str) -> None:
    """No terminal chunk will ever come: the hub's watchdog ends the wait instead of leaving the reader
    (and its SSE connection) hanging."""
    prefix = f"kanawa-test-{uuid.uuid4().hex[:8]}:"
    writer = RedisRunStore(redis_url, ttl=30, cap=100, prefix=prefix)
    reader = RedisRunStore(redis_url, ttl=0.3, cap=100, prefix=prefix)
    try:
        await writer.create(_record("r11"))
        await writer.append("r11", Entry(1, "{}", False))
        await writer.append("r11", Entry(2, "{}", False))
        assert await asyncio.wait_for(_collect(reader, "r11", 0), timeout=20) == [1, 2]
    finally:
        await reader.aclose()
        await writer.aclose()


async def test_batches_carry_each_chunk_text_as_it_was_stored(store: RunStore) -> None:
    await store.create(_record("r12"), writes_here=True)
    for seq in range(1, 5):
        await store.append("r12", Entry(seq, f'{{"n":"{seq}金"}}', seq == 4))
    read = [entry async for batch in store.read_batches("r12", after=1) for entry in batch]
    assert read == [Entry(s, f'{{"n":"{s}金"}}', s == 4) for s in (2, 3, 4)]


class Recorder:
    """The smallest :class:`~kanawa.server.store.base.Subscriber`: it keeps what it is offered (no
    HTTP, no framing: the store feeds whatever meets the protocol)."""

    def __init__(self, *, refuse_from: int | None = None) -> None:
        self.attached = False
        self.cursor = 0
        self.taken: list[Entry] = []
        self.refuse_from = refuse_from
        self._woken = asyncio.Event()

    @property
    def finished(self) -> bool:
        return bool(self.taken) and self.taken[-1].terminal

    def attach(self, cursor: int) -> None:
        self.cursor, self.attached = cursor, True
        self._woken.clear()

    async def wait(self) -> None:
        await self._woken.wait()

    def offer(self, entries: Sequence[Entry]) -> bool:
        if not self.attached or entries[0].seq != self.cursor + 1:
            self.detach()
            return False
        if self.refuse_from is not None and entries[-1].seq >= self.refuse_from:
            self.refuse_from = None
            self.detach()
            return False
        self.taken.extend(entries)
        self.cursor = entries[-1].seq
        if entries[-1].terminal:
            self.detach()
        return True

    def detach(self) -> None:
        self.attached = False
        self._woken.set()


async def test_a_subscriber_at_the_head_is_offered_new_batches_and_the_reader_takes_over_when_it_steps_aside(
    store: RunStore,
) -> None:
    await store.create(_record("r13"), writes_here=True)
    subscriber = Recorder(refuse_from=4)
    read: list[Entry] = []

    async def follow() -> None:
        async for batch in store.read_batches("r13", after=0, subscriber=subscriber):
            read.extend(batch)

    reader = asyncio.create_task(follow())
    for _ in range(500):
        if subscriber.attached:
            break
        await asyncio.sleep(0.01)
    await store.append_many("r13", [Entry(1, "{}", False), Entry(2, "{}", False)])
    await store.append("r13", Entry(3, "{}", False))
    await store.append("r13", Entry(4, "{}", False))  # refused: the reader reads it itself
    await store.append("r13", Entry(5, "{}", True))
    await asyncio.wait_for(reader, 20)
    seqs = [entry.seq for entry in subscriber.taken] + [entry.seq for entry in read]
    assert sorted(seqs) == [1, 2, 3, 4, 5]  # each once: no gap, no duplicate
    assert subscriber.taken[0].seq == 1  # offered by the writer, the reader never woke for it
    assert 4 in [entry.seq for entry in read]


def test_redis_commands_packed_by_hand_are_the_protocols_own_encoding() -> None:
    """The chunk and upkeep commands the Redis store formats in one step are byte for byte what
    redis-py's own packer sends for the same arguments (multi-byte text included)."""
    from redis.connection import Connection

    from kanawa.server.store.redis.commit import _Upkeep
    from kanawa.server.store.redis.scripts import _REFRESH_SCRIPT, _pack, _pack_xadd, _Scripts

    def library(*args: bytes) -> bytes:
        return b"".join(Connection().pack_command(*args))

    text = '{"text":"継手は釘を使わない 𠮷"}'.encode()
    assert _pack_xadd(b"k:run:1:chunks", b"500", 42, text, True) == library(
        b"XADD", b"k:run:1:chunks", b"MAXLEN", b"=", b"500", b"42-0", b"d", text, b"t", b"1"
    )
    assert _pack(b"HGET", b"k:run:1", b"cancel") == library(b"HGET", b"k:run:1", b"cancel")
    upkeep = _Upkeep("1", "k:run:1:chunks", b"k:run:1")
    assert upkeep.read_cancel == library(b"HGET", b"k:run:1", b"cancel")
    upkeep.added_bytes, upkeep.added_chunks = 300, 4
    scripts = _Scripts("k:", 1024, 4096, b"60000")
    args = upkeep.refresh_args(7, True)
    assert (upkeep.added_bytes, upkeep.added_chunks) == (0, 0)  # handed over to this upkeep
    common = (b"k:", b"1024", b"4096", b"60000")
    assert args[:2] == (b"1", b"7")
    assert args[3:] == (b"300", b"4", b"1")
    assert scripts.command(_REFRESH_SCRIPT, *args) == library(b"EVAL", _REFRESH_SCRIPT, b"0", *common, *args)
    scripts.answered(_REFRESH_SCRIPT, 1)  # Redis ran it: it keeps it, the hash is enough from now on
    sha = hashlib.sha1(_REFRESH_SCRIPT).hexdigest().encode()
    assert scripts.command(_REFRESH_SCRIPT, *args) == library(b"EVALSHA", sha, b"0", *common, *args)
    assert scripts.answered(_REFRESH_SCRIPT, NoScriptError("NOSCRIPT No matching script.")) is False
    assert scripts.command(_REFRESH_SCRIPT, *args).startswith(b"*13\r\n$4\r\nEVAL\r\n")


async def test_an_exclusive_create_of_a_taken_id_fails_and_keeps_the_first_record(store: RunStore) -> None:
    created = await asyncio.gather(
        *(store.create(_record("derived", tenant=f"t{n}"), exclusive=True) for n in range(5)),
        return_exceptions=True,
    )
    assert sum(outcome is None for outcome in created) == 1
    assert all(isinstance(outcome, RunExists) for outcome in created if outcome is not None)
    winner = created.index(None)
    assert await store.get(f"t{winner}", "derived") is not None
    others = [await store.get(f"t{n}", "derived") for n in range(5) if n != winner]
    assert others == [None] * 4
    await store.create(_record("random"))  # a drawn id is not claimed: nothing changes for it
    await store.create(_record("random"))


async def test_a_status_claim_succeeds_once(store: RunStore) -> None:
    await store.create(_record("r9"))
    await store.set_status("r9", "awaiting_approval", reason="approval_required")
    claims = await asyncio.gather(
        *(store.claim_status("r9", "awaiting_approval", "running") for _ in range(8))
    )
    assert sorted(claims) == [False] * 7 + [True]
    record = await store.get("alpha", "r9")
    assert record is not None
    assert (record.status, record.termination_reason) == ("running", None)
    assert await store.claim_status("missing", "awaiting_approval", "running") is False


async def test_a_resume_racing_a_writer_elsewhere_is_not_taken_for_expired_chunks(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reader resuming at the last chunk of a run another process writes: when the writer adds the
    next chunk between the reader's range read (empty) and its record read (which then counts the
    new chunk), the reader goes on with that chunk — it is not told the chunks expired."""
    prefix = f"kanawa-test-{uuid.uuid4().hex[:8]}:"
    writer = RedisRunStore(redis_url, ttl=60, cap=100, prefix=prefix)
    reader = RedisRunStore(redis_url, ttl=60, cap=100, prefix=prefix)
    try:
        await writer.create(_record("race"), writes_here=True)
        for seq in (1, 2, 3):
            await writer.append("race", Entry(seq, f'{{"n":{seq}}}', False))
        await writer.save_checkpoint("race", "{}")  # waited for: chunks 1-3 are stored
        real_record = reader._kept

        async def record_after_the_writer_moved_on(run_id: str) -> tuple[RunRecord | None, bool]:
            await writer.append("race", Entry(4, '{"n":4}', False))
            await writer.save_checkpoint("race", "{}")
            return await real_record(run_id)

        monkeypatch.setattr(reader, "_kept", record_after_the_writer_moved_on)
        first = await anext(reader.read_batches("race", after=3))
        assert [entry.seq for entry in first] == [4]
    finally:
        await writer.aclose()
        await reader.aclose()


# -- the memory budget: the same contract for both stores ------------------------------------------

BUDGET = 16 * 1024
"""A tenant's budget in these tests: a few of the runs below (each ~4 KB of chunk text that does not
compress, so the memory store's compressed ring and Redis's plain stream count it alike)."""


def _noise(size: int = 4000) -> str:
    return base64.b64encode(os.urandom(size * 3 // 4)).decode()


async def _finished(store: RunStore, run_id: str, tenant: str = "alpha", *, size: int = 4000) -> None:
    """A run that wrote ``size`` bytes of chunk text and completed (the status set before its
    terminal chunk, as the run manager does)."""
    await store.create(_record(run_id, tenant))
    await store.append(run_id, Entry(1, _noise(size), False))
    await store.set_status(run_id, "completed")
    await store.append(run_id, Entry(2, '{"type":"done"}', True))


@pytest.fixture(params=["memory", "redis"])
async def budgeted(request: pytest.FixtureRequest) -> AsyncIterator[RunStore]:
    async with run_store(request, request.param, cap=32, tenant_bytes=BUDGET, total_bytes=3 * BUDGET) as made:
        yield made


async def test_a_flood_of_finished_runs_evicts_the_oldest_first_and_stays_within_the_budget(
    budgeted: RunStore,
) -> None:
    store = budgeted
    for index in range(12):
        await _finished(store, f"f{index}")
        assert 0 < await store.used_bytes("alpha") <= BUDGET
    assert await _collect(store, "f11", 0) == [1, 2]  # the newest keeps its chunks
    with pytest.raises(ChunksExpired):
        await _collect(store, "f0", 0)
    kept = []
    for index in range(12):
        try:
            kept.append(bool(await _collect(store, f"f{index}", 0)))
        except ChunksExpired:
            kept.append(False)
    assert kept == sorted(kept)  # evicted: a prefix of the oldest, never one newer than a kept one
    assert 1 < kept.count(True) < 12
    record = await store.get("alpha", "f0")  # the record stays: the run is known, its chunks gone
    assert record is not None
    assert (record.status, record.last_seq) == ("completed", 2)
    assert await resume_point(store, record, 0) == "stream"  # streams the chunks_expired error
    assert await resume_point(store, record, 2) == "ended"  # nothing was missed: 204


async def test_running_runs_are_never_evicted_and_a_tenants_budget_is_its_own(budgeted: RunStore) -> None:
    store = budgeted
    await _finished(store, "theirs", "beta")
    theirs = await store.used_bytes("beta")
    await store.create(_record("live"))
    big = [Entry(seq, _noise(), False) for seq in range(1, 7)]  # ~24 KB: over the budget alone
    await store.append_many("live", big)
    await store.save_checkpoint("live", '{"step":1}')
    for index in range(6):
        await _finished(store, f"f{index}")
    assert await store.used_bytes("alpha") > BUDGET  # the running run is beyond reach ...
    for index in range(6):  # ... so every finished run of the tenant went, its record too
        assert await store.get("alpha", f"f{index}") is None
    assert [entry.text for entry in await anext(store.read_batches("live", after=0))] == [
        entry.text for entry in big
    ]
    assert await store.load_checkpoint("live") == '{"step":1}'
    assert await _collect(store, "theirs", 0) == [1, 2]  # another tenant's runs are untouched
    assert await store.used_bytes("beta") == theirs
    await store.append("live", Entry(7, '{"type":"done"}', True))


async def test_the_total_budget_evicts_the_oldest_finished_runs_of_anyone(
    request: pytest.FixtureRequest,
) -> None:
    for kind in ("memory", "redis"):
        async with run_store(request, kind, cap=32, total_bytes=BUDGET) as store:
            await _finished(store, "beta-old", "beta")
            for index in range(8):
                await _finished(store, f"f{index}")
                assert await store.used_bytes() <= BUDGET
            with pytest.raises(ChunksExpired):
                await _collect(store, "beta-old", 0)
            assert await _collect(store, "f7", 0) == [1, 2]


async def test_records_go_too_when_dropping_chunks_is_not_enough(request: pytest.FixtureRequest) -> None:
    """A budget smaller than the records of the runs kept: the oldest finished runs go entirely (a
    404 like a run past its TTL), the newest stay."""
    for kind in ("memory", "redis"):
        async with run_store(request, kind, cap=32, tenant_bytes=4 * RECORD_BYTES) as store:
            for index in range(10):
                await _finished(store, f"f{index}", size=40)
                assert await store.used_bytes("alpha") <= 4 * RECORD_BYTES
            assert await store.get("alpha", "f0") is None
            assert await store.get("alpha", "f9") is not None
            assert [record.run_id for record in await store.list("alpha", limit=20)][:2] == ["f9", "f8"]


async def test_redis_counts_stay_exact_with_two_processes_writing_and_match_redis_memory(
    redis_url: str,
) -> None:
    """Two stores on one Redis (two server processes) flood one tenant concurrently: the counters are
    the sum of what each kept run is counted for (the scripts are atomic), within the budget once the
    runs have ended, and Redis's own ``MEMORY USAGE`` of everything kept stays near the budget."""
    prefix = f"kanawa-test-{uuid.uuid4().hex[:8]}:"
    stores = [RedisRunStore(redis_url, ttl=60, cap=32, prefix=prefix, tenant_bytes=BUDGET) for _ in range(2)]
    probe = Redis.from_url(redis_url)
    try:

        async def flood(store: RedisRunStore, name: str) -> None:
            for index in range(15):
                await _finished(store, f"{name}{index}")

        await asyncio.gather(*(flood(store, name) for store, name in zip(stores, "ab", strict=True)))
        held = await probe.hgetall(f"{prefix}mem:runs")
        sizes = [int(value.split(b" ")[0]) for value in held.values()]
        assert await stores[0].used_bytes("alpha") == sum(sizes) == await stores[1].used_bytes()
        assert sum(sizes) <= BUDGET
        keys = [key async for key in probe.scan_iter(match=f"{prefix}run:*")]
        used = 0
        for key in keys:
            used += await probe.memory_usage(key, samples=0) or 0
        assert 0 < used <= 2 * BUDGET  # 30 runs of ~4 KB written: ~120 KB without the budget
    finally:
        await probe.aclose()
        for store in stores:
            await store.aclose()


async def test_redis_stops_counting_runs_whose_keys_expired(redis_url: str) -> None:
    """Redis drops an expired run's keys without telling anyone: the budget scripts forget runs past
    their TTL (a writer that vanished mid-run included) before they enforce."""
    prefix = f"kanawa-test-{uuid.uuid4().hex[:8]}:"
    store = RedisRunStore(redis_url, ttl=0.3, cap=32, prefix=prefix, tenant_bytes=BUDGET)
    try:
        await store.create(_record("vanished"))
        await store.append("vanished", Entry(1, _noise(), False))  # never ends
        await _finished(store, "old")
        assert await store.used_bytes("alpha") > 8000
        await asyncio.sleep(0.4)
        await store.create(_record("new"))
        assert await store.used_bytes("alpha") == RECORD_BYTES
        assert await store.used_bytes() == RECORD_BYTES
    finally:
        await store.aclose()
