"""What GeminiAdapter sends: contents, roles, signatures, generationConfig, tools (seed 002 §3-3).

Asserted on the JSON the real SDK put on the wire to the loopback server."""

from __future__ import annotations

import base64

import pytest

from kanawa.llm.errors import LLMBadRequestError
from kanawa.llm.gemini.adapter import GeminiAdapter
from kanawa.llm.gemini.payload import SKIP_SIGNATURE
from kanawa.types import (
    AssistantMessage,
    FilePart,
    ImagePart,
    Message,
    ReasoningPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from tests.llm.gemini.wire import (
    ADD,
    API_KEY,
    NOW,
    SIGNATURE,
    SIGNATURE_2,
    body,
    call,
    contents,
    field,
    send,
    signature_bytes,
    text,
    thought,
)
from tests.wire.server import WireServer, json_reply

# ----------------------------------------------------------------------------------------- messages


async def test_system_messages_become_system_instruction_not_contents(wire_server: WireServer) -> None:
    request = await send(
        wire_server, [SystemMessage("Be brief."), UserMessage("hi"), SystemMessage("Use metric.")]
    )
    sent = request.json()
    assert [p["text"] for p in sent["systemInstruction"]["parts"]] == ["Be brief.", "Use metric."]
    assert contents(request) == [{"role": "user", "parts": [{"text": "hi"}]}]


async def test_user_parts_send_text_inline_data_and_file_data(wire_server: WireServer) -> None:
    png = b"\x89PNG\r\n\x1a\n-bytes"
    pdf = b"%PDF-1.7 fake"
    data_url = "data:image/webp;base64," + base64.b64encode(b"webp-bytes").decode()
    message = UserMessage(
        [
            TextPart("what is this?"),
            ImagePart(data=png, media_type="image/png"),
            ImagePart(url="https://example.com/cat.jpg"),
            ImagePart(url=data_url),
            FilePart(pdf, media_type="application/pdf", filename="a.pdf"),
        ]
    )
    parts = contents(await send(wire_server, [message]))[0]["parts"]
    assert parts[0] == {"text": "what is this?"}
    inline = [field(p, "inlineData") for p in parts if "inlineData" in p or "inline_data" in p]
    assert [(field(b, "mimeType"), signature_bytes(b["data"])) for b in inline] == [
        ("image/png", png),
        ("image/webp", b"webp-bytes"),
        ("application/pdf", pdf),
    ]
    file_data = field(parts[2], "fileData")
    assert (field(file_data, "fileUri"), field(file_data, "mimeType")) == (
        "https://example.com/cat.jpg",
        "image/jpeg",
    )


async def test_assistant_turn_is_model_role_with_text_and_parsed_function_call_args(
    wire_server: WireServer,
) -> None:
    history: list[Message] = [
        UserMessage("add 2 and 3"),
        AssistantMessage(text="Let me add.", tool_calls=(ToolCall("call_x_0", "add", '{"a": 2, "b": 3}'),)),
        ToolMessage("call_x_0", "5", name="add"),
    ]
    sent = contents(await send(wire_server, history, tools=[ADD]))
    assert [c["role"] for c in sent] == ["user", "model", "user"]
    assert sent[1]["parts"] == [
        {"text": "Let me add."},
        {"functionCall": {"name": "add", "args": {"a": 2, "b": 3}}},
    ]


async def test_function_call_id_is_sent_only_when_gemini_issued_it(wire_server: WireServer) -> None:
    issued = ToolCall("fc-1", "add", '{"a":1,"b":1}', provider_details={"function_call_id": "fc-1"})
    invented = ToolCall("call_r_1", "now", "")
    history: list[Message] = [
        UserMessage("go"),
        AssistantMessage(tool_calls=(issued, invented)),
        ToolMessage("fc-1", "2", name="add"),
        ToolMessage("call_r_1", "noon", name="now"),
    ]
    sent = contents(await send(wire_server, history))
    calls = [p["functionCall"] for p in sent[1]["parts"]]
    assert calls == [{"id": "fc-1", "name": "add", "args": {"a": 1, "b": 1}}, {"name": "now", "args": {}}]
    responses = [field(p, "functionResponse") for p in sent[2]["parts"]]
    assert [r.get("id") for r in responses] == ["fc-1", None]


async def test_consecutive_tool_results_merge_into_one_user_content_with_result_or_error(
    wire_server: WireServer,
) -> None:
    calls = (ToolCall("c1", "add", '{"a":1,"b":2}'), ToolCall("c2", "now", "{}"))
    history: list[Message] = [
        UserMessage("both please"),
        AssistantMessage(tool_calls=calls),
        ToolMessage("c1", "3", name="add"),
        ToolMessage("c2", "clock is broken", is_error=True, name="now"),
        UserMessage("and then?"),
    ]
    sent = contents(await send(wire_server, history))
    assert [c["role"] for c in sent] == ["user", "model", "user"]
    merged = sent[2]["parts"]
    assert [field(p, "functionResponse") for p in merged[:2]] == [
        {"name": "add", "response": {"result": "3"}},
        {"name": "now", "response": {"error": "clock is broken"}},
    ]
    assert merged[2] == {"text": "and then?"}


async def test_tool_result_without_a_name_takes_the_name_of_its_tool_call(wire_server: WireServer) -> None:
    history: list[Message] = [
        UserMessage("time?"),
        AssistantMessage(tool_calls=(ToolCall("c9", "now", "{}"),)),
        ToolMessage("c9", "noon"),
    ]
    sent = contents(await send(wire_server, history))
    assert field(sent[2]["parts"][0], "functionResponse")["name"] == "now"


async def test_tool_result_that_names_nothing_fails_before_sending(wire_server: WireServer) -> None:
    with pytest.raises(LLMBadRequestError, match="function name"):
        await send(wire_server, [UserMessage("q"), ToolMessage("ghost", "x")])
    assert wire_server.requests == []


# --------------------------------------------------------------------------------- thought signatures


async def test_thought_signatures_are_replayed_on_the_parts_that_carried_them(
    wire_server: WireServer,
) -> None:
    """Gemini 2.5/3 require the signature back on the same part; thought summaries are not replayed."""
    adapter = GeminiAdapter("gemini-2.5-flash", api_key=API_KEY, base_url=wire_server.base_url, timeout=5.0)
    first = body(
        [
            thought("I should call both tools."),
            call("add", {"a": 1, "b": 2}, signature=SIGNATURE),
            call("now", {}),
        ]
    )
    wire_server.enqueue(json_reply(first), json_reply(body([text("done", signature=SIGNATURE_2)])))
    wire_server.enqueue(json_reply(body([text("ok")])))
    turn1 = await adapter.chat([UserMessage("go")], tools=[ADD, NOW])
    results = [ToolMessage(c.id, "r", name=c.name) for c in turn1.message.tool_calls]
    turn2 = await adapter.chat([UserMessage("go"), turn1.message, *results], tools=[ADD, NOW])
    await adapter.chat([UserMessage("go"), turn1.message, *results, turn2.message, UserMessage("thanks")])

    replay = contents(wire_server.requests[1])[1]
    assert replay["role"] == "model"
    assert all("thought" not in p for p in replay["parts"])
    signed, unsigned = replay["parts"]
    assert signature_bytes(field(signed, "thoughtSignature")) == base64.b64decode(SIGNATURE)
    assert "thoughtSignature" not in unsigned
    assert "thought_signature" not in unsigned

    text_turn = contents(wire_server.requests[2])[3]
    assert text_turn["parts"][0]["text"] == "done"
    assert signature_bytes(field(text_turn["parts"][0], "thoughtSignature")) == base64.b64decode(SIGNATURE_2)


async def test_gemini_3_tool_turn_without_any_signature_gets_googles_placeholder(
    wire_server: WireServer,
) -> None:
    foreign = (ToolCall("toolu_1", "add", '{"a":1,"b":2}'), ToolCall("toolu_2", "now", "{}"))
    history: list[Message] = [
        UserMessage("go"),
        AssistantMessage(tool_calls=foreign),
        ToolMessage("toolu_1", "3", name="add"),
        ToolMessage("toolu_2", "noon", name="now"),
    ]
    on_3 = contents(await send(wire_server, history, model="gemini-3-pro-preview"))[1]["parts"]
    assert field(on_3[0], "thoughtSignature") == SKIP_SIGNATURE
    assert "thoughtSignature" not in on_3[1]
    assert "thought_signature" not in on_3[1]
    on_25 = contents(await send(wire_server, history, model="gemini-2.5-pro"))[1]["parts"]
    assert all("thoughtSignature" not in p and "thought_signature" not in p for p in on_25)


async def test_real_signatures_are_never_replaced_by_the_placeholder(wire_server: WireServer) -> None:
    calls = (
        ToolCall("a", "add", "{}"),
        ToolCall("b", "now", "{}", provider_details={"thought_signature": SIGNATURE}),
    )
    history: list[Message] = [
        UserMessage("go"),
        AssistantMessage(tool_calls=calls),
        ToolMessage("a", "1", name="add"),
    ]
    parts = contents(await send(wire_server, history, model="gemini-3-flash-preview"))[1]["parts"]
    assert "thoughtSignature" not in parts[0]
    assert "thought_signature" not in parts[0]
    assert signature_bytes(field(parts[1], "thoughtSignature")) == base64.b64decode(SIGNATURE)


async def test_other_providers_reasoning_payloads_are_dropped(wire_server: WireServer) -> None:
    reasoning = (
        ReasoningPart(text="summary", provider="anthropic", payload={"signature": "abc"}),
        ReasoningPart(text="my thoughts", provider="gemini"),
    )
    history: list[Message] = [
        UserMessage("q"),
        AssistantMessage(text="answer", reasoning=reasoning),
        UserMessage("more"),
    ]
    sent = contents(await send(wire_server, history))
    assert sent[1] == {"role": "model", "parts": [{"text": "answer"}]}


async def test_invalid_stored_signature_fails_before_sending(wire_server: WireServer) -> None:
    bad = ToolCall("a", "add", "{}", provider_details={"thought_signature": "not base64 at all!"})
    with pytest.raises(LLMBadRequestError, match="thought_signature"):
        await send(wire_server, [UserMessage("go"), AssistantMessage(tool_calls=(bad,))])
    assert wire_server.requests == []


async def test_a_conversation_of_only_system_text_fails_before_sending(wire_server: WireServer) -> None:
    with pytest.raises(LLMBadRequestError):
        await send(wire_server, [SystemMessage("alone")])
    assert wire_server.requests == []


async def test_signature_on_a_thought_part_is_replayed_without_the_summary_text(
    wire_server: WireServer,
) -> None:
    adapter = GeminiAdapter("gemini-2.5-pro", api_key=API_KEY, base_url=wire_server.base_url, timeout=5.0)
    wire_server.enqueue(json_reply(body([thought("private summary", signature=SIGNATURE), text("Answer.")])))
    wire_server.enqueue(json_reply(body([text("ok")])))
    first = await adapter.chat([UserMessage("q")])
    await adapter.chat([UserMessage("q"), first.message, UserMessage("next")])
    replay = contents(wire_server.requests[1])[1]["parts"]
    assert len(replay) == 2
    signed, answer = replay
    assert signed["thought"] is True
    assert signed["text"] == ""
    assert signature_bytes(field(signed, "thoughtSignature")) == base64.b64decode(SIGNATURE)
    assert answer == {"text": "Answer."}
