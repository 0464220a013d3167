"""Hybrid search over playbook bullets: BM25 (Japanese-aware tokens) + dense embeddings, fused.

See :mod:`kanawa.apps.ace.search.hybrid` for the story of one search.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kanawa._lazy import lazy_exports

_EXPORTS = {
    "HybridSearch": "kanawa.apps.ace.search.hybrid",
    "SearchSettings": "kanawa.apps.ace.search.ranking",
    "SearchQuery": "kanawa.apps.ace.search.models",
    "SearchResult": "kanawa.apps.ace.search.models",
    "BigramTokenizer": "kanawa.apps.ace.search.tokenizer",
    "SudachiTokenizer": "kanawa.apps.ace.search.tokenizer",
    "default_tokenizer": "kanawa.apps.ace.search.tokenizer",
}

if TYPE_CHECKING:
    from kanawa.apps.ace.search.hybrid import HybridSearch
    from kanawa.apps.ace.search.models import SearchQuery, SearchResult
    from kanawa.apps.ace.search.ranking import SearchSettings
    from kanawa.apps.ace.search.tokenizer import BigramTokenizer, SudachiTokenizer, default_tokenizer

__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)

__all__ = [
    "BigramTokenizer",
    "HybridSearch",
    "SearchQuery",
    "SearchResult",
    "SearchSettings",
    "SudachiTokenizer",
    "default_tokenizer",
]
