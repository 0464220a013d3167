"""The compact in-memory chunk ring (kanawa.server.ring): frames, cap, terminal chunks."""

from __future__ import annotations

from kanawa.server.ring import ChunkRing, frame_text, sse_frame, sse_frames


def _ring(cap: int, seqs: range, terminal: set[int] | None = None) -> ChunkRing:
    ring = ChunkRing(cap)
    for seq in seqs:
        ring.add(seq, sse_frame(seq, f'{{"n":{seq},"t":"金"}}'), seq in (terminal or set()))
    return ring


def test_a_frame_is_an_sse_event_whose_id_is_the_seq() -> None:
    frame = sse_frame(42, '{"text":"金輪際"}')
    assert frame == 'id: 42\r\ndata: {"text":"金輪際"}\r\n\r\n'.encode()
    assert frame_text(frame, 42) == '{"text":"金輪際"}'
    assert sse_frames([(1, "{}"), (2, "[]")]) == sse_frame(1, "{}") + sse_frame(2, "[]")


def test_frames_after_a_seq_come_as_one_slice_up_to_the_first_terminal_chunk() -> None:
    ring = _ring(100, range(1, 11), terminal={5, 10})
    frames, last, ended = ring.frames_after(2)
    assert frames == b"".join(sse_frame(seq, f'{{"n":{seq},"t":"金"}}') for seq in (3, 4, 5))
    assert (last, ended) == (5, True)
    assert ring.frames_after(5)[1:] == (10, True)
    assert ring.frames_after(10) == (b"", 10, False)
    assert [seq for seq, _, _ in ring.entries_after(5)] == [6, 7, 8, 9, 10]
    assert ring.entries_after(7)[-1] == (10, '{"n":10,"t":"金"}', True)


def test_the_oldest_chunks_go_first_past_the_cap_and_what_is_kept_stays_exact() -> None:
    ring = _ring(8, range(1, 101), terminal={100})
    assert (len(ring), ring.first, ring.last) == (8, 93, 100)
    entries = ring.entries_after(92)
    assert [seq for seq, _, _ in entries] == list(range(93, 101))
    assert all(text == f'{{"n":{seq},"t":"金"}}' for seq, text, _ in entries)
    assert ring.frames_after(96)[0] == b"".join(sse_frame(s, f'{{"n":{s},"t":"金"}}') for s in range(97, 101))


def test_seqs_need_not_be_consecutive() -> None:
    ring = _ring(100, range(10, 60, 10))
    assert [seq for seq, _, _ in ring.entries_after(25)] == [30, 40, 50]
    assert ring.frames_after(50) == (b"", 50, False)


def test_reads_across_compressed_blocks_match_a_plain_list_whatever_the_cap() -> None:
    """Frames are compressed block by block and dropped past the cap; every read must still equal a
    plain list of what is kept (sizes vary so chunks straddle block boundaries)."""
    terminal = {150, 390, 600}
    texts = {s: f'{{"text":"{"金輪" * (s % 37)}{"x" * (s % 11)}","seq":{s}}}' for s in range(1, 601)}
    for cap in (7, 120, 1000):
        ring = ChunkRing(cap)
        kept: list[int] = []
        for seq in range(1, 601):
            ring.add(seq, sse_frame(seq, texts[seq]), seq in terminal)
            kept = [*kept, seq][-cap:]
            if seq % 97 == 0 or seq in terminal:
                for after in {kept[0] - 1, kept[len(kept) // 2], seq - 1, seq}:
                    wanted = [s for s in kept if s > after]
                    stop = next((i for i, s in enumerate(wanted) if s in terminal), None)
                    if stop is not None:
                        wanted = wanted[: stop + 1]
                    frames, last, ended = ring.frames_after(after)
                    assert frames == b"".join(sse_frame(s, texts[s]) for s in wanted)
                    assert last == (wanted[-1] if wanted else after)
                    assert ended == (stop is not None)
                    assert ring.entries_after(after) == [
                        (s, texts[s], s in terminal and s == wanted[-1]) for s in wanted
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
    ring.add(1, sse_frame(1, '{"n":1}'), False)
    ring.add(2, sse_frame(2, answer), True)
    assert ring._blocks
    assert len(ring._blocks[-1][2]) < len(answer.encode())
    assert ring.frames_after(0)[0] == sse_frame(1, '{"n":1}') + sse_frame(2, answer)
    assert ring.entries_after(1) == [(2, answer, True)]
