"""How the suite is split between pytest-xdist workers, and which tests run on both Pythons.

``make test`` runs each Python's suite with ``-n 2 --dist loadgroup``: a test without a group goes to
whichever worker is free; tests in one ``xdist_group`` all go to the same worker, in order. The groups
are given here, at collection, from what a test uses — never by hand in the test modules:

- a test that uses an expensive *session* service (the Celery cluster, the wheel and its venvs, the
  pgvector PostgreSQL) joins that service's group, so the service starts once per run, not once per
  worker;
- a test that uses a *module*, *class* or *package* fixture (a served app, a sidecar, a browser page)
  joins its module's group, so that fixture starts once, as it does without xdist.

The order in which work is handed out is the collection order, so the groups known to take longest
(:data:`SLOW_FIRST`) are moved to the front: the long tail of a run is many short tests spread over
both workers, not one long group started last.

Markers (registered in ``tests/conftest.py``):

- ``slow`` — set here on the tests of :data:`SLOW` and :data:`SLOW_GROUPS`: their time goes to
  programs outside the interpreter under test (Chromium, Node clients, Celery workers, mypy, ``uv``
  building wheels), so a second run on another Python repeats the same outside work. ``make test``
  runs them on 3.12 only.
- ``each_python`` — a slow test that must still run on 3.11 too, because what it checks goes through
  a path that differs by Python version (``kanawa._eager``: 3.12's eager tasks against 3.11's
  hand-driven first step, under the server's sends).
"""

from __future__ import annotations

import pytest

SERVICE_GROUPS: dict[str, str] = {
    "celery_cluster": "celery",
    "dist": "wheel",
    "lock_constraints": "wheel",
    "wheel_envs": "wheel",
    "smartao_env": "wheel",
    "pgvector_url": "pgvector",
}
"""A session fixture that starts something expensive → the group of every test that uses it."""

SLOW_FIRST: tuple[str, ...] = (
    "tests/packaging/test_install_docs.py",
    "wheel",
    "tests/difypkg/test_install.py",
    "celery",
    "tests/mcp_server/test_stdio.py",
    "tests/server/test_deployment.py",
    "tests/test_examples.py",
    "pgvector",
    "tests/testing/test_pytest_plugin.py",
    "tests/server/test_hostile_clients.py",
    "tests/server/test_durable.py",
)
"""Groups and modules handed out first, longest first (from ``--durations`` of the 3.12 suite)."""

SLOW: tuple[str, ...] = (
    # wheels, sdists and fresh venvs built with uv (these build for 3.11 and 3.12 themselves)
    "tests/packaging/",
    "tests/difypkg/",  # Dify plugin packages installed into fresh venvs (the Dify SDK is 3.12-only)
    # official Node clients, the MCP conformance runner and headless Chromium against a served app
    "tests/server/protocols/test_node_clients.py",
    "tests/server/protocols/test_ai_sdk_clients.py",
    "tests/server/protocols/test_a2a_node.py",
    "tests/server/protocols/test_agui_page.py",
    "tests/mcp_server/test_conformance.py",
    "tests/server/test_page.py",
    "tests/apps/smartao/test_page.py",
    # the Dockerfile's steps followed into a fresh venv (on 3.11 it checks less: the image is 3.12)
    "tests/server/test_deployment.py",
    # mypy on an example, twice (`make typecheck` checks src and examples for both Pythons)
    "tests/test_examples.py::test_mypy_strict_accepts_the_typed_example_and_catches_misused_deps",
)
"""Node ids (or their prefixes) of the ``slow`` tests (module docstring); every test of the ``celery``
group, and every ``celery`` case of a test parametrized over the stores, is slow as well (Celery
worker processes)."""

SLOW_GROUPS: frozenset[str] = frozenset({"celery"})

EACH_PYTHON: tuple[str, ...] = ()
"""Slow tests (node id prefixes) that run on 3.11 as well (module docstring). None today: the
version-dependent path (``kanawa._eager``) is the in-process server's, which every server test on
3.11 takes; the slow tests add outside programs, not another path through it."""

_WIDE_SCOPES = frozenset({"module", "class", "package"})


def group_of(item: pytest.Item) -> str | None:
    """The xdist group ``item`` belongs to (module docstring), or None to go to any free worker."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return None
    for name in item.fixturenames:  # type: ignore[attr-defined]
        if name in SERVICE_GROUPS:
            return SERVICE_GROUPS[name]
    for definitions in info.name2fixturedefs.values():
        if any(definition.scope in _WIDE_SCOPES for definition in definitions):
            return _module_path(item)
    return None


def _on_celery(item: pytest.Item) -> bool:
    """A test parametrized over the stores whose ``celery`` case it is (it asks for the cluster
    itself, by name, so the fixture closure does not show it)."""
    callspec = getattr(item, "callspec", None)
    return callspec is not None and "celery" in callspec.id.split("-")


def _module_path(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]


def _rank(item: pytest.Item, group: str | None) -> int:
    path = _module_path(item)
    for rank, key in enumerate(SLOW_FIRST):
        if key == group or path == key:
            return rank
    return len(SLOW_FIRST)


def arrange(items: list[pytest.Item]) -> None:
    """Group, mark and reorder ``items`` in place (module docstring); the order within a group and
    among the rest is kept."""
    ranked: list[tuple[int, int, pytest.Item]] = []
    for position, item in enumerate(items):
        group = group_of(item)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))
        if item.nodeid.startswith(SLOW) or group in SLOW_GROUPS or _on_celery(item):
            item.add_marker(pytest.mark.slow)
            if item.nodeid.startswith(EACH_PYTHON) and EACH_PYTHON:
                item.add_marker(pytest.mark.each_python)
        ranked.append((_rank(item, group), position, item))
    ranked.sort(key=lambda entry: entry[:2])
    items[:] = [item for _, _, item in ranked]


__all__ = ["EACH_PYTHON", "SERVICE_GROUPS", "SLOW", "SLOW_FIRST", "SLOW_GROUPS", "arrange", "group_of"]
