"""Part 6: Reflector, Curator and the AdaptationWorkflow end to end with FunctionLLM roles — the
playbook measurably changes and the answers get better."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kanawa import FunctionLLM, ScriptedLLM
from kanawa.apps.ace.curator import Curator
from kanawa.apps.ace.demo import DEMO_DATASET, RULES, TASKS, demo_models, seed_playbook
from kanawa.apps.ace.generator import GeneratorAgent
from kanawa.apps.ace.operations import AddOp, TagOp
from kanawa.apps.ace.playbook import Bullet, Playbook
from kanawa.apps.ace.prompt_builder import PromptBuilder
from kanawa.apps.ace.reflector import BulletTag, Reflection, Reflector
from kanawa.apps.ace.search.hybrid import HybridSearch
from kanawa.apps.ace.store.json_store import JsonPlaybookStore
from kanawa.apps.ace.trajectory import Trajectory
from kanawa.apps.ace.workflow import AdaptationWorkflow, Sample, StepRecord, load_jsonl


def _trajectory(ids: list[str]) -> Trajectory:
    return Trajectory(
        query="q",
        dataset="d",
        generated_answer="300",
        reasoning_steps=["x"],
        used_bullet_ids=ids,
        status="success",
    )


def _workflow(store: JsonPlaybookStore, search: HybridSearch, **kwargs: object) -> AdaptationWorkflow:
    generator_llm, reflector_llm, curator_llm = demo_models()
    generator = GeneratorAgent(store, search, generator_llm, PromptBuilder(prompts_dir=None))
    return AdaptationWorkflow(
        generator,
        Reflector(reflector_llm),
        Curator(curator_llm, search=search),
        store,
        **kwargs,  # type: ignore[arg-type]
    )


async def test_reflector_works_from_ground_truth_and_keeps_only_tags_of_used_bullets() -> None:
    reply = Reflection(
        reasoning="r",
        error_identification="wrong factor",
        root_cause_analysis="misleading bullet",
        correct_approach="multiply by 1000",
        key_insight="1 km = 1000 m",
        bullet_tags=[BulletTag(id="shr-00001", tag="harmful"), BulletTag(id="zzz-00009", tag="helpful")],
    )
    llm = ScriptedLLM([reply.model_dump_json()])
    bullet = Bullet(id="shr-00001", section="S", content="multiply by 100")
    reflection = await Reflector(llm).reflect(
        _trajectory(["shr-00001"]), bullets=[bullet], ground_truth="3000"
    )
    assert reflection.bullet_tags == [BulletTag(id="shr-00001", tag="harmful")]
    assert reflection.key_insight == "1 km = 1000 m"
    prompt = llm.requests[0].last_user_text
    assert "## Ground truth\n3000" in prompt
    assert "[shr-00001] multiply by 100" in prompt


async def test_reflector_works_with_execution_feedback_only_and_needs_one_of_them() -> None:
    llm = ScriptedLLM([Reflection(key_insight="check the status code").model_dump_json()])
    reflection = await Reflector(llm).reflect(_trajectory([]), feedback="HTTP 500 from the payment API")
    assert reflection.key_insight == "check the status code"
    assert "## Execution feedback\nHTTP 500" in llm.requests[0].last_user_text
    with pytest.raises(ValueError, match="needs ground_truth or execution feedback"):
        await Reflector(ScriptedLLM([])).reflect(_trajectory([]))


async def test_curator_emits_tags_and_validated_deltas(playbook: Playbook) -> None:
    proposed = {
        "operations": [
            {"type": "ADD", "section": "OTHERS", "content": "one"},
            {"type": "ADD", "section": "OTHERS", "content": "two"},
            {"type": "UPDATE", "bullet_id": "ghost-00001", "content": "x"},
            {"type": "REMOVE", "bullet_id": "shr-00002"},
        ]
    }
    curator = Curator(ScriptedLLM([json.dumps(proposed)]), max_new_bullets=1)
    reflection = Reflection(bullet_tags=[BulletTag(id="shr-00001", tag="helpful")])
    ops = await curator.curate(reflection, _trajectory(["shr-00001"]), playbook)
    assert [op.type for op in ops] == ["TAG", "ADD", "REMOVE"]
    assert isinstance(ops[1], AddOp)
    assert ops[1].content == "one"


async def test_refine_merges_near_duplicates_by_embedding_similarity(dense_search: HybridSearch) -> None:
    playbook = Playbook(
        bullets=[
            Bullet(
                id="shr-00001",
                section="S",
                content="Always check the total count before answering.",
                helpful=2,
            ),
            Bullet(
                id="shr-00002",
                section="S",
                content="Always check the total count before you answer!",
                helpful=1,
            ),
            Bullet(id="shr-00003", section="S", content="支払いの前に金額を確認する。"),
        ]
    )
    ops = await Curator(None, search=dense_search, merge_threshold=0.95).refine(playbook)
    assert [op.model_dump(include={"type", "bullet_ids"}) for op in ops] == [
        {"type": "MERGE", "bullet_ids": ["shr-00001", "shr-00002"]}
    ]
    assert await Curator(None, search=dense_search, merge_threshold=0.999).refine(playbook) == []


async def test_refine_keeps_the_playbook_within_its_token_budget(playbook: Playbook) -> None:
    ops = await Curator(None, token_budget=60).refine(playbook)
    assert ops
    assert all(op.type == "REMOVE" for op in ops)
    assert ops[0].bullet_id == "shr-00002"  # type: ignore[union-attr]  # the most harmful goes first
    assert "shr-00001" not in {op.bullet_id for op in ops}  # type: ignore[union-attr]


async def test_offline_adaptation_end_to_end_changes_the_playbook_and_improves_accuracy(
    tmp_path: Path,
) -> None:
    store = JsonPlaybookStore(root=tmp_path)
    await store.asave(DEMO_DATASET, seed_playbook())
    seen: list[StepRecord] = []
    workflow = _workflow(store, HybridSearch(embedder=None), on_step=seen.append)
    report = await workflow.run_offline(DEMO_DATASET, TASKS, epochs=2)

    first, second = report.epochs
    assert first.accuracy == 0.5
    assert second.accuracy == 1.0
    assert (report.bullets_before, report.bullets_after) == (2, 5)
    assert first.operations["ADD"] == 3
    assert len(seen) == 12
    assert all(record.error is None for record in seen)

    final = await store.aload(DEMO_DATASET)
    contents = {b.content for b in final}
    assert {rule for _section, rule, _marker in RULES.values()} <= contents
    assert final.get("shr-00001").harmful >= 1  # type: ignore[union-attr]  # the misleading bullet
    learned = [b for b in final if b.content in {r for _s, r, _m in RULES.values()}]
    assert all(b.helpful >= 1 for b in learned)  # used and confirmed in epoch 2
    assert "計算ルール" in final.sections
    # every change is audited, one record per operation
    audits = [entry for record in seen for entry in record.audit]
    assert {entry.type for entry in audits} >= {"ADD", "TAG"}
    assert second.bullets_after == 5


async def test_online_mode_answers_with_the_current_playbook_then_learns(tmp_path: Path) -> None:
    store = JsonPlaybookStore(root=tmp_path)
    report = await _workflow(store, HybridSearch(embedder=None)).run_online(DEMO_DATASET, TASKS)
    assert [step.correct for step in report.steps] == [False, False, False, True, True, True]
    assert report.bullets_after == 3


async def test_a_failing_sample_is_recorded_and_the_run_goes_on(tmp_path: Path) -> None:
    store = JsonPlaybookStore(root=tmp_path)
    generator = GeneratorAgent(
        store, HybridSearch(embedder=None), FunctionLLM(lambda r: "42"), PromptBuilder(None)
    )
    broken = Reflector(FunctionLLM(lambda r: RuntimeError("reflector down")))
    workflow = AdaptationWorkflow(generator, broken, Curator(None), store)
    report = await workflow.run_offline(
        "x", [Sample(question="q", answer="42"), Sample(question="r", answer="1")]
    )
    assert [s.correct for s in report.steps] == [True, False]
    assert all(s.error is not None and "reflector down" in s.error for s in report.steps)


def test_load_jsonl_accepts_aliases_and_names_bad_lines(tmp_path: Path) -> None:
    path = tmp_path / "train.jsonl"
    path.write_text(
        '{"question": "a", "answer": 3}\n\n{"task": "b", "ground_truth": "x", "feedback": "ok"}\n'
    )
    samples = load_jsonl(path)
    assert [(s.question, s.answer, s.feedback) for s in samples] == [("a", "3", None), ("b", "x", "ok")]
    path.write_text('{"question": "a"}\n{"answer": "no question"}\n')
    with pytest.raises(ValueError, match=r"train.jsonl:2: not a sample"):
        load_jsonl(path)


def test_tag_op_is_what_reflector_tags_become() -> None:
    assert TagOp(bullet_id="a-00001", tag="harmful").count == 1


async def test_refine_with_focus_compares_only_the_touched_bullets(dense_search: HybridSearch) -> None:
    playbook = Playbook(
        bullets=[
            Bullet(id="shr-00001", section="S", content="Always check the total count before answering."),
            Bullet(id="shr-00002", section="S", content="Always check the total count before you answer!"),
            Bullet(id="shr-00003", section="S", content="Log in again when a 401 comes back."),
            Bullet(id="shr-00004", section="S", content="Log in again when a 401 is returned."),
        ]
    )
    curator = Curator(None, search=dense_search, merge_threshold=0.95)
    everything = await curator.refine(playbook)
    focused = await curator.refine(playbook, focus={"shr-00004"})
    assert len(everything) == 2
    assert [op.model_dump(include={"bullet_ids"}) for op in focused] == [
        {"bullet_ids": ["shr-00003", "shr-00004"]}
    ]
