"""The ways a history is made smaller (:class:`CompactionStrategy`), each given the same cut.

The run's compactor (:mod:`kanawa.loop.compaction.compactor`) decides *where* to cut
(:func:`~kanawa.loop.compaction.history.split_history`: pinned instructions, the older units, the
anchor user message, the recent units); a strategy decides what becomes of the older part:

- :class:`DropOldest` forgets it;
- :class:`Summarize` asks a model of the user's choice for a summary of it (one plain request, no
  loop), which takes its place as one user message;
- :class:`NativeCompaction` asks the provider: OpenAI's ``responses/compact`` endpoint returns an
  opaque compaction item that replaces it; on Anthropic the server clears old tool results itself
  (the ``clear_tool_uses`` context edit, sent with every request); elsewhere ``fallback`` runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import Protocol, runtime_checkable

from kanawa.llm.adapter import LLMAdapter
from kanawa.llm.settings import ModelSettings
from kanawa.llm.tokens import TextCounter
from kanawa.loop.compaction.history import HistorySplit
from kanawa.loop.compaction.transcript import transcript_chunks
from kanawa.types import JsonValue, Message, SystemMessage, Usage, UserMessage

SUMMARY_PREFIX = "Summary of the earlier part of this conversation (older turns were compacted):\n\n"
"""Opens the user message that carries a :class:`Summarize` summary, so the model reads it as context."""

DEFAULT_SUMMARY_INSTRUCTIONS = (
    "You compact the history of a conversation between a user, an assistant and its tools so the "
    "assistant can continue the work without the full history. Write a concise summary that keeps: "
    "the user's goals and constraints, decisions made, facts and figures learned from tools (with "
    "the exact values), open questions and what remains to be done. If a summary of an earlier part "
    "is given, fold it into yours. Write the summary only, in the language of the conversation."
)


@dataclass(frozen=True, slots=True)
class CompactionRequest:
    """What a strategy is given: the cut, the run's model and settings, the size to aim at, and the
    counter the budget is measured with."""

    split: HistorySplit
    model: LLMAdapter
    settings: ModelSettings | None
    budget: int
    count: TextCounter


@dataclass(frozen=True, slots=True)
class Compacted:
    """A strategy's answer: the new history, and what making it cost (``model`` prices ``usage``)."""

    messages: list[Message]
    _: KW_ONLY
    usage: Usage = field(default_factory=Usage)
    model: str = ""


class CompactionStrategy(Protocol):
    """Makes the older part of a history smaller. ``name`` appears in trace events."""

    @property
    def name(self) -> str: ...

    async def compact(self, request: CompactionRequest) -> Compacted: ...


@runtime_checkable
class HistoryCompactor(Protocol):
    """An adapter whose provider compacts a history itself (OpenAI Responses: ``responses/compact``).

    ``compact_history`` gets the messages to compact (the instructions first) and returns the messages
    that replace the ones after the instructions, with the usage the provider billed."""

    async def compact_history(
        self, messages: Sequence[Message], *, settings: ModelSettings | None = None
    ) -> tuple[list[Message], Usage]: ...


@dataclass(frozen=True, slots=True)
class DropOldest:
    """Forget the older turns: keep the instructions, the latest user message and the newest turns
    that fit. Free, instant, and lossy."""

    @property
    def name(self) -> str:
        return "drop_oldest"

    async def compact(self, request: CompactionRequest) -> Compacted:
        return Compacted(request.split.kept)


