"""The model catalogue (:mod:`kanawa.llm.catalogue`): every card has a window, a price and sources,
and agrees with the OpenAI request checks."""

from __future__ import annotations

import pytest

from kanawa.llm.catalogue import card_for, catalogue
from kanawa.llm.openai.catalogue import PROFILES
from kanawa.llm.pricing import LIBRARY_TABLE
from kanawa.types import Usage

CARDS = catalogue().cards


@pytest.mark.parametrize("name", sorted(CARDS))
def test_every_catalogue_model_has_a_window_a_price_and_cited_sources(name: str) -> None:
    card = CARDS[name]
    assert card.context_window >= 128_000
    assert 0 < card.max_output <= card.context_window
    source = LIBRARY_TABLE.source_of(f"{card.provider}:{name}")
    assert source is not None, f"{name} has no price in genai-prices"
    cost = LIBRARY_TABLE.cost(f"{card.provider}:{name}", Usage(input_tokens=1000, output_tokens=1000))
    assert cost is not None
    assert cost > 0
    assert card.sources
    assert set(card.sources) <= set(catalogue().sources)
    assert card.tools_with_reasoning
    if card.default_effort is not None:
        assert card.default_effort in card.efforts


def test_the_catalogue_covers_current_gpt_5_codex_claude_4_and_gemini_2_5_and_3() -> None:
    for name in ("gpt-5.2", "gpt-5.2-pro", "gpt-5.3-codex", "claude-opus-4-5", "claude-haiku-4-5"):
        assert name in CARDS
    for name in ("gemini-2.5-pro", "gemini-2.5-flash", "gemini-3-pro-preview", "gemini-3-flash-preview"):
        assert name in CARDS
    assert {card.provider for card in CARDS.values()} == {"openai", "anthropic", "google"}


NEWEST = {
    "openai": ("gpt-5.4", "gpt-5.4-mini", "gpt-5.4-nano", "gpt-5.4-pro", "gpt-5.5", "gpt-5.5-pro"),
    "anthropic": ("claude-opus-4-6", "claude-sonnet-4-6", "claude-opus-4-7", "claude-opus-4-8"),
    "google": (
        "gemini-3.1-pro-preview",
        "gemini-3.1-flash-lite",
        "gemini-3.5-flash",
        "gemini-3.5-flash-lite",
    ),
}


@pytest.mark.parametrize("provider", sorted(NEWEST))
def test_the_newest_models_of_each_provider_have_cards(provider: str) -> None:
    for name in NEWEST[provider]:
        card = card_for(f"{provider}:{name}")
        assert card is not None, name
        assert card.provider == provider
        assert card.context_window >= 400_000, name


def test_values_no_page_states_are_copied_openly_not_silently() -> None:
    for name in ("gpt-5.4-nano", "gpt-5.5-pro", "claude-sonnet-4-6", "claude-opus-4-8", "gemini-3.5-flash"):
        assert "copied" in CARDS[name].notes or "follow" in CARDS[name].notes, name


def test_claude_4_7_and_later_think_adaptively_and_take_no_sampling_knobs() -> None:
    for name in ("claude-opus-4-7", "claude-opus-4-8"):
        assert CARDS[name].reasoning == "adaptive"
        assert CARDS[name].sampling == "never"
        assert "xhigh" in CARDS[name].efforts
    assert CARDS["claude-opus-4-6"].sampling == "without_reasoning"


def test_openai_cards_agree_with_the_request_checks() -> None:
    openai = {name: card for name, card in CARDS.items() if card.provider == "openai"}
    assert set(openai) == set(PROFILES)
    for name, card in openai.items():
        profile = PROFILES[name]
        assert set(card.efforts) == profile.efforts, name
        assert card.default_effort == profile.default_effort, name
        assert set(card.verbosities) == profile.verbosities, name
        assert card.sampling == profile.sampling, name


def test_cards_are_found_by_model_string_and_dated_snapshot() -> None:
    assert card_for("openai:gpt-5.2-2025-12-11") is CARDS["gpt-5.2"]
    assert card_for("anthropic:claude-sonnet-4-5-20250929") is CARDS["claude-sonnet-4-5"]
    assert card_for("gemini:gemini-2.5-pro") is CARDS["gemini-2.5-pro"]
    assert card_for("my-local-llama") is None


def test_endpoint_rules_for_tools_with_reasoning() -> None:
    assert CARDS["gpt-5.2"].tools_with_reasoning["chat_completions"] == "effort_none_only"
    assert CARDS["gpt-5.2-pro"].tools_with_reasoning["chat_completions"] == "unavailable"
    assert CARDS["gpt-5.2"].tools_with_reasoning["responses"] == "allowed"
    assert CARDS["claude-opus-4-5"].tools_with_reasoning["messages"] == "tool_choice_auto_or_none"
    assert CARDS["gemini-3-pro-preview"].tools_with_reasoning["generate_content"] == "thought_signatures"
