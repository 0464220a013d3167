"""Model settings: one frozen object shared by every adapter (seed 001 §3.5).

``None`` means "the provider's default": adapters send only what is set, so a setting a provider
does not know is never sent to it by accident. Provider-only knobs go in ``extra`` and are merged into
the request body verbatim.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass, field
from typing import Literal, TypeAlias

from kanawa.types import JsonObject, JsonValue

ReasoningEffort: TypeAlias = Literal["none", "minimal", "low", "medium", "high", "xhigh"]
ReasoningSummary: TypeAlias = Literal["auto", "concise", "detailed"]
Verbosity: TypeAlias = Literal["low", "medium", "high"]
ResponseFormat: TypeAlias = Literal["text", "json_schema"]
CacheBreakpoint: TypeAlias = Literal["tools", "system", "messages"]
"""Where an Anthropic ``cache_control`` breakpoint goes: after the last tool, after the system text,
after the last content block of the last user turn."""
CacheTtl: TypeAlias = Literal["5m", "1h"]
CacheRetention: TypeAlias = Literal["in_memory", "24h"]

_BREAKPOINTS: tuple[CacheBreakpoint, ...] = ("tools", "system", "messages")


@dataclass(frozen=True, slots=True)
class PromptCache:
    """Prompt caching for one request: what each provider needs to reuse a repeated prompt prefix.

    A cached prefix is billed at a fraction of the input price (and, on Anthropic, written once at a
    premium), so a long system prompt, tool list or conversation history that repeats from step to
    step costs far less. Each provider takes what applies to it and ignores the rest:

    * Anthropic caches only where the request marks it: one ``cache_control`` breakpoint per place in
      ``breakpoints`` (default: the tools, the system text and the last user turn — three of the
      API's four), with ``ttl`` ``"5m"`` (the API's default) or ``"1h"``.
    * OpenAI (Responses and Chat Completions) caches prefixes by itself; ``key`` is sent as
      ``prompt_cache_key`` (requests sharing a key are routed to the same cache) and ``retention`` as
      ``prompt_cache_retention`` (``"in_memory"`` or ``"24h"``).
    * Gemini caches implicitly (its cached tokens are reported either way); ``cached_content`` names
      an explicit cache made with the Gemini caching API (``cachedContents/...``). Such a cache holds
      its own system instruction and tools, and the API refuses a request that sends them again, so
      with ``cached_content`` set kanawa sends neither.
    """

    _: KW_ONLY
    breakpoints: tuple[CacheBreakpoint, ...] = _BREAKPOINTS
    ttl: CacheTtl | None = None
    key: str | None = None
    retention: CacheRetention | None = None
    cached_content: str | None = None

    def __post_init__(self) -> None:
        unknown = [b for b in self.breakpoints if b not in _BREAKPOINTS]
        if unknown:
            raise ValueError(f"cache breakpoints must be among {list(_BREAKPOINTS)}, not {unknown}")
        if self.ttl is not None and self.ttl not in ("5m", "1h"):
            raise ValueError(f"cache ttl must be '5m' or '1h', not {self.ttl!r}")
        if self.retention is not None and self.retention not in ("in_memory", "24h"):
            raise ValueError(f"cache retention must be 'in_memory' or '24h', not {self.retention!r}")
        for name in ("key", "cached_content"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, str) or not value.strip()):
                raise ValueError(f"cache {name} must be a non-empty string")


@dataclass(frozen=True, slots=True)
class ModelSettings:
    """Settings for one model request.

    Attributes mirror seed 001 §3.5 (``max_output_tokens``, ``reasoning_effort``,
    ``reasoning_summary``, ``verbosity``, ``response_format``/``json_schema``, ``tool_choice``,
    ``parallel_tool_calls``, ``stream``, ``stop``) plus the sampling knobs non-reasoning models use.
    ``tool_choice`` is ``"auto"``, ``"none"``, ``"required"`` or a tool name.
    ``timeout`` is seconds for one request (the whole stream included).
    ``cache`` turns prompt caching on (:class:`PromptCache`: Anthropic breakpoints, OpenAI cache key
    and retention, a Gemini cached content).
    ``extra`` is provider pass-through merged into the request body as given.
    """

    _: KW_ONLY
    max_output_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    reasoning_effort: ReasoningEffort | None = None
    reasoning_summary: ReasoningSummary | None = None
    verbosity: Verbosity | None = None
    response_format: ResponseFormat | None = None
    json_schema: JsonObject | None = None
    tool_choice: str | None = None
    parallel_tool_calls: bool | None = None
    stream: bool | None = None
    stop: tuple[str, ...] = ()
    timeout: float | None = None
    seed: int | None = None
    cache: PromptCache | None = None
    extra: Mapping[str, JsonValue] = field(default_factory=dict)

    def merged(self, override: ModelSettings | None) -> ModelSettings:
        """Return these settings with every field that ``override`` sets taken from it."""
        if override is None:
            return self
        changes: dict[str, object] = {}
        for f in dataclasses.fields(self):
            value = getattr(override, f.name)
            if f.name == "extra":
                if value:
                    changes["extra"] = {**self.extra, **value}
            elif f.name == "stop":
                if value:
                    changes["stop"] = value
            elif value is not None:
                changes[f.name] = value
        return dataclasses.replace(self, **changes) if changes else self  # type: ignore[arg-type]
