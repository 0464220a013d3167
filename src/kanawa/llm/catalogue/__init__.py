"""What each current model accepts and holds, as cited data: :class:`ModelCard` by model name.

The cards (``models.json`` beside this file, dated by its ``as_of``) cover OpenAI's GPT-5.x (through
5.5 and its pro) and codex models, Anthropic's Claude 4.x (through Opus 4.8) and Google's Gemini 2.5,
3, 3.1 and 3.5: context window, maximum output, how the model reasons (``effort``, ``budget_tokens``,
``adaptive`` — Claude decides how much to think, steered by an effort —, ``thinking_budget``,
``thinking_level``) and the values it takes, verbosity, when sampling knobs are accepted, whether
tools may be sent together with reasoning on each endpoint, and how prompt caching works. Every card
names its sources (keys of the file's ``sources``: provider documentation pages by title and URL). A
value no page states for that model is copied from its family's documented value and the card's
``notes`` say so; nothing is filled in silently.

The request-time checks of OpenAI settings stay in :mod:`kanawa.llm.openai.catalogue`; a test keeps
the two in agreement. Unknown models have no card (:func:`card_for` answers ``None``): availability
is not pre-judged.

Values of ``tools_with_reasoning`` per endpoint: ``allowed``; ``effort_none_only`` (function tools
only with reasoning effort ``none``); ``unavailable`` (the model is not served there);
``tool_choice_auto_or_none`` (with thinking on, tool choice may not force a tool);
``thought_signatures`` (function calls carry signatures that must be sent back). Values of
``caching``: ``automatic`` (OpenAI: prefixes cached by the server, ``prompt_cache_key``);
``automatic_extended`` (also ``prompt_cache_retention="24h"``); ``breakpoints`` (Anthropic
``cache_control``, 5-minute or 1-hour); ``implicit_and_explicit`` (Gemini implicit caching and
cached content).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass
from functools import cache
from importlib.resources import files
from typing import Literal, TypeAlias, cast

Sampling: TypeAlias = Literal["never", "without_reasoning", "always"]
Reasoning: TypeAlias = Literal[
    "none", "effort", "budget_tokens", "adaptive", "thinking_budget", "thinking_level"
]


@dataclass(frozen=True, slots=True)
class ModelCard:
    """One model's capabilities, with the sources they were read from."""

    name: str
    provider: str
    context_window: int
    max_output: int
    reasoning: Reasoning
    efforts: tuple[str, ...]
    default_effort: str | None
    verbosities: tuple[str, ...]
    sampling: Sampling
    tools_with_reasoning: Mapping[str, str]
    caching: str
    sources: tuple[str, ...]
    _: KW_ONLY
    thinking_budget: tuple[int, int] | None = None
    notes: str = ""


@dataclass(frozen=True, slots=True)
class Catalogue:
    """The cards, the date they were read (``as_of``) and the cited pages (key → title and URL)."""

    as_of: str
    sources: Mapping[str, str]
    cards: Mapping[str, ModelCard]


_SNAPSHOT = re.compile(r"^(?P<base>.+?)-(?:\d{4}-\d{2}-\d{2}|\d{8})$")


def _card(name: str, entry: Mapping[str, object]) -> ModelCard:
    budget = entry.get("thinking_budget")
    low_high = cast("list[int]", budget) if isinstance(budget, list) else None
    return ModelCard(
        name=name,
        provider=str(entry["provider"]),
        context_window=int(cast("int", entry["context_window"])),
        max_output=int(cast("int", entry["max_output"])),
        reasoning=cast("Reasoning", entry["reasoning"]),
        efforts=tuple(cast("list[str]", entry["efforts"])),
        default_effort=cast("str | None", entry.get("default_effort")),
        verbosities=tuple(cast("list[str]", entry["verbosities"])),
        sampling=cast("Sampling", entry["sampling"]),
        tools_with_reasoning=dict(cast("dict[str, str]", entry["tools_with_reasoning"])),
        caching=str(entry["caching"]),
        sources=tuple(cast("list[str]", entry["sources"])),
        thinking_budget=None if low_high is None else (low_high[0], low_high[1]),
        notes=str(entry.get("notes", "")),
    )


@cache
def catalogue() -> Catalogue:
    """The shipped catalogue (read once)."""
    data = json.loads(files(__name__).joinpath("models.json").read_text(encoding="utf-8"))
    models = cast("dict[str, dict[str, object]]", data["models"])
    return Catalogue(
        as_of=str(data["as_of"]),
        sources=dict(cast("dict[str, str]", data["sources"])),
        cards={name: _card(name, entry) for name, entry in models.items()},
    )


def card_for(model: str) -> ModelCard | None:
    """The card of ``model`` (``provider:name`` or a bare name, a dated snapshot such as
    ``gpt-5.2-2025-12-11`` or ``claude-sonnet-4-5-20250929`` included); ``None`` when unknown."""
    name = model.strip().lower()
    if ":" in name:
        name = name.split(":", 1)[1]
    name = name.split("@", 1)[0]
    cards = catalogue().cards
    card = cards.get(name)
    if card is None and (match := _SNAPSHOT.match(name)):
        card = cards.get(match["base"])
    return card


__all__ = ["Catalogue", "ModelCard", "Reasoning", "Sampling", "card_for", "catalogue"]
