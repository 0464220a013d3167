"""The rule that decides which tests run on 3.11 as well as 3.12 (``tests/support/scheduling.py``).

The 3.11 pass of ``make test`` is ``-m "not one_python or each_python"``. These tests keep the rule
honest: a module of ``src/kanawa`` that branches on the Python version must name the tests that take
its branch on 3.11, and those tests must really be in the 3.11 pass; every prefix the rule lists must
still name a test file or folder (a renamed module would otherwise leave the pass silently).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import kanawa
from tests.support import scheduling
from tests.support.scheduling import EACH_PYTHON, ONE_PYTHON, SLOW, VERSION_BRANCHES, arrange

SRC = Path(kanawa.__file__).parent
REPO = Path(__file__).resolve().parents[1]


def _branches_on_version(path: Path) -> bool:
    """Whether ``path`` compares ``sys.version_info`` (an ``if``/``else`` per Python version)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Compare):
            for side in (node.left, *node.comparators):
                if isinstance(side, ast.Attribute) and side.attr == "version_info":
                    return True
                if isinstance(side, ast.Subscript) and getattr(side.value, "attr", "") == "version_info":
                    return True
    return False


@dataclass
class _Item:
    """What :func:`arrange` reads of a collected test: its node id, and the markers it is given."""

    nodeid: str
    markers: set[str] = field(default_factory=set)
    fixturenames: tuple[str, ...] = ()

    def add_marker(self, marker: pytest.MarkDecorator) -> None:
        self.markers.add(marker.name)


def _runs_on_311(nodeid: str) -> bool:
    item = _Item(nodeid)
    arrange([item])  # type: ignore[list-item]
    return "one_python" not in item.markers or "each_python" in item.markers


def test_every_version_branch_in_src_names_tests_that_take_it_on_311() -> None:
    branching = {
        path.relative_to(SRC.parent).as_posix() for path in SRC.rglob("*.py") if _branches_on_version(path)
    }
    assert branching == set(VERSION_BRANCHES), (
        "a module of src/kanawa branches on sys.version_info: name the tests that take its 3.11 "
        "branch in VERSION_BRANCHES (tests/support/scheduling.py)"
    )
    for module, tests in VERSION_BRANCHES.items():
        assert tests, module
        for test in tests:
            assert (REPO / test).exists(), test
            assert _runs_on_311(f"{test}::test_x"), f"{test} ({module}) must be in the 3.11 pass"


def test_a_planted_version_branch_is_found(tmp_path: Path) -> None:
    planted = tmp_path / "planted.py"
    planted.write_text("import sys\nif sys.version_info >= (3, 12):\n    X = 1\n", encoding="utf-8")
    assert _branches_on_version(planted)
    planted.write_text("import sys\nX = sys.version_info[:2] < (3, 12)\n", encoding="utf-8")
    assert _branches_on_version(planted)
    planted.write_text("import sys\nX = sys.platform\n", encoding="utf-8")
    assert not _branches_on_version(planted)


@pytest.mark.parametrize("name", ["ONE_PYTHON", "EACH_PYTHON", "SLOW"])
def test_every_listed_prefix_names_a_test_file_or_folder(name: str) -> None:
    for prefix in getattr(scheduling, name):
        assert (REPO / prefix.split("::")[0]).exists(), f"{name}: {prefix} names no test file or folder"


def test_each_python_only_overrides_a_one_python_prefix() -> None:
    for prefix in EACH_PYTHON:
        assert prefix.startswith(ONE_PYTHON) or prefix.startswith(SLOW), prefix


@pytest.mark.parametrize(
    ("nodeid", "on_311"),
    [
        ("tests/loop/test_runner.py::test_x", True),  # a core layer
        ("tests/new_area/test_new.py::test_x", True),  # anywhere new: both Pythons
        ("tests/docs/test_doc_blocks.py::test_x[docs/guide.md:1]", True),
        ("tests/server/test_cli.py::test_x", False),  # transport over the same code
        ("tests/server/protocols/test_agui.py::test_x", False),
        ("tests/cli/test_tables.py::test_x", False),
        ("tests/server/test_direct.py::test_x", True),  # the server's sends through kanawa._eager
        ("tests/server/test_store.py::test_x[redis]", True),
        ("tests/packaging/test_wheel.py::test_x", False),  # slow: builds for both Pythons itself
    ],
)
def test_a_test_is_classified_by_where_it_lives(nodeid: str, on_311: bool) -> None:
    assert _runs_on_311(nodeid) is on_311
