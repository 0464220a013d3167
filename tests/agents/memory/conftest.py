"""Fixtures for memory tests: a real PostgreSQL with pgvector (from the ``pgserver`` package, started
once per session in a temporary directory) and deterministic unit vectors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from kanawa.agents.memory.embeddings.base import Vectors, normalise_rows

_tables = itertools.count()


@pytest.fixture(scope="session")
def postgres_url(pgvector_url: str) -> str:
    """A ``postgresql://`` URL of a private server with the pgvector extension available (the session's
    one server, :func:`tests.conftest.pgvector_url`)."""
    return pgvector_url


@pytest.fixture
def table() -> str:
    """A fresh table name per test, so tests sharing the server never see each other's rows."""
    return f"memory_test_{next(_tables)}"


def unit_vectors(n: int, dim: int, *, seed: int) -> Vectors:
    return normalise_rows(np.random.default_rng(seed).standard_normal((n, dim)))
