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


@dataclass(frozen=True, slots=True)
class ModelSettings:
    """Settings for one model request.

    Attributes mirror seed 001 §3.5 (``max_output_tokens``, ``reasoning_effort``,
    ``reasoning_summary``, ``verbosity``, ``response_format``/``json_schema``, ``tool_choice``,
    ``parallel_tool_calls``, ``stream``, ``stop``) plus the sampling knobs non-reasoning models use.
    ``tool_choice`` is ``"auto"``, ``"none"``, ``"required"`` or a tool name.
    ``timeout`` is seconds for one request (the whole stream included).
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
