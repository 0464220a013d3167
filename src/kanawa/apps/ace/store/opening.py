"""Choosing a playbook store from one location string (the CLI's ``--store`` and the container's)."""

from __future__ import annotations

import os
from pathlib import Path

from kanawa.apps.ace.store.base import DEFAULT_DIR, PlaybookStore

DATABASE_URL_ENV = "KANAWA_DATABASE_URL"


async def open_playbook_store(*, location: str | Path | None = None) -> PlaybookStore:
    """``postgresql://…`` → pgvector; ``sqlite:///x`` or a ``.sqlite3``/``.db`` path → SQLite; any other
    path → JSON files there. ``None`` uses ``KANAWA_DATABASE_URL`` when set, else ``./.kanawa/playbooks``."""
    if location is None:
        location = os.environ.get(DATABASE_URL_ENV) or DEFAULT_DIR
    text = str(location)
    if text.startswith(("postgresql://", "postgres://")):
        from kanawa.apps.ace.store.pg_store import PgPlaybookStore

        return await PgPlaybookStore.open(text)
    if text.startswith("sqlite:///"):
        text = text.removeprefix("sqlite:///")
        location = Path(text)
    if text.endswith((".sqlite3", ".sqlite", ".db")):
        from kanawa.apps.ace.store.sqlite_store import SQLitePlaybookStore

        return SQLitePlaybookStore(path=Path(text))
    from kanawa.apps.ace.store.json_store import JsonPlaybookStore

    return JsonPlaybookStore(root=Path(location))


__all__ = ["DATABASE_URL_ENV", "open_playbook_store"]
