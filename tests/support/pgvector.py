"""One PostgreSQL with pgvector (the ``pgserver`` package) for the whole test session.

The data directory is made with :func:`tempfile.mkdtemp` directly under the system temp directory, not
under pytest's ``/tmp/pytest-of-<user>``: pgserver runs the server as its own system user and opens
the prefix folders to it, but any pytest process that starts later makes that private folder 0700
again, which would lock a running server out of its own data (seen when several suites share a
machine). Each test package keeps its own tables apart by name.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def pgvector_server() -> Iterator[str]:
    """Start a private server; yield its ``postgresql://`` URL; stop it and remove its data."""
    import pgserver

    data = tempfile.mkdtemp(prefix="kanawa-pgdata-")
    server = pgserver.get_server(data, cleanup_mode="stop")
    try:
        yield server.get_uri()
    finally:
        server.cleanup()
        shutil.rmtree(data, ignore_errors=True)
