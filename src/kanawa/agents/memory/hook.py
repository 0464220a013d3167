""":class:`Memory`: what an :class:`~kanawa.agents.agent.Agent` does with memory before a run.

``Agent(..., memory=Memory(retriever=..., max_tokens=...))`` calls :meth:`Memory.prepare` in the
agent's ``_preprocess_messages`` stage (seed 002 §3-1 stage 1), once per run:

1. the retriever's memory message (seed 002 §9-3) goes right after the agent's system message;
2. the conversation is trimmed to ``max_tokens`` with :func:`~kanawa.agents.memory.short_term.trim_messages`
   (system messages, the memory message and the current turn are kept; a tool call never loses its
   result).
"""

from __future__ import annotations

from kanawa.agents.memory.retriever import MemoryRetriever
from kanawa.agents.memory.short_term import trim_messages
from kanawa.llm.tokens import text_counter
from kanawa.types import Message, SystemMessage


class Memory:
    """Long-term recall and a context budget for an agent's runs (both optional).

    Args:
        retriever: adds relevant long-term items; ``None`` adds nothing.
        max_tokens: the budget of the whole conversation sent to the model; ``None`` keeps it all.
        model: counts tokens for this model (offline, :mod:`kanawa.llm.tokens`).
    """

    def __init__(
        self,
        *,
        retriever: MemoryRetriever | None = None,
        max_tokens: int | None = None,
        model: str | None = None,
    ) -> None:
        if max_tokens is not None and max_tokens < 1:
            raise ValueError("max_tokens must be >= 1")
        self.retriever = retriever
        self.max_tokens = max_tokens
        self._count = text_counter(model)

    async def prepare(self, messages: list[Message]) -> list[Message]:
        """The conversation to send: with the memory message, within the budget."""
        out = list(messages)
        if self.retriever is not None:
            block = await self.retriever.context_for(out)
            if block is not None:
                at = 0
                while at < len(out) and isinstance(out[at], SystemMessage):
                    at += 1
                out.insert(at, block)
        if self.max_tokens is not None:
            out = trim_messages(out, max_tokens=self.max_tokens, count=self._count)
        return out


__all__ = ["Memory"]
