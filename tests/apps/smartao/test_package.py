"""The public names of ``kanawa.apps.smartao`` (issue 12), loaded lazily: importing the package costs
nothing a run may not need."""

from __future__ import annotations

import subprocess
import sys

import kanawa.apps.smartao as smartao

PUBLIC = [
    "ChangeOp",
    "Change",
    "PatchJSON",
    "Coordinator",
    "DraftAgent",
    "StyleAgent",
    "RefAgent",
    "GuardAgent",
    "EvalAgent",
    "patch_from_issues",
]


def test_public_names_are_exported() -> None:
    for name in PUBLIC:
        assert getattr(smartao, name).__name__ == name
        assert name in smartao.__all__
    assert smartao.PatchJSON.from_changes("ab", []).apply("ab") == "ab"


def test_importing_the_package_loads_nothing_heavy() -> None:
    code = (
        "import sys, kanawa, kanawa.apps.smartao as s; "
        "heavy = [m for m in ('pydantic', 'datasketch', 'sudachipy', 'numpy', 'kanawa.loop.runner') "
        "if m in sys.modules]; "
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
