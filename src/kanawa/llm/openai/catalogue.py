"""What each GPT-5 family model accepts, as data (seed 001 §3.4, §3.5).

Model differences are flags in a :class:`ModelProfile`, consulted by :func:`check_settings` before a
request is sent, so a setting the model would refuse fails at once with a message that names the
allowed values instead of a round trip and an opaque 400. Unknown models are never checked (seed 001
§3.4: availability is not pre-blocked; the API decides at run time).

A name matches a profile when it is the profile's name or that name plus a dated snapshot suffix
(``gpt-5-2025-08-07`` → ``gpt-5``); ``gpt-5-mini`` is its own profile, not a snapshot of ``gpt-5``.

Sources and uncertainty: OpenAI's API reference for ``reasoning.effort`` (models before gpt-5.1 do not
accept ``none``; gpt-5.1 accepts none/low/medium/high; ``xhigh`` exists from gpt-5.1-codex-max on;
gpt-5-pro accepts only high) and the server's own "Unsupported value" errors as reported publicly.
Less certain: the codex models accepting only ``verbosity="medium"``; gpt-5.1/gpt-5.2 accepting
``temperature``/``top_p`` only with effort ``none`` (their default); gpt-5.3-codex following
gpt-5.2-codex; gpt-5.4-nano taking gpt-5.4-mini's efforts and gpt-5.5-pro taking gpt-5.4-pro's (no
page states theirs; the card's notes in ``kanawa/llm/catalogue/models.json`` say what was copied).
When a profile is wrong, fix the data here — nothing else branches on model names.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, TypeAlias

from kanawa.llm.errors import LLMBadRequestError
from kanawa.llm.settings import ModelSettings

__all__ = [
    "EFFORT_ORDER",
    "PROFILES",
    "ModelProfile",
    "Sampling",
    "check_settings",
    "is_reasoning_model",
    "profile_for",
]

EFFORT_ORDER = ("none", "minimal", "low", "medium", "high", "xhigh")
VERBOSITY_ORDER = ("low", "medium", "high")

Sampling: TypeAlias = Literal["never", "without_reasoning", "always"]
"""When ``temperature``/``top_p`` are accepted: never, only with effort ``none``, or always."""

_ALL_VERBOSITY = frozenset(VERBOSITY_ORDER)
_MEDIUM_ONLY = frozenset({"medium"})


@dataclass(frozen=True, slots=True)
class ModelProfile:
    """Capabilities of one model (and its dated snapshots).

    ``efforts`` empty means the model takes no ``reasoning.effort`` at all. ``default_effort`` is what
    the server uses when none is sent (it decides whether ``Sampling="without_reasoning"`` applies).
    """

    name: str
    efforts: frozenset[str]
    default_effort: str | None
    verbosities: frozenset[str] = _ALL_VERBOSITY
    sampling: Sampling = "never"
    supports_reasoning_summary: bool = True

    @property
    def reasoning(self) -> bool:
        """Whether the model reasons (then its encrypted reasoning items must round-trip)."""
        return bool(self.efforts)


def _p(
    name: str,
    efforts: str,
    default: str | None,
    *,
    verbosities: frozenset[str] = _ALL_VERBOSITY,
    sampling: Sampling = "never",
    summary: bool = True,
) -> ModelProfile:
    return ModelProfile(name, frozenset(efforts.split()), default, verbosities, sampling, summary)


_GPT5 = "minimal low medium high"
_CODEX = "low medium high"
_CODEX_X = "low medium high xhigh"
_NONE_X = "none low medium high xhigh"
_PRO_X = "medium high xhigh"

PROFILES: dict[str, ModelProfile] = {
    p.name: p
    for p in (
        _p("gpt-5", _GPT5, "medium"),
        _p("gpt-5-mini", _GPT5, "medium"),
        _p("gpt-5-nano", _GPT5, "medium"),
        _p("gpt-5-pro", "high", "high"),
        _p("gpt-5-chat-latest", "", None, verbosities=_MEDIUM_ONLY, sampling="always", summary=False),
        _p("gpt-5-codex", _CODEX, "medium", verbosities=_MEDIUM_ONLY),
        _p("gpt-5.1", "none low medium high", "none", sampling="without_reasoning"),
        _p("gpt-5.1-chat-latest", "medium", "medium", verbosities=_MEDIUM_ONLY),
        _p("gpt-5.1-codex", _CODEX, "medium", verbosities=_MEDIUM_ONLY),
        _p("gpt-5.1-codex-mini", _CODEX, "medium", verbosities=_MEDIUM_ONLY),
        _p("gpt-5.1-codex-max", _CODEX_X, "medium", verbosities=_MEDIUM_ONLY),
        _p("gpt-5.2", "none low medium high xhigh", "none", sampling="without_reasoning"),
        _p("gpt-5.2-chat-latest", "medium", "medium", verbosities=_MEDIUM_ONLY),
        _p("gpt-5.2-pro", "medium high xhigh", "medium"),
        _p("gpt-5.2-codex", _CODEX_X, "medium", verbosities=_MEDIUM_ONLY),
        _p("gpt-5.3-codex", _CODEX_X, "medium", verbosities=_MEDIUM_ONLY),
        _p("gpt-5.4", _NONE_X, "none", sampling="without_reasoning"),
        _p("gpt-5.4-mini", _NONE_X, "none", sampling="without_reasoning"),
        _p("gpt-5.4-nano", _NONE_X, "none", sampling="without_reasoning"),
        _p("gpt-5.4-pro", _PRO_X, "medium"),
        _p("gpt-5.5", _NONE_X, "none", sampling="without_reasoning"),
        _p("gpt-5.5-pro", _PRO_X, "medium"),
    )
}
"""Known models by canonical name."""

_SNAPSHOT = re.compile(r"^(?P<base>.+?)-\d{4}-\d{2}-\d{2}$")
_REASONING_PREFIXES = ("gpt-5", "o1", "o3", "o4")


def profile_for(model: str) -> ModelProfile | None:
    """The profile of ``model`` or of the model it is a dated snapshot of; ``None`` when unknown."""
    name = model.strip().lower()
    profile = PROFILES.get(name)
    if profile is None and (match := _SNAPSHOT.match(name)):
        profile = PROFILES.get(match["base"])
    return profile


def is_reasoning_model(model: str) -> bool:
    """Whether ``model`` reasons: its profile says so, else a guess from the name for unknown models
    (``gpt-5*``, ``o1*``, ``o3*``, ``o4*``)."""
    profile = profile_for(model)
    if profile is not None:
        return profile.reasoning
    return model.strip().lower().startswith(_REASONING_PREFIXES)


def _ordered(values: Iterable[str], order: tuple[str, ...]) -> str:
    present = set(values)
    return ", ".join(v for v in order if v in present)


def check_settings(model: str, settings: ModelSettings) -> None:
    """Raise :class:`LLMBadRequestError` if ``settings`` asks for something ``model`` refuses.

    Unknown models pass unchecked. The message names the setting, the model and what it allows, e.g.
    ``reasoning_effort 'minimal' is not supported by gpt-5.2 (allowed: none, low, medium, high, xhigh)``.
    """
    profile = profile_for(model)
    if profile is None:
        return

    def refuse(message: str) -> LLMBadRequestError:
        return LLMBadRequestError(message, provider="openai", model=model, code="unsupported_value")

    effort = settings.reasoning_effort
    if effort is not None:
        if not profile.efforts:
            raise refuse(f"reasoning_effort is not supported by {profile.name} (it is not a reasoning model)")
        if effort not in profile.efforts:
            allowed = _ordered(profile.efforts, EFFORT_ORDER)
            raise refuse(
                f"reasoning_effort '{effort}' is not supported by {profile.name} (allowed: {allowed})"
            )
    if settings.reasoning_summary is not None and not profile.supports_reasoning_summary:
        raise refuse(f"reasoning_summary is not supported by {profile.name}")
    if settings.verbosity is not None and settings.verbosity not in profile.verbosities:
        allowed = _ordered(profile.verbosities, VERBOSITY_ORDER)
        verbosity = settings.verbosity
        raise refuse(f"verbosity '{verbosity}' is not supported by {profile.name} (allowed: {allowed})")
    for knob in ("temperature", "top_p"):
        if getattr(settings, knob) is None:
            continue
        effective = effort if effort is not None else profile.default_effort
        if profile.sampling == "never":
            raise refuse(f"{knob} is not supported by {profile.name} (a reasoning model; leave it unset)")
        if profile.sampling == "without_reasoning" and effective != "none":
            raise refuse(f"{knob} is supported by {profile.name} only with reasoning_effort 'none'")