@dataclass(frozen=True, slots=True)
class Summarize:
    """Replace the older turns with a summary written by ``model`` (a model string such as
    ``"openai:gpt-5-mini"`` or an adapter), asked directly with ``instructions``.

    The older part is rendered as a plain transcript (who said what, which tool was called with what
    and what it returned) in pieces of at most the compaction target, folded one after another into
    the summary, so a history far longer than the summariser's window still gets one summary. The
    summary's usage and cost count toward the run's."""

    model: str | LLMAdapter
    _: KW_ONLY
    instructions: str = DEFAULT_SUMMARY_INSTRUCTIONS
    max_summary_tokens: int = 2_000

    def __post_init__(self) -> None:
        if isinstance(self.model, str) and not self.model.strip():
            raise ValueError(
                "Summarize needs a model: a model string such as 'openai:gpt-5-mini' or an adapter"
            )
        if isinstance(self.max_summary_tokens, bool) or self.max_summary_tokens < 1:
            raise ValueError(f"max_summary_tokens must be a positive int, not {self.max_summary_tokens!r}")

    @property
    def name(self) -> str:
        return "summarize"

    async def compact(self, request: CompactionRequest) -> Compacted:
        split = request.split
        if not split.older:
            return Compacted(split.kept)
        from kanawa.llm.models import resolve_model  # the model string is resolved only when it is used

        model = resolve_model(self.model) if isinstance(self.model, str) else self.model
        chunk_tokens = max(request.budget - self.max_summary_tokens, 1_000)
        summary = ""
        usage = Usage()
        for chunk in transcript_chunks(split.older, max_tokens=chunk_tokens, count=request.count):
            summary, spent = await self._fold(model, summary, chunk)
            usage = usage + spent
        anchor = () if split.anchor is None else (split.anchor,)
        summary_message = UserMessage(SUMMARY_PREFIX + summary)
        messages: list[Message] = [*split.pinned, summary_message, *anchor, *split.recent]
        return Compacted(messages, usage=usage, model=model.model)

    async def _fold(self, model: LLMAdapter, summary: str, chunk: str) -> tuple[str, Usage]:
        """One summary request, straight to the model: no tools, one answer, so no loop is needed (and
        compaction, which the loop uses, never calls back up into it). A failed request raises the
        adapter's :class:`~kanawa.llm.errors.LLMError`; the run's model caller reports it."""
        earlier = f"Summary so far:\n{summary}\n\n" if summary else ""
        response = await model.chat(
            [SystemMessage(self.instructions), UserMessage(f"{earlier}Conversation to summarise:\n{chunk}")],
            settings=ModelSettings(max_output_tokens=self.max_summary_tokens),
        )
        usage = response.usage
        if not usage.requests:
            usage = usage + Usage(requests=1)
        return response.message.text.strip(), usage


@dataclass(frozen=True, slots=True)
class NativeCompaction:
    """Use the provider's own compaction: OpenAI Responses models compact the older turns with the
    ``responses/compact`` endpoint (an encrypted compaction item replaces them); Anthropic models get
    the ``clear_tool_uses`` context edit on every request, so the server clears old tool results once
    the prompt passes the trigger, keeping the newest ``keep_tool_uses``. Where a provider has
    neither — and for Anthropic when the history passes the whole window — ``fallback`` runs."""

    _: KW_ONLY
    fallback: CompactionStrategy = field(default_factory=DropOldest)
    keep_tool_uses: int = 3

    def __post_init__(self) -> None:
        if isinstance(self.keep_tool_uses, bool) or self.keep_tool_uses < 0:
            raise ValueError(f"keep_tool_uses must be an int >= 0, not {self.keep_tool_uses!r}")

    @property
    def name(self) -> str:
        return "native"

    def request_fields(self, provider: str, *, trigger_tokens: int) -> dict[str, JsonValue]:
        """Body fields to send with every request to ``provider`` (Anthropic's context edit)."""
        if provider != "anthropic":
            return {}
        edit: dict[str, JsonValue] = {
            "type": "clear_tool_uses_20250919",
            "trigger": {"type": "input_tokens", "value": trigger_tokens},
            "keep": {"type": "tool_uses", "value": self.keep_tool_uses},
        }
        return {"context_management": {"edits": [edit]}}

    async def compact(self, request: CompactionRequest) -> Compacted:
        split = request.split
        model = request.model
        if not split.older or not isinstance(model, HistoryCompactor):
            return await self.fallback.compact(request)
        older = [*split.pinned, *split.older]
        replaced, usage = await model.compact_history(older, settings=request.settings)
        return Compacted([*split.pinned, *replaced, *split.recent], usage=usage, model=model.model)


__all__ = [
    "DEFAULT_SUMMARY_INSTRUCTIONS",
    "SUMMARY_PREFIX",
    "Compacted",
    "CompactionRequest",
    "CompactionStrategy",
    "DropOldest",
    "HistoryCompactor",
    "NativeCompaction",
    "Summarize",
]
