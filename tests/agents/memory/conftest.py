"""Fixtures for memory tests: a real PostgreSQL with pgvector (from the ``pgserver`` package, started
once per session in a temporary directory) and deterministic unit vectors."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import numpy as np
import pytest

from kanawa.agents.memory.embeddings.base import Vectors, normalise_rows

_tables = itertools.count()


@pytest.fixture(scope="session")
def postgres_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A ``postgresql://`` URL of a private server with the pgvector extension available."""
    import pgserver

    server = pgserver.get_server(tmp_path_factory.mktemp("pgdata"), cleanup_mode="stop")
    try:
        yield server.get_uri()
    finally:
        server.cleanup()


@pytest.fixture
def table() -> str:
    """A fresh table name per test, so tests sharing the server never see each other's rows."""
    return f"memory_test_{next(_tables)}"


def unit_vectors(n: int, dim: int, *, seed: int) -> Vectors:
    return normalise_rows(np.random.default_rng(seed).standard_normal((n, dim)))
