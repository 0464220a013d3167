"""Playbook stores keyed by dataset: JSON files (default), SQLite, PostgreSQL + pgvector.

:func:`open_playbook_store` picks one from a location: ``postgresql://…`` (or ``KANAWA_DATABASE_URL``),
a ``*.sqlite3`` / ``*.db`` path or ``sqlite:///path``, else a directory of JSON files.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kanawa._lazy import lazy_exports

_EXPORTS = {
    "PlaybookStore": "kanawa.apps.ace.store.base",
    "check_dataset": "kanawa.apps.ace.store.base",
    "JsonPlaybookStore": "kanawa.apps.ace.store.json_store",
    "SQLitePlaybookStore": "kanawa.apps.ace.store.sqlite_store",
    "PgPlaybookStore": "kanawa.apps.ace.store.pg_store",
    "open_playbook_store": "kanawa.apps.ace.store.opening",
}

if TYPE_CHECKING:
    from kanawa.apps.ace.store.base import PlaybookStore, check_dataset
    from kanawa.apps.ace.store.json_store import JsonPlaybookStore
    from kanawa.apps.ace.store.opening import open_playbook_store
    from kanawa.apps.ace.store.pg_store import PgPlaybookStore
    from kanawa.apps.ace.store.sqlite_store import SQLitePlaybookStore

__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)

__all__ = [
    "JsonPlaybookStore",
    "PgPlaybookStore",
    "PlaybookStore",
    "SQLitePlaybookStore",
    "check_dataset",
    "open_playbook_store",
]
