"""Shared fixtures."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.wire.server import WireServer


@pytest.fixture
def wire_server() -> Iterator[WireServer]:
    """A real loopback HTTP server whose replies a test scripts (see ``tests/wire/server.py``)."""
    with WireServer() as server:
        yield server
