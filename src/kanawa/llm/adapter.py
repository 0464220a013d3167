"""The :class:`LLMAdapter` protocol every provider implements (seed 002 §3-3).

The loop talks only to this protocol. An adapter turns provider-neutral messages into one provider's
request, and that provider's answer (whole or streamed) back into :mod:`kanawa.types`. Adapters never
parse tool arguments, never retry on their own (see :mod:`kanawa.llm.retry`) and never log prompt text.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Protocol, runtime_checkable

from kanawa.llm.settings import ModelSettings
from kanawa.types import LLMResponse, Message, OutputSchema, StreamEvent, ToolSpec


@runtime_checkable
class SupportsToolSpec(Protocol):
    """Anything that can describe itself as a :class:`ToolSpec` (a :class:`kanawa.tools.Tool`)."""

    @property
    def spec(self) -> ToolSpec: ...


ToolLike = ToolSpec | SupportsToolSpec


def canonical_model_name(name: str, *, prefixes: Sequence[str] = ()) -> str:
    """Seed 002 §3-3 ``normalize_model_name``: lower-case, surrounding space and any of ``prefixes``
    (provider prefixes such as ``"anthropic:"``, paths such as ``"models/"``) removed, and runs of
    spaces and underscores turned into one hyphen — ``"openai:GPT_5 mini"`` → ``"gpt-5-mini"``.
    Every adapter applies this one rule with its own prefixes."""
    text = name.strip().lower()
    stripped = True
    while stripped:
        stripped = False
        for prefix in prefixes:
            if text.startswith(prefix):
                text, stripped = text[len(prefix) :].strip(), True
    return "-".join(text.replace("_", " ").split())


def tool_specs(tools: Sequence[ToolLike]) -> list[ToolSpec]:
    """Normalise a mix of :class:`ToolSpec` and tool objects into specs, in order."""
    return [t if isinstance(t, ToolSpec) else t.spec for t in tools]


@runtime_checkable
class LLMAdapter(Protocol):
    """A chat model behind one provider's API.

    ``chat`` returns the whole response. ``stream`` yields :class:`~kanawa.types.TextDelta`,
    :class:`~kanawa.types.ReasoningDelta`, :class:`~kanawa.types.ToolCallStarted` and
    :class:`~kanawa.types.ToolCallArgsDelta` as they arrive and always ends with exactly one
    :class:`~kanawa.types.ResponseCompleted` holding the assembled response. Both raise only
    :class:`~kanawa.llm.errors.LLMError` subclasses.

    ``response_schema`` asks for structured output; the loop never sends it together with tools.
    """

    @property
    def provider(self) -> str: ...

    @property
    def model(self) -> str: ...

    async def chat(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolLike] = (),
        settings: ModelSettings | None = None,
        response_schema: OutputSchema | None = None,
    ) -> LLMResponse: ...

    def stream(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolLike] = (),
        settings: ModelSettings | None = None,
        response_schema: OutputSchema | None = None,
    ) -> AsyncIterator[StreamEvent]: ...

    def count_tokens(self, content: str | Sequence[Message]) -> int:
        """Estimate the prompt size in tokens, offline (never a network fetch)."""
        ...

    def normalize_model_name(self, name: str | None = None) -> str:
        """The provider's canonical spelling of ``name`` (default: this adapter's model)."""
        ...
