"""Shared fixtures and the Hypothesis profiles.

Property tests stay randomised where people develop, and are deterministic where CI judges:

- ``dev`` (the default): random seeds, 200 examples per property;
- ``ci`` (chosen when the ``CI`` environment variable is set, as CI does): derandomised — the same
  examples on every run — with 400 examples per property, so a green CI run is reproducible;
- ``check`` (``make check``, the edit loop): derandomised like ``ci``, with 50 examples per property,
  so the loop stays under two minutes; ``make test`` searches with ``ci``'s 400;
- ``explore`` (``make explore``, part of ``make test``): random seeds and 50 examples per property —
  the pass that finds what a newcomer's own run would; the Makefile prints the seed, and
  ``make explore SEED=<seed>`` (``--hypothesis-seed``) replays it;
- ``fuzz`` (``make fuzz``): random seeds and 5,000 examples per property, to go looking for bugs.

``make test`` runs the suites with ``--hypothesis-profile=ci`` (derandomised), then ``make explore``.

``--hypothesis-profile NAME`` overrides the choice. Property tests set only ``deadline`` and health
checks in their ``@settings``, never ``max_examples``, so the profile decides how hard they search.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from kanawa.llm.lifecycle import ClosableAdapter
from tests.wire.server import WireServer

settings.register_profile("dev", max_examples=200, deadline=None)
settings.register_profile(
    "ci",
    max_examples=400,
    deadline=None,
    derandomize=True,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "check",
    max_examples=50,
    deadline=None,
    derandomize=True,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "explore",
    max_examples=50,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("fuzz", max_examples=5000, deadline=None, print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


@pytest.fixture(autouse=True)
async def close_adapters(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[None]:
    """Every provider adapter (and OpenAI embedder) a test builds is closed when the test ends, so its
    SDK's HTTP sockets are released (the suite runs with ``error::ResourceWarning``: an unclosed socket
    fails it)."""
    from kanawa.agents.memory.embeddings.openai import OpenAIEmbedder
    from kanawa.llm.anthropic.adapter import AnthropicAdapter
    from kanawa.llm.gemini.adapter import GeminiAdapter
    from kanawa.llm.openai.chat import OpenAIChatAdapter
    from kanawa.llm.openai.responses import OpenAIResponsesAdapter

    built: list[ClosableAdapter | OpenAIEmbedder] = []
    for cls in (OpenAIResponsesAdapter, OpenAIChatAdapter, AnthropicAdapter, GeminiAdapter, OpenAIEmbedder):
        original = cls.__init__

        def tracking_init(self: Any, *args: Any, __original: Any = original, **kwargs: Any) -> None:
            __original(self, *args, **kwargs)
            built.append(self)

        monkeypatch.setattr(cls, "__init__", tracking_init)
    yield
    for adapter in built:
        await adapter.aclose()


@pytest.fixture
def wire_server() -> Iterator[WireServer]:
    """A real loopback HTTP server whose replies a test scripts (see ``tests/wire/server.py``)."""
    with WireServer() as server:
        yield server


@pytest.fixture(scope="session")
def pgvector_url() -> Iterator[str]:
    """A ``postgresql://`` URL of a private PostgreSQL with pgvector, shared by the whole session."""
    from tests.support.pgvector import pgvector_server

    with pgvector_server() as url:
        yield url


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: outside programs dominate its time (3.12 only in make test)")
    config.addinivalue_line("markers", "one_python: the same code on 3.11 and 3.12; 3.12 only in make test")
    config.addinivalue_line("markers", "each_python: a one_python test that runs on 3.11 as well")


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """xdist groups, the slow/one_python/each_python marks, slow-first order (tests/support/scheduling.py)."""
    from tests.support.scheduling import arrange

    arrange(items)
