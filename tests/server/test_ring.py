"""The compact in-memory chunk ring (kanawa.server.store.ring): texts, cap, terminal chunks."""

from __future__ import annotations

from kanawa.server.store.base import Entry
from kanawa.server.store.ring import ChunkRing


def _text(seq: int) -> str:
    return f'{{"n":{seq},"t":"金"}}'


def _ring(cap: int, seqs: range, terminal: set[int] | None = None) -> ChunkRing:
    ring = ChunkRing(cap)
    for seq in seqs:
        ring.add(seq, _text(seq).encode(), seq in (terminal or set()))
    return ring


def _seqs(entries: list[Entry]) -> list[int]:
    return [entry.seq for entry in entries]


def test_entries_after_a_seq_come_up_to_the_first_terminal_chunk() -> None:
    ring = _ring(100, range(1, 11), terminal={5, 10})
    assert ring.entries_after(2) == [
        Entry(3, _text(3), False),
        Entry(4, _text(4), False),
        Entry(5, _text(5), True),
    ]
    assert _seqs(ring.entries_after(5)) == [6, 7, 8, 9, 10]
    assert ring.entries_after(7)[-1] == Entry(10, _text(10), True)
    assert ring.entries_after(10) == []


def test_a_limit_cuts_a_backlog_into_pieces_of_whole_chunks_at_least_one() -> None:
    ring = _ring(100, range(1, 11), terminal={10})
    size = len(_text(1).encode())
    piece = ring.entries_after(0, 3 * size)
    assert _seqs(piece) == [1, 2, 3]
    assert not piece[-1].terminal  # cut before the terminal chunk: not the end
    assert _seqs(ring.entries_after(0, 1)) == [1]
    assert ring.entries_after(7, 1000)[-1] == Entry(10, _text(10), True)


def test_the_oldest_chunks_go_first_past_the_cap_and_what_is_kept_stays_exact() -> None:
    ring = _ring(8, range(1, 101), terminal={100})
    assert (len(ring), ring.first, ring.last) == (8, 93, 100)
    entries = ring.entries_after(92)
    assert _seqs(entries) == list(range(93, 101))
    assert all(entry.text == _text(entry.seq) for entry in entries)


def test_seqs_need_not_be_consecutive() -> None:
    ring = _ring(100, range(10, 60, 10))
    assert _seqs(ring.entries_after(25)) == [30, 40, 50]
    assert ring.entries_after(50) == []


def test_reads_across_compressed_blocks_match_a_plain_list_whatever_the_cap() -> None:
    """Texts are compressed block by block and dropped past the cap; every read must still equal a
    plain list of what is kept (sizes vary so chunks straddle block boundaries)."""
    terminal = {150, 390, 600}
    texts = {s: f'{{"text":"{"金輪" * (s % 37)}{"x" * (s % 11)}","seq":{s}}}' for s in range(1, 601)}
    for cap in (7, 120, 1000):
        ring = ChunkRing(cap)
        kept: list[int] = []
        for seq in range(1, 601):
            ring.add(seq, texts[seq].encode(), seq in terminal)
            kept = [*kept, seq][-cap:]
            if seq % 97 == 0 or seq in terminal:
                for after in {kept[0] - 1, kept[len(kept) // 2], seq - 1, seq}:
                    wanted = [s for s in kept if s > after]
                    stop = next((i for i, s in enumerate(wanted) if s in terminal), None)
                    if stop is not None:
                        wanted = wanted[: stop + 1]
                    assert ring.entries_after(after) == [
                        Entry(s, texts[s], s in terminal and s == wanted[-1]) for s in wanted
                    ]
        assert (ring.first, ring.last, len(ring)) == (kept[0], 600, len(kept))


def test_a_sealed_block_far_longer_than_the_compression_window_reads_back_exactly() -> None:
    """Blocks are deflated with a 4 KiB window: a final answer of 64 KiB whose repeats lie further
    apart than that must still come back byte for byte, and shrink."""
    import random

    rng = random.Random(7)
    paragraph = "".join(rng.choice("金輪際かなわabcdefgh ") for _ in range(6000))
    answer = paragraph * 4 + "".join(rng.choice("xyz") for _ in range(30_000))
    ring = ChunkRing(100)
    ring.add(1, b'{"n":1}', False)
    ring.add(2, answer.encode(), True)
    assert ring._blocks
    assert len(ring._blocks[-1][2]) < len(answer.encode())
    assert ring.entries_after(0) == [Entry(1, '{"n":1}', False), Entry(2, answer, True)]
    assert ring.entries_after(1) == [Entry(2, answer, True)]
