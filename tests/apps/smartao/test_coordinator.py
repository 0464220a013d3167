"""Seed 002 §4 Coordinator: routing with the library's routers, merge_patches, EvalAgent as a handoff
(cached rubric), the plagiarism block, guardrails passed through, usage and cost per run — all on the
offline demo model, whose prose is labelled."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from kanawa.agents.guardrails import Guardrail
from kanawa.agents.routing import LLMRouter
from kanawa.apps.smartao.agents import keeps_headings
from kanawa.apps.smartao.coordinator import (
    Coordinator,
    Findings,
    PatchReady,
    RubricReady,
    default_router,
)
from kanawa.apps.smartao.demo_model import DEMO_LABEL, demo_model
from kanawa.apps.smartao.patch import PatchJSON, make_change
from kanawa.apps.smartao.rubric import AXES
from kanawa.apps.smartao.session import EssayRequest, SmartAOResources, sample_documents
from kanawa.llm.testing import FunctionLLM, ModelRequest, Script
from kanawa.loop.errors import GuardrailViolation
from kanawa.loop.events import FinalResponse, HandoffStarted, NestedEvent


async def collect(coordinator: Coordinator, request: EssayRequest, **options: Any) -> tuple[list[Any], Any]:
    running = coordinator.stream(request, **options)
    events = [event async for event in running]
    return events, running.result


def nested_kinds(events: list[Any], agent: str) -> list[str]:
    return [e.event.kind for e in events if isinstance(e, NestedEvent) and e.agent == agent]


async def test_one_coaching_run_streams_every_agent_and_ends_with_the_report(
    resources: SmartAOResources, essay_request: EssayRequest
) -> None:
    events, report = await collect(Coordinator(resources), essay_request)
    assert events[0].kind == "route"
    assert events[0].agents == ("GuardAgent", "StyleAgent", "DraftAgent", "RefAgent")
    assert [e.agent for e in events if isinstance(e, Findings)] == list(events[0].agents)
    assert "text_delta" in nested_kinds(events, "StyleAgent")
    handoffs = [e.event for e in events if isinstance(e, NestedEvent) and isinstance(e.event, HandoffStarted)]
    assert [(h.source, h.target) for h in handoffs] == [("Coordinator", "EvalAgent")]
    kinds = [e.kind for e in events]
    assert kinds.index("patch") < kinds.index("rubric") < kinds.index("final_response") == len(kinds) - 1
    final = events[-1]
    assert isinstance(final, FinalResponse)
    assert final.output is report
    essay = essay_request.essay
    assert report.patch.apply(essay) == report.patch.new_text
    assert keeps_headings(essay, report.patch.new_text)
    assert report.style_issues
    assert report.references
    assert report.plagiarism is not None
    assert report.rubric is not None
    assert [s.axis for s in report.rubric.scores] == list(AXES)
    assert report.rubric.summary.startswith(DEMO_LABEL)
    assert report.demo
    assert report.usage["requests"] >= 10
    assert report.cost is None  # the demo model has no price: unknown, never a made-up 0
    json.loads(report.model_dump_json())


async def test_style_findings_feed_the_rubric_axis_for_notation(
    resources: SmartAOResources, essay_request: EssayRequest
) -> None:
    clean = EssayRequest(
        essay="私は地域の商店街を研究したいです。将来は市役所で働きたいです。", policy=essay_request.policy
    )
    _, messy = await collect(Coordinator(resources), essay_request)
    _, tidy = await collect(Coordinator(resources), clean)
    assert len(messy.style_issues) > len(tidy.style_issues)
    assert messy.rubric.by_axis()["表記・形式"].score < tidy.rubric.by_axis()["表記・形式"].score


async def test_merge_patches_combines_style_and_draft_and_style_wins_an_overlap() -> None:
    original = "■見出し\n私は研究である。"
    style = PatchJSON.from_changes(original, [make_change(7, 13, "研究です。")])
    draft = PatchJSON.from_changes(original, [make_change(9, 11, "です"), make_change(13, 13, "具体例。")])
    merged = Coordinator.merge_patches(original, style, draft)
    assert merged.patch.new_text == "■見出し\n私は研究です。具体例。"
    assert len(merged.dropped) == 1
    assert Coordinator.merge_patches(original, None, None).patch.new_text == original


async def test_a_second_run_on_the_same_essay_takes_the_rubric_from_the_cache(
    resources: SmartAOResources, essay_request: EssayRequest
) -> None:
    coordinator = Coordinator(resources)
    _, first = await collect(coordinator, essay_request)
    events, second = await collect(coordinator, essay_request)
    assert not first.rubric_cached
    assert second.rubric_cached
    assert second.rubric == first.rubric
    assert [e.cached for e in events if isinstance(e, RubricReady)] == [True]
    assert not [e for e in events if isinstance(e, NestedEvent) and e.agent == "EvalAgent"]


async def test_plagiarism_block_stops_the_run_after_guard_with_the_passages(
    resources: SmartAOResources,
) -> None:
    copied = next(d.text for d in sample_documents("prior_essays.json") if d.id == "prior-02")
    running = Coordinator(resources).stream(EssayRequest(essay=copied))
    events: list[Any] = []

    async def drain() -> None:
        async for event in running:
            events.append(event)

    with pytest.raises(GuardrailViolation):
        await drain()
    findings = [e for e in events if isinstance(e, Findings)]
    assert [f.agent for f in findings] == ["GuardAgent"]
    plagiarism = findings[0].data["plagiarism"]
    assert plagiarism["verdict"] == "block"
    assert plagiarism["matches"][0]["passages"]
    assert not nested_kinds(events, "StyleAgent")
    assert not [e for e in events if isinstance(e, PatchReady)]


async def test_rule_router_focus_narrows_the_agents(
    resources: SmartAOResources, essay_request: EssayRequest
) -> None:
    events, report = await collect(Coordinator(resources), essay_request, focus="style", evaluate=False)
    assert events[0].agents == ("GuardAgent", "StyleAgent")
    assert report.agents == ["GuardAgent", "StyleAgent"]
    assert report.rubric is None
    assert report.references == []


async def test_llm_router_picks_the_agents(resources: SmartAOResources, essay_request: EssayRequest) -> None:
    def route(request: ModelRequest) -> Script:
        return json.dumps({"question": "参考資料を探す", "agents": ["GuardAgent", "RefAgent"]})

    router = LLMRouter(
        FunctionLLM(route),
        {"GuardAgent": "剽窃の点検", "StyleAgent": "表記", "DraftAgent": "深掘り", "RefAgent": "参考資料"},
        fallback=default_router(),
    )
    events, report = await collect(Coordinator(resources, router=router), essay_request, evaluate=False)
    assert events[0].source == "llm"
    assert report.agents == ["GuardAgent", "RefAgent"]
    assert report.references


async def test_guardrails_are_passed_to_every_agent_the_budget_hook_point(
    resources: SmartAOResources, essay_request: EssayRequest
) -> None:
    warn = Guardrail(regex_blocks={"phone number": r"\d{3}-\d{4}-\d{4}"}, action="warn", name="pii")
    coordinator = Coordinator(resources, guardrails=[warn])
    agents = [*coordinator.agents.values(), coordinator.eval_agent, coordinator.front]
    assert all(warn in agent.guardrails for agent in agents)
    essay = EssayRequest(essay=essay_request.essay + "\n連絡先は090-1234-5678です。")
    events, _ = await collect(coordinator, essay, focus="style", evaluate=False)
    tripped = [e.event for e in events if isinstance(e, NestedEvent) and e.event.kind == "guardrail"]
    assert {t.guardrail for t in tripped} == {"pii"}
    block = Guardrail(regex_blocks=[r"\d{3}-\d{4}-\d{4}"], name="pii-block")
    with pytest.raises(GuardrailViolation):
        await Coordinator(resources, guardrails=[block]).arun(essay, focus="style")


async def test_one_model_for_every_agent_cost_per_run_and_bad_input(resources: SmartAOResources) -> None:
    seen: list[str] = []

    def answer(request: ModelRequest) -> Script:
        seen.append(request.messages[0].content[:12])  # type: ignore[union-attr]
        return "了解しました。"

    coordinator = Coordinator(resources, model=FunctionLLM(answer))
    assert not coordinator.demo
    report = await coordinator.arun(
        EssayRequest(essay="私は研究がしたいです。"), focus="style", evaluate=False
    )
    assert report.style_issues == []
    assert len(seen) == 2
    with pytest.raises(ValueError, match="empty"):
        coordinator.stream("  ")


async def test_eval_runs_even_when_the_coordinators_model_does_not_hand_off(
    resources: SmartAOResources, essay_request: EssayRequest
) -> None:
    from kanawa.apps.smartao.demo_model import demo_model

    models = {
        name: demo_model(role)
        for name, role in [
            ("GuardAgent", "guard"),
            ("StyleAgent", "style"),
            ("DraftAgent", "draft"),
            ("RefAgent", "ref"),
            ("EvalAgent", "eval"),
        ]
    }
    models["Coordinator"] = FunctionLLM(lambda request: "評価は不要です。")  # type: ignore[assignment]
    events, report = await collect(Coordinator(resources, models=models), essay_request)
    assert not [e for e in events if isinstance(e, NestedEvent) and isinstance(e.event, HandoffStarted)]
    assert "final_response" in nested_kinds(events, "EvalAgent")
    assert report.rubric is not None
    assert "EvalAgent" in report.agents


async def test_plagiarism_warning_is_a_bubble_and_the_run_goes_on(resources: SmartAOResources) -> None:
    copied = next(d.text for d in sample_documents("prior_essays.json") if d.id == "prior-02")
    from kanawa.apps.smartao.session import sample_text

    essay = copied[:70] + sample_text("shoronbun.txt")[60:200]
    events, report = await collect(Coordinator(resources), EssayRequest(essay=essay), evaluate=False)
    warnings = [e.event for e in events if isinstance(e, NestedEvent) and e.event.kind == "guardrail"]
    assert [(w.guardrail, w.action) for w in warnings] == [("plagiarism", "warn")]
    assert report.plagiarism is not None
    assert report.plagiarism.verdict == "warn"
    assert report.agents == ["GuardAgent", "StyleAgent", "DraftAgent", "RefAgent"]


async def test_the_rubric_cache_is_not_reused_across_style_backends(
    resources: SmartAOResources, essay_request: EssayRequest
) -> None:
    """textlint and the Sudachi rules find different issues in the same essay, and the rubric counts
    them: a rubric cached with one backend must not be shown with the other's issues."""
    _, with_textlint = await collect(Coordinator(resources), essay_request)
    sudachi = dataclasses.replace(resources, textlint=None)  # the same evaluation store
    events, with_sudachi = await collect(Coordinator(sudachi), essay_request)
    assert len(with_textlint.style_issues) != len(with_sudachi.style_issues)
    assert not with_sudachi.rubric_cached
    assert [e.cached for e in events if isinstance(e, RubricReady)] == [False]
    for report in (with_textlint, with_sudachi):  # each rubric counts the issues its page lists
        notation = report.rubric.by_axis()["表記・形式"].reason
        assert notation.startswith(f"表記上の指摘が{len(report.style_issues)}件")
    _, again = await collect(Coordinator(sudachi), essay_request)
    assert again.rubric_cached  # the same backend on the same essay still hits the cache
    assert again.rubric == with_sudachi.rubric


async def test_the_rubric_cache_key_includes_the_models_and_the_essays_kind(
    resources: SmartAOResources, essay_request: EssayRequest
) -> None:
    _, first = await collect(Coordinator(resources), essay_request)
    assert not first.rubric_cached
    shoronbun = essay_request.model_copy(update={"kind": "小論文"})
    _, other_kind = await collect(Coordinator(resources), shoronbun)
    assert not other_kind.rubric_cached
    # another model for EvalAgent alone (here the demo's own script, named as an adapter): its own rubric
    models = {"EvalAgent": demo_model("eval")}
    _, other_model = await collect(Coordinator(resources, models=models), essay_request)
    assert not other_model.rubric_cached
    _, same = await collect(Coordinator(resources), essay_request)
    assert same.rubric_cached
