"""The shared skeleton: datasets round-trip through files, specs build scorers, reports round-trip."""

from __future__ import annotations

from pathlib import Path

import pytest

from kanawa.evals import (
    Assertion,
    Case,
    CaseResult,
    Contains,
    Dataset,
    DatasetFileError,
    EvalReport,
    ReportFileError,
    Score,
    ScorerSpec,
)
from kanawa.types import Usage


def _dataset() -> Dataset[str, str]:
    return Dataset[str, str](
        name="capitals",
        cases=[
            Case(name="japan", inputs="Capital of Japan?", expected_output="Tokyo", metadata={"tag": "geo"}),
            Case(
                name="france",
                inputs="Capital of France?",
                expected_output="Paris",
                scorers=[ScorerSpec(type="contains", value="Paris")],
            ),
        ],
        scorers=[ScorerSpec(type="equals_expected")],
    )


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_dataset_round_trips_through_a_file(tmp_path: Path, suffix: str) -> None:
    path = _dataset().to_file(tmp_path / f"d{suffix}")
    loaded = Dataset.from_file(path)
    assert loaded.name == "capitals"
    assert [c.name for c in loaded.cases] == ["japan", "france"]
    assert loaded.cases[1].scorers == [ScorerSpec(type="contains", value="Paris")]
    assert loaded.cases[0].metadata == {"tag": "geo"}
    assert loaded.to_dict() == _dataset().to_dict()


def test_bad_dataset_files_say_what_is_wrong(tmp_path: Path) -> None:
    bad = tmp_path / "d.yaml"
    bad.write_text("name: x\ncases:\n  - inputs: hi\n", encoding="utf-8")
    with pytest.raises(DatasetFileError, match=r"cases\.0\.name"):
        Dataset.from_file(bad)
    dup = tmp_path / "dup.json"
    dup.write_text('{"name": "x", "cases": [{"name": "a", "inputs": 1}, {"name": "a", "inputs": 2}]}')
    with pytest.raises(DatasetFileError, match="duplicate case name 'a'"):
        Dataset.from_file(dup)
    (tmp_path / "d.txt").write_text("x")
    with pytest.raises(DatasetFileError, match=r"\.yaml, \.yml or \.json"):
        Dataset.from_file(tmp_path / "d.txt")
    (tmp_path / "broken.yaml").write_text("name: [", encoding="utf-8")
    with pytest.raises(DatasetFileError, match="not valid YAML"):
        Dataset.from_file(tmp_path / "broken.yaml")


def test_unknown_scorer_type_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown scorer type 'contans'"):
        ScorerSpec(type="contans", value="x").build()
    with pytest.raises(ValueError, match="bad parameters for scorer 'contains'"):
        ScorerSpec(type="contains", nope=1).build()


def test_python_scorer_objects_cannot_be_saved(tmp_path: Path) -> None:
    data = Dataset(name="x", cases=[Case(name="a", inputs="q", scorers=[Contains("z")])])
    with pytest.raises(ValueError, match="Python object"):
        data.to_file(tmp_path / "x.json")


def test_json_schema_lists_scorer_types() -> None:
    schema = Dataset.json_schema()
    enum = schema["properties"]["scorers"]["items"]["properties"]["type"]["enum"]
    assert {"contains", "regex", "tool_calls", "equals_expected", "numeric", "schema"} <= set(enum)
    assert schema["$defs"]["Case"]["required"] == ["name", "inputs"]


def test_report_round_trips_and_pairs_scores(tmp_path: Path) -> None:
    report = EvalReport(name="capitals", target="myapp:agent", repeat=2)
    for repeat in (0, 1):
        report.results.append(
            CaseResult(
                case="japan",
                repeat=repeat,
                output={"city": "Tokyo"},
                text="Tokyo",
                outcomes=[
                    Assertion("equals_expected", repeat == 0, "r"),
                    Score("quality", 0.5 + repeat / 4, "q"),
                ],
                usage=Usage(input_tokens=3, output_tokens=2, requests=1),
                cost_usd=0.001,
                duration_ms=12.5,
            )
        )
    loaded = EvalReport.load(report.save(tmp_path / "r.json"))
    assert loaded.to_dict() == report.to_dict()
    assert loaded.per_case_scores() == {
        "equals_expected": {"japan": [1.0, 0.0]},
        "quality": {"japan": [0.5, 0.75]},
    }
    assert loaded.pass_rate == 0.5
    assert loaded.total_usage.total_tokens == 10
    (tmp_path / "x.json").write_text('{"name": "x"}')
    with pytest.raises(ReportFileError, match="not a kanawa eval report"):
        EvalReport.load(tmp_path / "x.json")
