"""Run events → chunks (seed 002 §5-1, §7): kanawa's own events by class, exhaustively, and an
application's own events through the translations it gives."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from kanawa.agents.routing import RouteDecision
from kanawa.llm.errors import LLMConnectionError
from kanawa.loop.errors import GuardrailViolation, LLMCallFailed, MaxStepsExceeded
from kanawa.loop.events import (
    ApprovalRequired,
    FinalResponse,
    GuardrailTripped,
    HandoffStarted,
    NestedEvent,
    Thinking,
    ToolCallStep,
    ToolResultStep,
)
from kanawa.server.runs.chunks import (
    Chunk,
    ChunkTranslation,
    UnknownEvent,
    done_chunk,
    encode_json,
    error_chunk,
    fields_chunk,
    to_data,
)
from kanawa.tools.base import ToolErrorKind, ToolResult
from kanawa.tools.errors import ToolValidationError
from kanawa.types import (
    ReasoningDelta,
    TextDelta,
    TextPart,
    ToolCall,
    ToolCallArgsDelta,
    ToolCallStarted,
    Usage,
)

KANAWA = ChunkTranslation()


def chunks_of(event: object, agent: str = "coord", translation: ChunkTranslation = KANAWA) -> list[Chunk]:
    return translation.chunks(event, agent=agent, now=0.0)


def one(event: object, agent: str = "coord", translation: ChunkTranslation = KANAWA) -> Chunk:
    chunks = chunks_of(event, agent, translation)
    assert len(chunks) == 1
    return chunks[0]


def test_seed_5_1_deltas_are_delta_chunks() -> None:
    assert one(TextDelta("hi")).type == "delta"
    assert one(TextDelta("hi")).data == {"text": "hi"}
    assert one(ReasoningDelta("hmm")).data == {"reasoning": "hmm"}
    assert one(ToolCallStarted(0, "c1", "add")).data == {"index": 0, "id": "c1", "name": "add"}
    assert one(ToolCallArgsDelta(0, "c1", '{"a"')).type == "tool_call_delta"


def test_seed_5_1_tool_call_and_tool_response() -> None:
    call = one(ToolCallStep(2, ToolCall("c1", "add", '{"a": 1}')))
    assert (call.type, call.data) == (
        "tool_call",
        {"step": 2, "id": "c1", "name": "add", "arguments": '{"a": 1}', "invalid_arguments": None},
    )
    result = ToolResult(
        "c1",
        "add",
        (TextPart("boom"),),
        is_error=True,
        error_kind=ToolErrorKind.EXECUTION_ERROR,
        duration_ms=1.5,
        detail="secret detail",
    )
    response = one(ToolResultStep(2, result))
    assert response.type == "tool_response"
    assert response.data == {
        "step": 2,
        "call_id": "c1",
        "name": "add",
        "content": "boom",
        "is_error": True,
        "error_kind": "execution_error",
        "duration_ms": 1.5,
    }
    assert "secret detail" not in json.dumps(response.data)


def test_final_response_is_followed_by_usage() -> None:
    class Answer(BaseModel):
        value: int

    chunks = chunks_of(
        FinalResponse(3, Answer(value=5), '{"value":5}', Usage(input_tokens=10, output_tokens=2, requests=2)),
        "a",
    )
    assert [c.type for c in chunks] == ["final", "usage"]
    assert chunks[0].data == {"step": 3, "output": {"value": 5}, "text": '{"value":5}'}
    assert chunks[1].data["total_tokens"] == 12  # type: ignore[call-overload,index]


def test_thinking_is_a_thinking_chunk_of_its_fields() -> None:
    chunk = one(Thinking(1, "policy", text="draft"))
    assert (chunk.type, chunk.data) == ("thinking", {"step": 1, "reason": "policy", "text": "draft"})


@dataclass(frozen=True, slots=True)
class BudgetWarning:
    """An application's own event (not one of kanawa's)."""

    spent: float
    kind: str = "budget_warning"


def test_an_event_nobody_translates_fails_the_run_rather_than_being_guessed() -> None:
    with pytest.raises(UnknownEvent, match="BudgetWarning"):
        one(BudgetWarning(0.5))
    with pytest.raises(UnknownEvent):  # inside a nested run's events too
        one(NestedEvent("Inner", 1, BudgetWarning(0.5)))


def test_an_applications_events_are_translated_by_the_translation_it_gives() -> None:
    translation = KANAWA.with_extra({BudgetWarning: fields_chunk("budget_warning")})
    chunk = one(BudgetWarning(0.5), translation=translation)
    assert (chunk.type, chunk.data) == ("budget_warning", {"spent": 0.5})  # ``kind`` is never copied
    nested = one(NestedEvent("Inner", 2, BudgetWarning(0.25)), translation=translation)
    assert (nested.agent, nested.type, nested.data) == (
        "Inner",
        "budget_warning",
        {"spent": 0.25, "depth": 2},
    )
    assert one(TextDelta("x"), translation=translation).data == {"text": "x"}  # kanawa's own unchanged


def test_an_event_class_is_translated_once() -> None:
    translation = KANAWA.with_extra({BudgetWarning: fields_chunk("budget_warning")})
    with pytest.raises(ValueError, match="BudgetWarning"):
        translation.with_extra({BudgetWarning: fields_chunk("other")})
    with pytest.raises(ValueError, match="TextDelta"):
        KANAWA.with_extra({TextDelta: fields_chunk("text")})


def test_handoff_and_nested_events_carry_the_handed_off_agents_name() -> None:
    start = one(HandoffStarted(1, "coord", "DraftAgent", 1, "c9"))
    assert start.type == "handoff_start"
    assert start.data == {"step": 1, "source": "coord", "target": "DraftAgent", "depth": 1, "call_id": "c9"}
    nested = one(NestedEvent("DraftAgent", 1, TextDelta("draft text")))
    assert (nested.agent, nested.type, nested.data) == (
        "DraftAgent",
        "delta",
        {"text": "draft text", "depth": 1},
    )
    deeper = one(NestedEvent("DraftAgent", 1, NestedEvent("StyleAgent", 2, TextDelta("x"))))
    assert (deeper.agent, deeper.data) == ("StyleAgent", {"text": "x", "depth": 1})


def test_guardrail_warn_and_approval_required_chunks() -> None:
    warn = one(GuardrailTripped(2, "output", "no_pii", "warn", ("contains an email address",)))
    assert warn.type == "guardrail"
    assert warn.data == {
        "step": 2,
        "stage": "output",
        "guardrail": "no_pii",
        "action": "warn",
        "reasons": ["contains an email address"],
    }
    approval = one(ApprovalRequired(3, (ToolCall("c1", "delete_file", '{"path": "x"}'),)))
    assert approval.type == "approval_required"
    assert approval.data["calls"][0]["id"] == "c1"  # type: ignore[call-overload,index]


def test_seed_7_errors_become_error_chunks_with_safe_messages() -> None:
    secret = "sk-ant-api03-" + "A" * 40
    cases = [
        (
            GuardrailViolation(GuardrailTripped(1, "output", "no_pii", "block", ("an email address",))),
            "GuardrailViolation",
        ),
        (ToolValidationError("bad arguments for add"), "ToolValidationError"),
        (MaxStepsExceeded(10), "MaxStepsExceeded"),
        (LLMCallFailed(LLMConnectionError(f"502 from upstream with {secret}"), step=1), "LLMCallFailed"),
    ]
    for exc, code in cases:
        chunk = error_chunk(exc, agent="coord", now=0)
        assert chunk.type == "error"
        assert chunk.data["code"] == code  # type: ignore[call-overload,index]
        assert secret not in json.dumps(chunk.data)
    internal = error_chunk(KeyError(secret), agent="coord", now=0)
    assert internal.data == {"code": "internal_error", "message": "the run failed with an internal error"}


def test_chunk_encoding_has_the_seed_keys_in_order() -> None:
    text = Chunk("calc", "delta", {"text": "5"}, 1748000000.0).encode(7)
    assert list(json.loads(text)) == ["time", "agent", "type", "data", "seq"]
    assert json.loads(text)["seq"] == 7
    assert json.loads(done_chunk("completed", agent="a", now=0).encode(1))["data"]["status"] == "completed"
    odd = Chunk("a", "x", {"v": float("nan")}, 0).encode(1)  # type: ignore[dict-item]
    assert json.loads(odd)["data"] == {"v": "nan"}


def test_to_data_handles_pydantic_enums_and_nested_dataclasses() -> None:
    assert to_data(ToolErrorKind.PARSE_ERROR) == "parse_error"
    assert to_data((1, {2})) == [1, [2]]
    assert to_data({"k": ToolCall("c", "n", "{}")})["k"]["name"] == "n"  # type: ignore[call-overload,index]


def test_a_route_chunk_carries_a_models_brief_question_but_never_the_whole_input() -> None:
    from kanawa.server.runs.chunks import ROUTE_QUESTION_CHARS

    essay = "志望理由。" * 2000
    (ruled,) = chunks_of(RouteDecision(("Guard", "Eval"), essay, "rules", "rule 0 matched", rule=0), "s")
    assert ruled.type == "route"
    assert ruled.data == {
        "agents": ["Guard", "Eval"],
        "source": "rules",
        "reason": "rule 0 matched",
        "rule": 0,
    }
    (fallback,) = chunks_of(RouteDecision(("Eval",), essay, "fallback", "bad JSON"), "s")
    assert isinstance(fallback.data, dict)
    assert "question" not in fallback.data
    (brief,) = chunks_of(RouteDecision(("Eval",), "添削の依頼", "llm", "the model chose"), "s")
    assert isinstance(brief.data, dict)
    assert brief.data["question"] == "添削の依頼"
    (long,) = chunks_of(RouteDecision(("Eval",), essay, "llm", "the model chose"), "s")
    assert isinstance(long.data, dict)
    assert long.data["question"] == essay[:ROUTE_QUESTION_CHARS] + "…"


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(_JSON_VALUES)
def test_encode_json_writes_what_the_library_encoder_writes(value: object) -> None:
    """The prebuilt encoder is the library's one-shot path built once: the same text for any value,
    and the same ValueError for a value JSON cannot hold (NaN, infinity)."""
    library = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    try:
        expected = library.encode(value)
    except ValueError:
        with pytest.raises(ValueError, match="not JSON compliant"):
            encode_json(value)
        return
    assert encode_json(value) == expected


def test_a_chunk_with_a_cycle_is_sent_with_its_data_made_plain() -> None:
    """A cycle ends the prebuilt encoder in RecursionError; the library's path then reports it as
    before, and the chunk goes out with its data made plain rather than failing the run."""
    looped: dict[str, object] = {"a": 1}
    looped["self"] = looped
    with pytest.raises(ValueError, match="Circular reference"):
        encode_json(looped)
    body = json.loads(Chunk("a", "x", looped, 0.0).encode(1))  # type: ignore[arg-type]
    assert body["data"]["a"] == 1
    assert body["seq"] == 1
