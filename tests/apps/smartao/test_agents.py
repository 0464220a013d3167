"""Seed 002 §4: each SmartAO agent with a FunctionLLM, its tools running for real on the session."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kanawa.apps.smartao.agents import (
    KEEP_HEADINGS_RULE,
    Deepening,
    DraftAgent,
    DraftSuggestions,
    EvalAgent,
    GuardAgent,
    RefAgent,
    StyleAgent,
    draft_patch,
    keeps_headings,
)
from kanawa.apps.smartao.rubric import AXES, Rubric
from kanawa.apps.smartao.session import (
    CoachingSession,
    EssayRequest,
    SmartAOResources,
    sample_documents,
    sample_text,
)
from kanawa.llm.testing import FunctionLLM, ModelRequest, Script
from kanawa.loop.errors import GuardrailViolation
from kanawa.loop.events import GuardrailTripped
from kanawa.types import AssistantMessage, SystemMessage, ToolCall


def calls_then(tool: str, arguments: dict[str, object], answer: str) -> FunctionLLM:
    """A model that calls ``tool`` once, then answers ``answer``."""

    def respond(request: ModelRequest) -> Script:
        if not request.tool_results:
            return AssistantMessage(
                tool_calls=(ToolCall("c1", tool, json.dumps(arguments, ensure_ascii=False)),)
            )
        return answer

    return FunctionLLM(respond)


def session_for(resources: SmartAOResources, request: EssayRequest) -> CoachingSession:
    return CoachingSession(request, resources)


async def test_draft_system_prompt_carries_keep_headings_rule_and_depth(
    resources: SmartAOResources, essay_request: EssayRequest
) -> None:
    suggestions = DraftSuggestions(
        suggestions=[
            Deepening(after="■志望理由", text="（見出しを書き換える提案）"),
            Deepening(after="実際に一か月間の試行が行われました。", text="延べ百二十人が利用した。"),
            Deepening(after="本文にない文。", text="無視される"),
        ]
    )
    model = calls_then("essay_outline", {}, suggestions.model_dump_json())
    agent = DraftAgent(model=model, depth=3)
    result = await agent.arun("深掘りしてください", deps=session_for(resources, essay_request))
    system = model.requests[0].messages[0]
    assert isinstance(system, SystemMessage)
    assert KEEP_HEADINGS_RULE in system.content
    assert "深掘り depth: 3" in system.content
    outline = json.loads(model.requests[1].tool_results[0].text)
    assert outline["headings"][0] == "■志望理由"
    patch = draft_patch(essay_request.essay, result.output)
    assert len(patch.change_map) == 1
    assert "試行が行われました。延べ百二十人が利用した。" in patch.new_text
    assert keeps_headings(essay_request.essay, patch.new_text)


@settings(deadline=None)
@given(st.data())
def test_draft_patch_keeps_every_heading_line_whatever_the_suggestions(data: st.DataObject) -> None:
    essay = sample_text("shibou_riyusho.txt")
    lines = essay.splitlines()
    suggestions = []
    for _ in range(data.draw(st.integers(0, 6))):
        line = data.draw(st.sampled_from(lines))
        start = data.draw(st.integers(0, max(0, len(line) - 1)))
        anchor = line[start : start + data.draw(st.integers(0, 12))]
        text = data.draw(st.text(st.sampled_from(list("■【】#\n。あい1.")), min_size=1, max_size=8))
        suggestions.append(Deepening(after=anchor, text=text))
    patch = draft_patch(essay, DraftSuggestions(suggestions=suggestions))
    assert patch.apply(essay) == patch.new_text
    assert all(change.op.value == "insert" for change in patch.change_map)
    original_headings = [line for line in lines if line.startswith("■")]
    assert [line for line in patch.new_text.splitlines() if line in original_headings] == original_headings


def test_draft_depth_is_checked() -> None:
    with pytest.raises(ValueError, match="depth"):
        DraftAgent(depth=9)


async def test_style_agent_grammar_check_records_issues_and_their_patch(
    resources: SmartAOResources, essay_request: EssayRequest
) -> None:
    session = session_for(resources, essay_request)
    model = calls_then("grammar_check", {}, "指摘は以上です。")
    result = await StyleAgent(model=model).arun("表記を点検", deps=session)
    assert result.output == "指摘は以上です。"
    assert session.style_issues
    report = json.loads(model.requests[1].tool_results[0].text)
    assert report["engine"] == "textlint"
    assert len(report["issues"]) == len(session.style_issues)
    assert session.style_patch is not None
    assert "考えたのです。" in session.style_patch.new_text


async def test_style_agent_falls_back_to_sudachi_rules_without_node(
    resources: SmartAOResources, essay_request: EssayRequest
) -> None:
    resources.textlint = None
    session = session_for(resources, essay_request)
    model = calls_then("grammar_check", {}, "ok")
    await StyleAgent(model=model).arun("表記を点検", deps=session)
    assert json.loads(model.requests[1].tool_results[0].text)["engine"] == "sudachi"
    assert session.style_issues
    assert all(i.source == "sudachi" for i in session.style_issues)


async def test_ref_agent_vector_search_finds_the_reference_on_the_topic(
    resources: SmartAOResources, essay_request: EssayRequest
) -> None:
    session = session_for(resources, essay_request)
    model = calls_then(
        "vector_search", {"query": "商店街の空き店舗を自習スペースに活用する", "k": 2}, "参考資料です"
    )
    await RefAgent(model=model).arun("資料を探して", deps=session)
    assert session.references[0].id == "ref-01"
    assert len(session.references) == 2
    assert session.references[0].score >= session.references[1].score


def prior(name: str) -> str:
    return next(d.text for d in sample_documents("prior_essays.json") if d.id == name)


async def test_guard_agent_blocks_above_0_4_before_the_model_is_called(resources: SmartAOResources) -> None:
    session = session_for(resources, EssayRequest(essay=prior("prior-02")))
    model = calls_then("plagiarism_check", {}, "unreachable")
    runner = GuardAgent(model=model).stream("点検", deps=session)
    events: list[object] = []

    async def drain() -> None:
        async for event in runner:
            events.append(event)

    with pytest.raises(GuardrailViolation) as raised:
        await drain()
    assert model.requests == []
    tripped = [e for e in events if isinstance(e, GuardrailTripped)]
    assert [(e.action, e.stage) for e in tripped] == [("block", "input")]
    assert "prior-02" in raised.value.reasons[0]
    assert session.plagiarism is not None
    assert session.plagiarism.verdict == "block"
    assert session.plagiarism.matches[0].passages


async def test_guard_agent_warns_from_0_28_and_the_run_goes_on(resources: SmartAOResources) -> None:
    copied = prior("prior-02")
    essay = copied[:70] + sample_text("shoronbun.txt")[60:200]
    session = session_for(resources, EssayRequest(essay=essay))
    model = calls_then("plagiarism_check", {}, "書き直しを勧めます")
    runner = GuardAgent(model=model).stream("点検", deps=session)
    events = [event async for event in runner]
    assert session.plagiarism is not None
    assert session.plagiarism.verdict == "warn", session.plagiarism.score
    assert [e.action for e in events if isinstance(e, GuardrailTripped)] == ["warn"]
    assert runner.result.output == "書き直しを勧めます"
    assert json.loads(model.requests[1].tool_results[0].text)["verdict"] == "warn"


async def test_eval_agent_returns_a_rubric_over_the_seven_axes(
    resources: SmartAOResources, essay_request: EssayRequest
) -> None:
    session = session_for(resources, essay_request)
    session.style_issues = []

    def respond(request: ModelRequest) -> Script:
        if not request.tool_results:
            return AssistantMessage(tool_calls=(ToolCall("c1", "rubric_evidence", "{}"),))
        evidence = Rubric.model_validate_json(request.tool_results[0].text)
        return evidence.model_copy(update={"summary": "良い志望理由書です"}).model_dump_json()

    model = FunctionLLM(respond)
    result = await EvalAgent(model=model).arun("評価して", deps=session)
    assert isinstance(result.output, Rubric)
    assert [s.axis for s in result.output.scores] == list(AXES)
    assert all(1 <= s.score <= 5 and s.reason for s in result.output.scores)
    system = model.requests[0].messages[0]
    assert isinstance(system, SystemMessage)
    assert all(axis in system.content for axis in AXES)


async def test_ref_agent_on_pgvector_uses_the_seeds_cos_sim_fallback_scan(
    postgres_url: str, embedder: Any, essay_request: EssayRequest, corpus_index: Any
) -> None:
    from kanawa.agents.memory.long_term import LongTermMemory
    from kanawa.agents.memory.pgvector_store import PgVectorMemoryStore
    from kanawa.apps.smartao.session import load_references

    store = await PgVectorMemoryStore.open(postgres_url, dim=embedder.dim, table="smartao_refs", index=None)
    memory = LongTermMemory(store, embedder)
    try:
        assert not store.indexed
        await load_references(memory, sample_documents("references.json"))
        session = CoachingSession(essay_request, SmartAOResources(plagiarism=corpus_index, references=memory))
        model = calls_then("vector_search", {"query": "人工知能の答えを確かめる批判的思考", "k": 3}, "ok")
        await RefAgent(model=model).arun("資料", deps=session)
        assert "ref-08" in [r.id for r in session.references][:2]
    finally:
        await memory.aclose()
