"""Dify model parameters and tools as kanawa request settings (seed 001 §3.5, §3.6, §6).

Every parameter of §3.5 is declared in each model YAML (the SDK drops undeclared ones before
``_invoke``); a parameter the form left out takes the §6 default. Bool-likes go through kanawa's strict
:func:`~kanawa.llm.openai.credentials.coerce_bool`, ``json_schema`` through
:func:`~kanawa.llm.openai.credentials.validate_json_schema`. ``stop`` becomes ``settings.stop``: kanawa's
builder then sends ``truncation="disabled"`` instead of ``stop`` (which GPT-5 rejects) and applies the
stop words to the answer client-side.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import cast

from dify_plugin.entities.model.message import PromptMessageTool

from kanawa.llm.openai.credentials import coerce_bool, validate_json_schema
from kanawa.llm.settings import ModelSettings, ReasoningEffort, ReasoningSummary, ResponseFormat, Verbosity
from kanawa.types import ToolSpec

__all__ = ["DEFAULTS", "settings_from_parameters", "tool_specs_from_dify"]

DEFAULTS: Mapping[str, object] = {
    "max_output_tokens": 8192,
    "reasoning_effort": "medium",
    "reasoning_summary": "auto",
    "verbosity": "medium",
    "response_format": "text",
    "tool_choice": "auto",
    "parallel_tool_calls": True,
    "enable_stream": True,
}
"""Seed 001 §6 (plugin A) defaults, used for any parameter the request does not carry."""

_CHOICES: Mapping[str, tuple[str, ...]] = {
    "reasoning_effort": ("none", "minimal", "low", "medium", "high", "xhigh"),
    "reasoning_summary": ("auto", "concise", "detailed"),
    "verbosity": ("low", "medium", "high"),
    "response_format": ("text", "json_schema"),
}


def _choice(parameters: Mapping[str, object], name: str) -> str:
    value = parameters.get(name, DEFAULTS[name])
    if value is None or value == "":
        value = DEFAULTS[name]
    if not isinstance(value, str) or value not in _CHOICES[name]:
        raise ValueError(f"{name} must be one of {', '.join(_CHOICES[name])}")
    return value


def _max_output_tokens(parameters: Mapping[str, object]) -> int:
    value = parameters.get("max_output_tokens", DEFAULTS["max_output_tokens"])
    if value is None:
        value = DEFAULTS["max_output_tokens"]
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 128000:
        raise ValueError("max_output_tokens must be an integer in 1..128000")
    return value


def settings_from_parameters(
    parameters: Mapping[str, object], stop: Sequence[str] | None = None
) -> ModelSettings:
    """The :class:`ModelSettings` of one request (mapping table in seed 001 §3.6)."""
    response_format = _choice(parameters, "response_format")
    json_schema = None
    if response_format == "json_schema":
        json_schema = validate_json_schema(parameters.get("json_schema") or "")
    tool_choice = parameters.get("tool_choice") or DEFAULTS["tool_choice"]
    if not isinstance(tool_choice, str) or not tool_choice.strip():
        raise ValueError("tool_choice must be auto, none, required or a tool name")
    return ModelSettings(
        max_output_tokens=_max_output_tokens(parameters),
        reasoning_effort=cast(ReasoningEffort, _choice(parameters, "reasoning_effort")),
        reasoning_summary=cast(ReasoningSummary, _choice(parameters, "reasoning_summary")),
        verbosity=cast(Verbosity, _choice(parameters, "verbosity")),
        response_format=cast(ResponseFormat, response_format),
        json_schema=json_schema,
        tool_choice=tool_choice.strip(),
        parallel_tool_calls=coerce_bool(
            parameters.get("parallel_tool_calls", DEFAULTS["parallel_tool_calls"]),
            field="parallel_tool_calls",
        ),
        stream=coerce_bool(parameters.get("enable_stream", DEFAULTS["enable_stream"]), field="enable_stream"),
        stop=tuple(s for s in (stop or ()) if s),
    )


def tool_specs_from_dify(tools: Sequence[PromptMessageTool] | None) -> list[ToolSpec]:
    """Dify tools as kanawa specs; a nameless tool is refused by kanawa's builder (``ValueError``)."""
    return [
        ToolSpec(name=t.name, description=t.description or "", parameters=dict(t.parameters))
        for t in tools or ()
    ]
