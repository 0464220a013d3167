"""Issue 32 part 7: an eval's failures teach an ACE playbook — the held-out score improves, every
step shows in the playbook diff, and no held-out label reaches a role that learns."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import Any

import pytest

from kanawa import FunctionLLM, ScriptedLLM
from kanawa.apps.ace.learning import LearningReport, alearn, learn, split_dataset
from kanawa.apps.ace.learning.demo import AMOUNT_RULE, DATE_RULE, demo_dataset, demo_models
from kanawa.apps.ace.learning.metering import MeteredModel
from kanawa.apps.ace.learning.render import to_html, to_markdown
from kanawa.apps.ace.learning.split import Split
from kanawa.evals import Case, Dataset, EqualsExpected
from kanawa.llm.testing.models import ModelRequest


def _prompts(*models: FunctionLLM) -> list[str]:
    """Every message text of every request the models were sent (system, user, tool results)."""
    texts = []
    for model in models:
        for request in model.requests:
            texts.extend(
                json.dumps(m, default=lambda o: getattr(o, "__dict__", str(o))) for m in request.messages
            )
            texts.append(request.last_user_text)
    return texts


async def _demo_run(**options: Any) -> tuple[LearningReport, tuple[FunctionLLM, FunctionLLM, FunctionLLM]]:
    roles = demo_models()
    report = await alearn(
        demo_dataset(),
        generator_model=roles[0],
        reflector_model=roles[1],
        curator_model=roles[2],
        **{"epochs": 3, **options},
    )
    return report, roles


async def test_held_out_score_improves_over_epochs_and_every_step_is_in_the_diff() -> None:
    report, _roles = await _demo_run()
    curve = report.curve
    assert [p.epoch for p in curve] == [0, 1, 2, 3]
    held = [p.held_out for p in curve]
    train = [p.train for p in curve]
    assert held[0] == 0.0  # the baseline fails everything: no format rule yet
    assert train[0] == 0.0
    assert held[1] > held[0]
    assert held[-1] == 1.0
    assert train[-1] == 1.0
    assert all(later >= earlier for earlier, later in itertools.pairwise(held))
    assert [p.bullets for p in curve] == [0, 2, 2, 2]
    # epoch 1 learned from exactly the failures that came before each rule existed
    first = report.epochs[1]
    assert [s.case for s in first.steps] == ["amount-train-1", "date-train-1"]
    assert first.operations["ADD"] == 2
    assert first.train.mean == pytest.approx(4 / 6)
    # every applied operation of every step is visible in that epoch's playbook diff
    for epoch in report.epochs[1:]:
        added = [line[1:] for line in epoch.playbook_diff.splitlines() if line.startswith("+[")]
        for step in epoch.steps:
            for entry in step.audit:
                if entry.status == "applied" and entry.type == "ADD":
                    shown = [line for line in added if entry.bullet_id and entry.bullet_id in line]
                    assert shown
                    assert entry.after in shown[0]
        if not epoch.steps:
            assert epoch.playbook_diff == ""
    assert AMOUNT_RULE in report.final_playbook
    assert DATE_RULE in report.final_playbook
    assert report.epochs[1].steps[0].feedback == "equals_expected: expected '¥1,350', got '1350 yen'"
    # kanawa.evals' paired comparison says the held-out gain is real, not noise
    verdict = report.held_out_verdict
    assert verdict is not None
    assert (verdict.baseline_epoch, verdict.final_epoch) == (0, 3)
    assert verdict.improved
    assert not verdict.regressed
    (scorer,) = verdict.comparison["scorers"]
    assert scorer["scorer"] == "equals_expected"
    assert scorer["n_cases"] == 6
    assert scorer["verdict"] == "improved"


async def test_no_held_out_label_reaches_any_prompt_of_any_role(tmp_path: Path) -> None:
    dataset = demo_dataset()
    split = split_dataset(dataset)
    held_labels = [c.expected_output for c in dataset.cases if c.metadata["split"] == "held_out"]
    train_labels = [c.expected_output for c in split.train]
    # with the per-epoch eval reports on: the held-out reasons go to disk, never back into learning
    report, roles = await _demo_run(split=split, eval_reports=tmp_path)
    prompts = _prompts(*roles)
    assert prompts
    assert all(isinstance(label, str) and len(label) >= 6 for label in held_labels)
    for label in held_labels:
        assert not any(label in text for text in prompts), label
    # the check can see labels: the training ones do reach the Reflector
    reflector_prompts = _prompts(roles[1])
    assert any(label in text for label in train_labels for text in reflector_prompts)
    # held-out results keep no reasons either
    for epoch in report.epochs:
        assert all(case.feedback is None for case in epoch.held_out.cases)
    assert set(report.held_out_cases) == {c.name for c in dataset.cases if c.metadata["split"] == "held_out"}
    assert "¥24,750" in (tmp_path / "held-out-epoch-0.json").read_text(encoding="utf-8")


async def test_the_leak_check_fails_when_held_out_cases_are_trained_on() -> None:
    """The control: the same check on a run that wrongly trains on every case finds the labels."""
    dataset = demo_dataset()
    held_first = sorted(dataset.cases, key=lambda c: c.metadata["split"] != "held_out")
    everything = Split(train=tuple(held_first), held_out=split_dataset(dataset).held_out)
    _report, roles = await _demo_run(split=everything, epochs=1)
    held_labels = [c.expected_output for c in dataset.cases if c.metadata["split"] == "held_out"]
    assert any(label in text for label in held_labels for text in _prompts(*roles))


async def test_label_free_setting_learns_from_the_scorers_reasons_alone() -> None:
    report, roles = await _demo_run(use_ground_truth=False, epochs=2)
    assert all("## Ground truth" not in r.last_user_text for r in roles[1].requests)
    assert roles[1].requests  # the Reflector did run, on feedback only
    assert report.curve[-1].held_out == 1.0


async def test_cost_per_role_counts_every_request() -> None:
    report, roles = await _demo_run(epochs=2)
    by_role = {c.role: c for c in report.cost}
    assert by_role["generator"].requests == len(roles[0].requests) == 12 * 3
    assert by_role["reflector"].requests == len(roles[1].requests) == 2
    assert by_role["curator"].requests == len(roles[2].requests) == 2
    assert by_role["generator"].input_tokens > 0
    assert by_role["generator"].cost_usd is None  # a scripted model has no price: unknown, not 0
    assert report.total_cost_usd is None
    per_epoch = [sum(c.requests for c in e.cost) for e in report.epochs]
    assert sum(per_epoch) == sum(c.requests for c in report.cost)


async def test_a_priced_model_gives_a_cost_in_usd() -> None:
    model = MeteredModel(ScriptedLLM(["hello"], model="gpt-4o-mini"))
    from kanawa.types import UserMessage

    await model.chat([UserMessage("hi")])
    assert model.spent.usage.requests == 1
    assert model.spent.cost_usd is not None
    assert model.spent.cost_usd > 0


def test_split_by_metadata_or_by_a_seeded_fraction() -> None:
    named = split_dataset(demo_dataset())
    assert [c.name for c in named.train][:2] == ["amount-train-1", "date-train-1"]
    assert len(named.train) == 6
    assert len(named.held_out) == 6
    plain = Dataset(
        name="plain",
        cases=[Case(name=f"c{i}", inputs=f"q{i}", expected_output=str(i)) for i in range(10)],
        scorers=[EqualsExpected()],
    )
    one, two = split_dataset(plain, seed=7), split_dataset(plain, seed=7)
    assert one.held_out.names == two.held_out.names
    assert len(one.held_out) == 3
    assert not set(one.held_out.names) & {c.name for c in one.train}
    with pytest.raises(ValueError, match="neither train nor held_out"):
        split_dataset(Dataset(name="x", cases=[Case(name="a", inputs="q", metadata={"split": "dev?"})]))
    with pytest.raises(ValueError, match="at least one training and one held-out"):
        split_dataset(Dataset(name="x", cases=[Case(name="a", inputs="q", metadata={"split": "train"})]))
    assert "expected" not in repr(one.held_out)
    assert not hasattr(one.held_out, "cases")


async def test_a_failing_reflector_is_recorded_and_the_run_goes_on() -> None:
    generator, _reflector, curator = demo_models()

    def broken(_request: ModelRequest) -> str:
        raise RuntimeError("reflector down")

    report = await alearn(
        demo_dataset(),
        generator_model=generator,
        reflector_model=FunctionLLM(broken, model="broken"),
        curator_model=curator,
        epochs=1,
    )
    steps = report.epochs[1].steps
    assert len(steps) == 6
    assert all(s.error for s in steps)
    assert report.curve[-1].held_out == 0.0
    assert report.curve[-1].bullets == 0
    assert report.held_out_verdict is not None
    assert not report.held_out_verdict.improved
    assert report.held_out_verdict.comparison["scorers"][0]["verdict"] == "no-real-change"


async def test_a_scorer_that_raises_is_a_failed_assertion_not_a_crash() -> None:
    class Broken:
        name = "broken"

        async def ascore(self, ctx: object) -> object:
            raise KeyError("boom")

    dataset = demo_dataset()
    dataset = Dataset(name=dataset.name, cases=dataset.cases, scorers=[EqualsExpected(), Broken()])
    roles = demo_models()
    report = await alearn(
        dataset, generator_model=roles[0], reflector_model=roles[1], curator_model=roles[2], epochs=1
    )
    assert report.curve[-1].held_out == pytest.approx(0.5)  # exact passes, broken fails
    assert report.curve[-1].held_out_pass_rate == 0.0
    assert "scorer error: KeyError" in report.epochs[1].steps[0].feedback


def test_learn_is_the_sync_face_and_refuses_a_running_loop() -> None:
    generator, reflector, curator = demo_models()
    report = learn(
        demo_dataset(), generator_model=generator, reflector_model=reflector, curator_model=curator, epochs=1
    )
    assert report.curve[-1].held_out == 1.0


async def test_learn_inside_a_running_loop_points_to_alearn() -> None:
    with pytest.raises(RuntimeError, match="alearn"):
        learn(demo_dataset(), model=demo_models()[0])


async def test_report_round_trips_and_renders_without_running_case_text(tmp_path: Any) -> None:
    report, _roles = await _demo_run(epochs=1)
    again = LearningReport.load(report.save(tmp_path / "r.json"))
    assert again == report
    markdown = to_markdown(report)
    assert "| epoch | train score | train pass | held-out score |" in markdown
    assert "```diff" in markdown
    assert "+[" in markdown
    hostile = report.model_copy(deep=True)
    hostile.epochs[1].held_out.cases[0].output = "<script>alert(1)</script>"
    hostile.epochs[1].steps[0].feedback = "<img src=x onerror=alert(1)>"
    page = to_html(hostile)
    assert "<script" not in page
    assert "<img" not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    for suffix in (".md", ".html"):
        assert report.save(tmp_path / f"r{suffix}").read_text(encoding="utf-8")
    with pytest.raises(ValueError, match=r"\.json, \.md or \.html"):
        report.save(tmp_path / "r.txt")


async def test_a_dataset_without_scorers_is_refused_before_any_model_call() -> None:
    roles = demo_models()
    bare = Dataset(
        name="bare",
        cases=[Case(name=n, inputs="q", metadata={"split": s}) for n, s in (("a", "train"), ("b", "test"))],
    )
    with pytest.raises(ValueError, match="no scorers"):
        await alearn(bare, generator_model=roles[0], reflector_model=roles[1], curator_model=roles[2])
    assert not roles[0].requests


async def test_learning_from_passes_tags_the_rules_helpful_and_the_diff_shows_each_vote() -> None:
    report, roles = await _demo_run(epochs=2, learn_from_passes=True)
    assert len(roles[1].requests) == 12  # every training case, both epochs, went to the Reflector
    second = report.epochs[2]
    assert second.operations["TAG"] == 6
    assert second.operations["ADD"] == 0
    # each rule was used by three passing cases in epoch 2: its counter moves by three in the diff
    assert "+[af-00001] helpful=5 harmful=0" in second.playbook_diff
    assert "-[af-00001] helpful=2 harmful=0" in second.playbook_diff
    assert "[af-00001] helpful=5" in report.final_playbook
    assert report.curve[-1].held_out == 1.0


def test_each_epoch_writes_eval_reports_that_compare_can_read(tmp_path: Path) -> None:
    from kanawa.evals import EvalReport

    generator, reflector, curator = demo_models()
    report = learn(
        demo_dataset(),
        generator_model=generator,
        reflector_model=reflector,
        curator_model=curator,
        epochs=2,
        eval_reports=tmp_path,
    )
    names = sorted(p.name for p in tmp_path.glob("*.json"))
    assert names == [f"{split}-epoch-{k}.json" for split in ("held-out", "train") for k in range(3)]
    before = EvalReport.load(tmp_path / "held-out-epoch-0.json")
    after = EvalReport.load(tmp_path / "held-out-epoch-2.json")
    assert before.case_names() == after.case_names() == report.held_out_cases
    assert all(v == [0.0] for v in before.per_case_scores()["equals_expected"].values())
    assert all(v == [1.0] for v in after.per_case_scores()["equals_expected"].values())
    # each case is an ordinary kanawa run of the Generator, traced: the drill-down has its timeline
    first = after.results[0]
    assert first.run_id is not None
    assert first.trace
    assert {r["run_id"] for r in first.trace} == {first.run_id}
    assert "llm_end" in {r["event"] for r in first.trace}
    page = (tmp_path / "held-out-epoch-2.html").read_text(encoding="utf-8")
    assert "amount-held-1" in page  # the evals HTML report, one per split and epoch
    assert "ace-generator" in page  # with the Generator's run in each case's timeline
    assert "<script" not in page.lower()
    train = EvalReport.load(tmp_path / "train-epoch-1.json")
    assert [r.passed for r in train.results] == [False, False, True, True, True, True]


async def test_grader_threshold_json_outputs_and_query_from_dict_inputs() -> None:
    from kanawa.apps.ace.learning.examine import Grader
    from kanawa.apps.ace.trajectory import Trajectory
    from kanawa.evals import Score, ScoreContext, scorer

    seen: list[str] = []

    @scorer
    def closeness(ctx: ScoreContext) -> Score:
        return Score("closeness", 0.8, "close enough")

    async def generate(query: str, _options: object) -> Trajectory:
        seen.append(query)
        return Trajectory(
            query=query,
            dataset="d",
            generated_answer="42",
            reasoning_steps=[],
            used_bullet_ids=[],
            status="success",
        )

    case = Case(name="n", inputs={"question": "six times seven?", "hint": "x"}, expected_output=42)
    dataset = Dataset(name="d", cases=[case], scorers=[EqualsExpected(), closeness])
    loose = await Grader(dataset, pass_threshold=0.75).agrade(case, generate)
    strict = await Grader(dataset, pass_threshold=0.9).agrade(case, generate)
    assert seen == ["six times seven?", "six times seven?"]  # the question field is the task
    assert loose.by_scorer == {"equals_expected": 1.0, "closeness": 0.8}  # "42" read as JSON equals 42
    assert loose.passed
    assert loose.score == pytest.approx(0.9)
    assert not strict.passed
    assert strict.feedback == "closeness: close enough"
    with pytest.raises(ValueError, match="pass_threshold"):
        Grader(dataset, pass_threshold=1.5)


# --- a rule in two parts, one fix per reflection: a small training set needs several epochs ---------

UPPER_RULE = "Capital answers: write the city name in uppercase letters."
PERIOD_RULE = "Capital answers: end the city name with a period."
CAPITALS = {"Japan": "tokyo", "France": "paris", "Italy": "rome", "Kenya": "nairobi", "Peru": "lima"}


def _section(prompt: str, title: str) -> str:
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", prompt, re.DOTALL | re.MULTILINE)
    return match.group(1).strip() if match else ""


def _two_part_models() -> tuple[FunctionLLM, FunctionLLM, FunctionLLM]:
    def generator(request: ModelRequest) -> str:
        prompt = request.last_user_text
        country = re.search(r"capital city of (\w+)", _section(prompt, "Task"))
        answer = CAPITALS[country.group(1)] if country else "?"
        bullets = re.findall(r"^\[([a-z]+-\d{5,})\] (.*)$", _section(prompt, "Playbook"), re.MULTILINE)
        cited = []
        for bullet_id, text in bullets:
            if text == UPPER_RULE:
                answer, cited = answer.upper(), [*cited, bullet_id]
        for bullet_id, text in bullets:
            if text == PERIOD_RULE:
                answer, cited = answer + ".", [*cited, bullet_id]
        return json.dumps({"reasoning": ["looked it up"], "bullet_ids": cited, "final_answer": answer})

    def reflector(request: ModelRequest) -> str:
        """One fix per reflection: the first scorer that failed."""
        feedback = _section(request.last_user_text, "Execution feedback").split("Reply with", 1)[0]
        first = feedback.strip().splitlines()[0].split(":", 1)[0] if feedback.strip() else ""
        insight = {"uppercase": UPPER_RULE, "final_period": PERIOD_RULE}.get(first, "")
        return json.dumps({"reasoning": first, "key_insight": insight, "bullet_tags": []})

    def curator(request: ModelRequest) -> str:
        reflection, _end = json.JSONDecoder().raw_decode(_section(request.last_user_text, "Reflection"))
        insight = reflection.get("key_insight", "")
        ops = [{"type": "ADD", "section": "ANSWER FORMAT", "content": insight}] if insight else []
        return json.dumps({"reasoning": "", "operations": ops})

    return FunctionLLM(generator), FunctionLLM(reflector), FunctionLLM(curator)


async def test_a_two_part_rule_learned_one_fix_per_epoch_raises_held_out_step_by_step() -> None:
    from kanawa.evals import Regex

    cases = [
        Case(
            name=country,
            inputs=f"What is the capital city of {country}?",
            expected_output=city.upper() + ".",
            metadata={"split": "train" if country == "Japan" else "held_out"},
        )
        for country, city in CAPITALS.items()
    ]
    dataset = Dataset(
        name="capitals",
        cases=cases,
        scorers=[
            Regex(r"^[^a-z]+$", name="uppercase"),
            Regex(r"\.$", name="final_period"),
            EqualsExpected(),
        ],
    )
    generator, reflector, curator = _two_part_models()
    report = await alearn(
        dataset, generator_model=generator, reflector_model=reflector, curator_model=curator, epochs=3
    )
    held = [round(p.held_out, 3) for p in report.curve]
    assert held == [0.0, 0.333, 1.0, 1.0]  # uppercase learned in epoch 1, the period in epoch 2
    assert [round(p.train, 3) for p in report.curve] == [0.0, 0.0, 0.333, 1.0]
    assert [p.bullets for p in report.curve] == [0, 1, 2, 2]
    assert [[e.after for e in s.audit] for s in report.epochs[1].steps] == [[UPPER_RULE]]
    assert [[e.after for e in s.audit] for s in report.epochs[2].steps] == [[PERIOD_RULE]]
    added = [line for line in report.epochs[2].playbook_diff.splitlines() if line.startswith("+[")]
    assert len(added) == 1
    assert added[0].endswith(PERIOD_RULE)


async def test_roles_need_a_model_and_model_strings_are_resolved() -> None:
    generator, _reflector, _curator = demo_models()
    with pytest.raises(ValueError, match="no model for the reflector"):
        await alearn(demo_dataset(), generator_model=generator, epochs=1)
    # "test" is kanawa's offline TestLLM: the run completes, and nothing is learned from its noise
    report = await alearn(demo_dataset(), model="test", epochs=1)
    assert {c.model for c in report.cost} == {"test"}
    assert report.curve[-1].held_out == 0.0
