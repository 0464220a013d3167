"""Model profiles as data: efforts, verbosity and sampling checked before sending (seed 001 §3.4–3.5)."""

from __future__ import annotations

import pytest

from kanawa.llm.errors import LLMBadRequestError
from kanawa.llm.openai.catalogue import PROFILES, check_settings, is_reasoning_model, profile_for
from kanawa.llm.settings import ModelSettings

PREDEFINED = [
    "gpt-5.2",
    "gpt-5.2-pro",
    "gpt-5",
    "gpt-5-mini",
    "gpt-5-nano",
    "gpt-5-codex",
    "gpt-5.1-codex",
    "gpt-5.3-codex",
]


@pytest.mark.parametrize("model", [*PREDEFINED, "gpt-5.1", "gpt-5.1-codex-max"])
def test_every_seed_model_has_a_profile(model: str) -> None:
    assert model in PROFILES
    assert PROFILES[model].reasoning


def test_dated_snapshots_map_to_their_model_but_siblings_do_not() -> None:
    profile = profile_for("gpt-5-2025-08-07")
    assert profile is not None
    assert profile.name == "gpt-5"
    mini = profile_for("GPT-5-mini-2025-08-07")
    assert mini is not None
    assert mini.name == "gpt-5-mini"
    assert profile_for("gpt-5.2-2025-12-11") == PROFILES["gpt-5.2"]
    assert profile_for("gpt-5-turbo-preview") is None


def test_rejected_effort_names_model_and_allowed_values() -> None:
    with pytest.raises(LLMBadRequestError) as info:
        check_settings("gpt-5.2", ModelSettings(reasoning_effort="minimal"))
    assert info.value.message == (
        "reasoning_effort 'minimal' is not supported by gpt-5.2 (allowed: none, low, medium, high, xhigh)"
    )
    assert info.value.code == "unsupported_value"


@pytest.mark.parametrize(
    ("model", "accepted", "refused"),
    [
        ("gpt-5", ["minimal", "low", "medium", "high"], ["none", "xhigh"]),
        ("gpt-5-mini", ["minimal", "high"], ["none"]),
        ("gpt-5.1", ["none", "low", "medium", "high"], ["minimal", "xhigh"]),
        ("gpt-5.2", ["none", "low", "medium", "high", "xhigh"], ["minimal"]),
        ("gpt-5.2-pro", ["medium", "high", "xhigh"], ["none", "low", "minimal"]),
        ("gpt-5-codex", ["low", "medium", "high"], ["minimal", "none", "xhigh"]),
        ("gpt-5.1-codex", ["low", "high"], ["none", "xhigh"]),
        ("gpt-5.1-codex-max", ["low", "xhigh"], ["none", "minimal"]),
        ("gpt-5.3-codex", ["medium", "xhigh"], ["minimal"]),
        ("gpt-5.4", ["none", "low", "xhigh"], ["minimal"]),
        ("gpt-5.4-mini", ["none", "medium", "xhigh"], ["minimal"]),
        ("gpt-5.4-pro", ["medium", "high", "xhigh"], ["none", "low"]),
        ("gpt-5.5", ["none", "low", "medium", "high", "xhigh"], ["minimal"]),
        ("gpt-5.5-pro", ["medium", "xhigh"], ["none", "low", "minimal"]),
    ],
)
def test_reasoning_effort_allow_lists(model: str, accepted: list[str], refused: list[str]) -> None:
    for effort in accepted:
        check_settings(model, ModelSettings(reasoning_effort=effort))  # type: ignore[arg-type]
    for effort in refused:
        with pytest.raises(LLMBadRequestError, match=f"'{effort}' is not supported by {model}"):
            check_settings(model, ModelSettings(reasoning_effort=effort))  # type: ignore[arg-type]


def test_sampling_params_refused_for_reasoning_models() -> None:
    with pytest.raises(LLMBadRequestError, match="temperature is not supported by gpt-5 "):
        check_settings("gpt-5", ModelSettings(temperature=0.2))
    with pytest.raises(LLMBadRequestError, match="top_p is not supported by gpt-5-mini"):
        check_settings("gpt-5-mini-2025-08-07", ModelSettings(top_p=0.9))


def test_sampling_on_gpt_5_1_and_5_2_only_without_reasoning() -> None:
    check_settings("gpt-5.2", ModelSettings(temperature=0.3))  # default effort is none
    check_settings("gpt-5.1", ModelSettings(temperature=0.3, reasoning_effort="none"))
    with pytest.raises(LLMBadRequestError, match="only with reasoning_effort 'none'"):
        check_settings("gpt-5.2", ModelSettings(temperature=0.3, reasoning_effort="high"))


def test_codex_verbosity_is_medium_only() -> None:
    check_settings("gpt-5-codex", ModelSettings(verbosity="medium"))
    with pytest.raises(
        LLMBadRequestError, match=r"verbosity 'low' is not supported by gpt-5-codex \(allowed: medium\)"
    ):
        check_settings("gpt-5-codex", ModelSettings(verbosity="low"))
    check_settings("gpt-5", ModelSettings(verbosity="low"))


def test_unknown_models_are_never_pre_blocked() -> None:
    check_settings(
        "gpt-7-experimental", ModelSettings(reasoning_effort="minimal", temperature=2.0, verbosity="high")
    )


def test_reasoning_model_flag_from_profile_or_name() -> None:
    assert is_reasoning_model("gpt-5.2-pro")
    assert not is_reasoning_model("gpt-5-chat-latest")
    assert is_reasoning_model("o4-mini")
    assert is_reasoning_model("gpt-5.9-future")
    assert not is_reasoning_model("gpt-4.1")
