"""How the suite is split between pytest-xdist workers, and which tests run on both Pythons.

``make test`` runs each Python's suite with ``-n 2 --dist loadgroup``: a test without a group goes to
whichever worker is free; tests in one ``xdist_group`` all go to the same worker, in order. The groups
are given here, at collection, from what a test uses — never by hand in the test modules:

- a test that uses an expensive *session* service (the Celery cluster, the wheel and its venvs, the
  pgvector PostgreSQL) joins that service's group, so the service starts once per run, not once per
  worker — also the ``celery`` case of a test parametrized over the stores, which asks for the
  cluster by name at run time;
- a test that uses a *module*, *class* or *package* fixture (a served app, a sidecar, a browser page)
  joins its module's group, so that fixture starts once, as it does without xdist.

The order in which work is handed out is the collection order, so the groups known to take longest
(:data:`SLOW_FIRST`) are moved to the front: the long tail of a run is many short tests spread over
both workers, not one long group started last.

Markers (registered in ``tests/conftest.py``):

- ``slow`` — set here on the tests of :data:`SLOW` and :data:`SLOW_GROUPS`: their time goes to
  programs outside the interpreter under test (Chromium, Node clients, Celery workers, mypy, ``uv``
  building wheels), so a second run on another Python repeats the same outside work.
- ``one_python`` — what the test checks runs the same code on 3.11 and 3.12, so ``make test`` runs it
  on 3.12 only: every ``slow`` test, and every test under :data:`ONE_PYTHON` (the transports, the
  CLI, the applications' pages, the suite's own tools, the static checks of the sources).
- ``each_python`` — a test under :data:`ONE_PYTHON` (or a slow one) that still runs on 3.11, because
  it is the one that takes a version-dependent path there (:data:`EACH_PYTHON`).

The 3.11 suite is ``-m "not one_python or each_python"``. A new test is classified by where it lives:
anywhere outside :data:`ONE_PYTHON` it runs on both Pythons (the safe default).

What differs between the two Pythons, and so what the 3.11 pass is for (measured for issue 31):

- the one version branch in ``src/kanawa``: :mod:`kanawa._eager` (3.12's eager tasks against 3.11's
  hand-driven first step), taken by the server's direct sends (``server/http/direct.py``) —
  ``tests/test_eager.py`` tests it itself, and the server modules of :data:`EACH_PYTHON` through the
  server; :data:`VERSION_BRANCHES` lists it, and a test fails when another module branches on
  ``sys.version_info`` without being listed there;
- the standard library under the same code: ``asyncio.TaskGroup`` and ``asyncio.timeout`` (the tool
  invoker, the loop's tool executor, the provider adapter's deadlines, the eval runner, the server's
  event stream, the A2A client) are implemented differently in 3.11 and 3.12 — the core layers' tests
  (``tests/llm``, ``tests/loop``, ``tests/agents``, ``tests/tools``, ``tests/trace``, ``tests/evals``,
  ``tests/prompts``) and the A2A client's (``tests/a2a``) run on both;
- the packages ``uv.lock`` resolves differently: numpy 2.4 / 2.5 and scipy 1.17 / 1.18 (memory
  embeddings and stores, ACE search: ``tests/agents/memory``, ``tests/apps/ace``), ``async-timeout``
  under redis-py on Python < 3.11.3 (the Redis run store: ``tests/server/test_store.py``), the Dify SDK
  (3.12 only: those tests skip on 3.11), pymdown-extensions (the docs build, checked on 3.12);
- every copyable block of the docs and README must run on 3.11 as written (``tests/docs``,
  ``tests/test_examples.py``).

Everything else is transport and presentation over the same code with the same packages: HTTP and
protocol endpoints, the MCP server, the CLI, SmartAO's pages, the pytest plugin — on 3.11 they cost
about 300 s of test time (40 % of that suite) and reach no path the list above does not.
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
group (which holds every ``celery`` case of a test parametrized over the stores) is slow as well
(Celery worker processes)."""

SLOW_GROUPS: frozenset[str] = frozenset({"celery"})

ONE_PYTHON: tuple[str, ...] = (
    "tests/server/",  # HTTP, SSE and the protocol endpoints over the run layer (module docstring)
    "tests/mcp_server/",
    "tests/cli/",
    "tests/apps/smartao/",  # SmartAO's agents run on the core layers, tested on both
    "tests/testing/",  # the suite's pytest plugin and cassettes
    "tests/test_layers.py",  # reads the sources with ast: the same check on any Python
)
"""Node id prefixes of tests that run the same code on both Pythons: ``one_python`` (3.12 only)."""

EACH_PYTHON: tuple[str, ...] = (
    "tests/server/test_direct.py",  # the direct sends, through kanawa._eager
    "tests/server/test_api.py",  # runs and their streams through the in-process server
    "tests/server/test_resume.py",
    "tests/server/test_event_stream.py",  # asyncio.timeout around the stream's waits
    "tests/server/test_store.py",  # the Redis run store: redis-py with async-timeout on 3.11.2
)
"""Node id prefixes under :data:`ONE_PYTHON` that run on 3.11 as well (module docstring)."""

VERSION_BRANCHES: dict[str, tuple[str, ...]] = {
    "kanawa/_eager.py": ("tests/test_eager.py", "tests/server/test_direct.py"),
}
"""Every module of ``src/kanawa`` that branches on ``sys.version_info`` → the tests that take its
branch on 3.11 (``tests/test_scheduling.py`` keeps this list whole)."""

_WIDE_SCOPES = frozenset({"module", "class", "package"})


def group_of(item: pytest.Item) -> str | None:
    """The xdist group ``item`` belongs to (module docstring), or None to go to any free worker."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return None
    for name in item.fixturenames:  # type: ignore[attr-defined]
        if name in SERVICE_GROUPS:
            return SERVICE_GROUPS[name]
    if _on_celery(item):  # without this, both workers started a cluster of their own
        return "celery"
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
        slow = item.nodeid.startswith(SLOW) or group in SLOW_GROUPS
        if slow:
            item.add_marker(pytest.mark.slow)
        if slow or item.nodeid.startswith(ONE_PYTHON):
            item.add_marker(pytest.mark.one_python)
            if item.nodeid.startswith(EACH_PYTHON):
                item.add_marker(pytest.mark.each_python)
        ranked.append((_rank(item, group), position, item))
    ranked.sort(key=lambda entry: entry[:2])
    items[:] = [item for _, _, item in ranked]


__all__ = [
    "EACH_PYTHON",
    "ONE_PYTHON",
    "SERVICE_GROUPS",
    "SLOW",
    "SLOW_FIRST",
    "SLOW_GROUPS",
    "VERSION_BRANCHES",
    "arrange",
    "group_of",
]
