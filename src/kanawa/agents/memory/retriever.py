"""The memory retriever (seed 002 §9-3 "Memory Router": チャット履歴を長期メモリ検索で LLM に渡す).

Given the conversation, it searches long-term memory with the latest user text and puts the most
relevant items into the context as one system message, highest score first, stopping at the token
budget. An item that does not fit is skipped (a shorter, lower-ranked one may still fit); items below
``min_score`` are left out.
"""

from __future__ import annotations

from collections.abc import Sequence

from kanawa.agents.memory.long_term import LongTermMemory
from kanawa.agents.memory.store import DEFAULT_NAMESPACE, ScoredItem
from kanawa.llm.tokens import MESSAGE_OVERHEAD_TOKENS, TextCounter, text_counter
from kanawa.types import Message, SystemMessage, UserMessage

DEFAULT_HEADER = "Relevant notes from long-term memory (most relevant first):"


class MemoryRetriever:
    """Selects memory for a conversation.

    Args:
        memory: where to search.
        k: how many candidates to fetch before the budget is applied.
        max_tokens: the budget of the whole memory message (header and overhead included).
        min_score: the lowest cosine similarity worth showing.
        namespace: which namespace to search.
        header: the first line of the memory message.
        model: counts tokens for this model (offline, :mod:`kanawa.llm.tokens`).
    """

    def __init__(
        self,
        memory: LongTermMemory,
        *,
        k: int = 8,
        max_tokens: int = 512,
        min_score: float = -1.0,
        namespace: str = DEFAULT_NAMESPACE,
        header: str = DEFAULT_HEADER,
        model: str | None = None,
    ) -> None:
        if k < 1 or max_tokens < 1:
            raise ValueError("k and max_tokens must be >= 1")
        self.memory = memory
        self.k = k
        self.max_tokens = max_tokens
        self.min_score = min_score
        self.namespace = namespace
        self.header = header
        self._count: TextCounter = text_counter(model)

    async def retrieve(self, query: str) -> list[ScoredItem]:
        """The hits for ``query`` that fit the budget, best first."""
        hits = await self.memory.asearch(query, k=self.k, namespace=self.namespace)
        used = MESSAGE_OVERHEAD_TOKENS + self._count(self.header)
        chosen: list[ScoredItem] = []
        for hit in hits:
            if hit.score < self.min_score:
                continue
            cost = self._count(_line(hit)) + 1
            if used + cost <= self.max_tokens:
                chosen.append(hit)
                used += cost
        return chosen

    def render(self, hits: Sequence[ScoredItem]) -> SystemMessage:
        """The memory message for ``hits``."""
        return SystemMessage("\n".join([self.header, *(_line(hit) for hit in hits)]))

    async def context_for(self, messages: Sequence[Message]) -> SystemMessage | None:
        """The memory message for the conversation's latest user text, or ``None`` when nothing fits."""
        query = latest_user_text(messages)
        if not query:
            return None
        hits = await self.retrieve(query)
        return self.render(hits) if hits else None


def _line(hit: ScoredItem) -> str:
    return f"- {hit.item.text}"


def latest_user_text(messages: Sequence[Message]) -> str:
    """The text of the last user message ("" when there is none)."""
    for message in reversed(messages):
        if isinstance(message, UserMessage):
            return message.text
    return ""


__all__ = ["DEFAULT_HEADER", "MemoryRetriever", "latest_user_text"]
