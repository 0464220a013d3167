"""A look at what a test's server logged: every record of the process — the root logger's, and
uvicorn's own, which do not reach the root — kept while the block runs, so a test can say that a
client's mistake left no traceback in the log (the server runs in the test's process)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

WATCHED = ("", "uvicorn", "uvicorn.error")
"""The loggers a record of the server's ends at (uvicorn's: ``propagate`` is off)."""


class LogWatch(logging.Handler):
    """Keeps every record it is handed (once, though it hangs on several loggers)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []
        self._seen: set[int] = set()

    def emit(self, record: logging.LogRecord) -> None:
        if id(record) not in self._seen:
            self._seen.add(id(record))
            self.records.append(record)

    def tracebacks(self) -> list[str]:
        """The records that carry a traceback, formatted (empty: none did)."""
        formatter = logging.Formatter("%(name)s %(levelname)s %(message)s")
        found = []
        for record in self.records:
            text = formatter.format(record)
            if record.exc_info or record.stack_info or "Traceback (most recent call last)" in text:
                found.append(text[-2000:])
        return found


@contextmanager
def watched_logs() -> Iterator[LogWatch]:
    """A :class:`LogWatch` on :data:`WATCHED` for the block."""
    watch = LogWatch()
    loggers = [logging.getLogger(name) for name in WATCHED]
    for logger in loggers:
        logger.addHandler(watch)
    try:
        yield watch
    finally:
        for logger in loggers:
            logger.removeHandler(watch)
