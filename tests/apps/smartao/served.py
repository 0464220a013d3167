"""SmartAO as ``KANAWA_SERVE_EXTENSIONS=tests.apps.smartao.served:extensions`` names it in the Celery
test: the extension over the data directory of ``KANAWA_TEST_SMARTAO_DATA`` (each process is given
its own), with the Sudachi rules (no Node process) and the offline demo model (scripted content),
its lifespan noting in that directory which process entered and left it."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from kanawa.apps.smartao.web import smartao_extension
from kanawa.server.runs.extensions import Extension

MARKS = "lifespan.log"
"""``entered <pid>`` / ``left <pid>`` lines, one per lifespan entered or left."""


def _note(directory: Path, what: str) -> None:
    with (directory / MARKS).open("a", encoding="utf-8") as marks:
        marks.write(f"{what} {os.getpid()}\n")


def extensions() -> list[Extension]:
    directory = Path(os.environ["KANAWA_TEST_SMARTAO_DATA"])
    extension = smartao_extension(directory, textlint=False)
    inner = extension.lifespan
    assert inner is not None

    @asynccontextmanager
    async def noted() -> AsyncIterator[object]:
        _note(directory, "entered")
        try:
            async with inner() as entered:
                yield entered
        finally:
            _note(directory, "left")

    return [dataclasses.replace(extension, lifespan=noted)]
