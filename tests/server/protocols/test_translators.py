"""The protocols' translations of a run's chunks, without a server: the same chunks give the same
bytes (what resuming by sequence number relies on), a pre-encoded text delta is the JSON the event
written out gives, and a snapshot taken mid-message holds the text so far."""

from __future__ import annotations

import json

from kanawa.server.http.protocols.framing import RunChunk, typed_dict
from kanawa.server.http.protocols.openai.chat import ChatTranslator, _data
from kanawa.server.http.protocols.openai.response_events import ResponseTranslator, sse_event
from kanawa.server.http.protocols.run_parts import Part
from kanawa.server.runs.chunks import Chunk

RUN = "ab" * 16


def chunks() -> list[RunChunk]:
    made = [
        Chunk("a", "delta", {"reasoning": "think "}, 0.0),
        Chunk("a", "delta", {"text": 'say "hi" '}, 0.0),
        Chunk("a", "delta", {"text": "ünïcode\n"}, 0.0),
        Chunk("a", "tool_call", {"id": "c1", "name": "tick", "arguments": "{}"}, 0.0),
        Chunk(
            "a", "tool_response", {"call_id": "c1", "name": "tick", "content": "tock", "is_error": False}, 0.0
        ),
        Chunk("a", "delta", {"text": "done"}, 0.0),
        Chunk("a", "final", {"text": "done", "output": "done"}, 0.0),
        Chunk("a", "usage", {"input_tokens": 3, "output_tokens": 4}, 0.0),
        Chunk("a", "done", {"status": "completed"}, 0.0),
    ]
    return [typed_dict(json.loads(chunk.encode(seq))) for seq, chunk in enumerate(made, 1)]


def responses_stream() -> list[bytes]:
    translator = ResponseTranslator(Part(RUN), model="a", created=0)
    events = translator.opening_events() + [event for chunk in chunks() for event in translator.feed(chunk)]
    return [sse_event(event, seq) for seq, event in enumerate(events)]


def test_the_same_chunks_give_the_same_response_events() -> None:
    first, second = responses_stream(), responses_stream()
    assert first == second
    parsed = [json.loads(frame.split(b"data: ", 1)[1]) for frame in first]
    assert [event["sequence_number"] for event in parsed] == list(range(len(parsed)))
    deltas = [e for e in parsed if e["type"] == "response.output_text.delta"]
    assert deltas[0] == {
        "type": "response.output_text.delta",
        "item_id": f"msg_{RUN}_2",
        "output_index": 1,
        "content_index": 0,
        "delta": 'say "hi" ',
        "logprobs": [],
        "sequence_number": deltas[0]["sequence_number"],
    }
    final = parsed[-1]["response"]
    assert [item["type"] for item in final["output"]] == ["reasoning", "message", "mcp_call", "message"]
    assert final["output"][1]["content"][0]["text"] == 'say "hi" ünïcode\n'
    assert final["output"][0]["summary"][0]["text"] == "think "
    assert final["usage"]["total_tokens"] == 7


def test_a_snapshot_mid_message_holds_the_text_so_far() -> None:
    translator = ResponseTranslator(Part(RUN), model="a", created=0)
    for chunk in chunks()[:3]:
        translator.feed(chunk)
    snapshot = translator.snapshot()
    assert snapshot["status"] == "in_progress"
    assert snapshot["output"][1]["content"][0]["text"] == 'say "hi" ünïcode\n'


def test_chat_deltas_are_the_chunks_written_out() -> None:
    translator = ChatTranslator(Part(RUN), model="a", created=5)
    frames = [_data(event) for chunk in chunks() for event in translator.feed(chunk)]
    parsed = [json.loads(frame[len(b"data: ") :]) for frame in frames]
    assert parsed[0]["choices"][0]["delta"] == {"role": "assistant", "content": 'say "hi" '}
    assert parsed[1] == {
        "id": f"chatcmpl_{RUN}",
        "object": "chat.completion.chunk",
        "created": 5,
        "model": "a",
        "choices": [{"index": 0, "delta": {"content": "ünïcode\n"}, "finish_reason": None, "logprobs": None}],
    }
    assert "".join(p["choices"][0]["delta"].get("content", "") for p in parsed) == 'say "hi" ünïcode\ndone'
    assert parsed[-1]["choices"][0]["finish_reason"] == "stop"
