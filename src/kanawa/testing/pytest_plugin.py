"""The pytest plugin: one cassette per test, recorded once and replayed after.

Registered as a ``pytest11`` entry point, so it is active wherever kanawa is installed; it only adds
an option, a marker and a fixture, and imports nothing heavy until a test asks for a cassette.

* ``--kanawa-record=none|once|new_episodes|all`` — the record mode for every cassette of the run
  (default ``none``: replay only; a test whose cassette is missing fails, naming the option to
  record it). See :mod:`kanawa.testing.recorder` for the modes.
* ``--kanawa-cassette-dir=DIR`` — where cassettes live (default: a ``cassettes`` folder beside each
  test module).
* ``@pytest.mark.kanawa_cassette`` (optionally ``("name")`` for the file's stem, ``match_on=(...)``)
  — the test runs inside its cassette; the ``kanawa_cassette`` fixture does the same and gives the
  :class:`~kanawa.testing.Cassette`.

The cassette of ``tests/test_agent.py::test_answer[gpt]`` is
``tests/cassettes/test_agent/test_answer[gpt].yaml``. A test that sent a request its cassette has no
recording for fails at teardown with the list of such requests.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from kanawa.testing.cassette import Cassette

_UNSAFE = re.compile(r"[^A-Za-z0-9_.\-\[\]=,]+")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kanawa", "kanawa record and replay")
    group.addoption(
        "--kanawa-record",
        choices=("none", "once", "new_episodes", "all"),
        default="none",
        help="record mode of kanawa cassettes: none (replay only, default), once, new_episodes, all",
    )
    group.addoption(
        "--kanawa-cassette-dir",
        default=None,
        help="folder of kanawa cassettes (default: 'cassettes' beside each test module)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "kanawa_cassette(name=None, *, match_on=...): run the test inside its kanawa cassette "
        "(record once, replay after: see --kanawa-record)",
    )


def cassette_path(request: pytest.FixtureRequest, name: str | None) -> Path:
    """Where the cassette of the requesting test lives."""
    module = Path(str(request.node.path))
    folder = request.config.getoption("--kanawa-cassette-dir")
    root = Path(folder) if folder else module.parent / "cassettes"
    stem = _UNSAFE.sub("_", name or request.node.name)
    return root / module.stem / f"{stem}.yaml"


@pytest.fixture
def kanawa_cassette(request: pytest.FixtureRequest) -> Iterator[Cassette]:
    """The test's cassette, in use for the whole test (see the module docstring)."""
    from kanawa.testing.recorder import use_cassette

    marker = request.node.get_closest_marker("kanawa_cassette")
    name: str | None = marker.args[0] if marker is not None and marker.args else None
    options: dict[str, Any] = dict(marker.kwargs) if marker is not None else {}
    record = request.config.getoption("--kanawa-record")
    with use_cassette(cassette_path(request, name), record=record, **options) as cassette:
        yield cassette
    if cassette.misses:
        pytest.fail(
            f"requests with no recording in {cassette.path} (record mode {record}):\n  "
            + "\n  ".join(cassette.misses),
            pytrace=False,
        )


@pytest.fixture(autouse=True)
def _kanawa_cassette_marker(request: pytest.FixtureRequest) -> None:
    """Marked tests get their cassette without naming the fixture."""
    if request.node.get_closest_marker("kanawa_cassette") is not None:
        request.getfixturevalue("kanawa_cassette")
