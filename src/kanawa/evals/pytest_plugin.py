"""The pytest plugin: a dataset file becomes test items, one per case.

Registered as a ``pytest11`` entry point (``kanawa_evals``); it only acts on files named
``*.eval.yaml``, ``*.eval.yml`` or ``*.eval.json`` in the collected paths, so it costs nothing
elsewhere. Such a file is an ordinary dataset whose ``target:`` names the agent
(``myapp.agents:support``). Each case is a test: it runs as a kanawa run and fails when the run
errs or an assertion fails, with each failing assertion's reason as the failure message (no
traceback); scores are attached to the test's ``user_properties`` (JUnit XML shows them).

Offline CI: with ``--kanawa-record`` (the option of :mod:`kanawa.testing.pytest_plugin`), each
case's provider traffic lives in ``cassettes/<dataset stem>/<case>.yaml`` beside the dataset; the
default mode ``none`` replays (a missing cassette is a clear failure), ``once`` records what is
missing. A dataset with no cassettes directory and the default mode runs live (for test models).

The ``kanawa_eval`` fixture runs a whole dataset from a test and returns the
:class:`~kanawa.evals.report.EvalReport`, for assertions over the eval as a whole.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from kanawa.evals.cases import Case, Dataset
    from kanawa.evals.report import CaseResult, EvalReport

_SUFFIXES = (".eval.yaml", ".eval.yml", ".eval.json")
_UNSAFE = re.compile(r"[^A-Za-z0-9_.\-\[\]=,]+")


def pytest_collect_file(parent: pytest.Collector, file_path: Path) -> pytest.Collector | None:
    if file_path.name.endswith(_SUFFIXES):
        return EvalDatasetFile.from_parent(parent, path=file_path)
    return None


class EvalDatasetFile(pytest.File):
    """A dataset file; its cases are the items."""

    def collect(self) -> Iterator[pytest.Item]:
        from kanawa.evals.cases import Dataset, DatasetFileError

        try:
            dataset = Dataset.from_file(self.path)
        except DatasetFileError as exc:
            raise self.CollectError(str(exc)) from None
        if not dataset.target:
            raise self.CollectError(f"{self.path.name}: an eval file needs target: module:attribute")
        for case in dataset.cases:
            yield EvalCaseItem.from_parent(self, name=case.name, dataset=dataset, case=case)


class EvalCaseFailure(Exception):  # noqa: N818 - reads as the outcome it reports
    """A case's run erred or one of its assertions failed."""


class EvalCaseItem(pytest.Item):
    """One case of a dataset file, run against the file's target."""

    def __init__(self, *, dataset: Dataset[Any, Any], case: Case[Any, Any], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.dataset = dataset
        self.case = case

    def runtest(self) -> None:
        from kanawa.evals.cases import Dataset
        from kanawa.evals.runner import Eval

        one = Dataset[Any, Any](
            name=self.dataset.name,
            cases=[self.case],
            scorers=self.dataset.scorers,
            target=self.dataset.target,
        )
        report = Eval(one, self.dataset.target, progress=False, **self._cassette()).run()
        result = report.results[0]
        for outcome in result.outcomes:
            value = getattr(outcome, "value", None)
            if value is not None:
                self.user_properties.append((outcome.name, value))
        if not result.passed:
            raise EvalCaseFailure(_failure_text(result))

    def _cassette(self) -> dict[str, Any]:
        mode = self.config.getoption("--kanawa-record", default="none") or "none"
        folder = self.path.parent / "cassettes" / self.path.name.split(".eval.")[0]
        if mode == "none" and not folder.is_dir():
            return {}
        return {"cassette": folder / f"{_UNSAFE.sub('_', self.case.name)}.yaml", "record": mode}

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, EvalCaseFailure):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"eval case {self.case.name}"


def _failure_text(result: CaseResult) -> str:
    from kanawa.evals.scoring import Assertion

    lines = [f"case {result.case!r} failed"]
    if result.error:
        lines.append(f"  error: {result.error}")
    for outcome in result.outcomes:
        if isinstance(outcome, Assertion) and not outcome.passed:
            lines.append(f"  {outcome.name}: {outcome.reason}")
    return "\n".join(lines)


@pytest.fixture
def kanawa_eval() -> Callable[..., EvalReport]:
    """``kanawa_eval(dataset, target, **options)``: run an eval (sync) and return its report."""
    from kanawa.evals.runner import Eval

    def run(dataset: Dataset[Any, Any] | str | Path, target: Any = None, **options: Any) -> EvalReport:
        from kanawa.evals.cases import Dataset

        data = dataset if isinstance(dataset, Dataset) else Dataset.from_file(dataset)
        chosen = target if target is not None else data.target
        if chosen is None:
            raise ValueError("kanawa_eval needs a target (or a dataset with target:)")
        options.setdefault("progress", False)
        return Eval(data, chosen, **options).run()

    return run


__all__ = ["EvalCaseFailure", "EvalCaseItem", "EvalDatasetFile", "kanawa_eval", "pytest_collect_file"]
