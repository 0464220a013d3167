"""History compaction: long conversations that never overflow the model's context window.

``Agent(..., compaction=Compaction())`` keeps every request of a run under the model's window: before
a request whose estimated size passes ``trigger`` of the window, the older turns are dropped,
summarised by a model of your choice, or compacted by the provider itself; a context-length error
from the provider compacts once more and retries the request once. A tool call never loses its
result (nor, on the Responses API, a reasoning item its call): the history is cut only between
units (:mod:`kanawa.loop.compaction.history`).
"""

from __future__ import annotations

from kanawa.loop.compaction.history import HistorySplit, history_units, split_history
from kanawa.loop.compaction.settings import Compaction
from kanawa.loop.compaction.strategies import (
    Compacted,
    CompactionRequest,
    CompactionStrategy,
    DropOldest,
    HistoryCompactor,
    NativeCompaction,
    Summarize,
)

__all__ = [
    "Compacted",
    "Compaction",
    "CompactionRequest",
    "CompactionStrategy",
    "DropOldest",
    "HistoryCompactor",
    "HistorySplit",
    "NativeCompaction",
    "Summarize",
    "history_units",
    "split_history",
]
