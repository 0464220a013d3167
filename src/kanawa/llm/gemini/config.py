"""Settings, tools, thinking and structured output → a Gemini ``GenerateContentConfig`` (seed 002 §3-3,
seed 001 §3.5).

Pure functions, no I/O. :class:`ModelProfile` is the small catalogue of model-family differences the
request depends on (thinking level vs budget, Pro limits, models that do not think).

Settings (``None`` = not sent)
    ``max_output_tokens``, ``temperature``, ``top_p``, ``stop`` → ``stop_sequences``, ``seed``;
    ``reasoning_effort`` → ``thinking_config`` (table below); ``reasoning_summary`` (any value) →
    ``include_thoughts``; ``tool_choice`` → ``function_calling_config`` (``auto``→AUTO,
    ``none``→NONE, ``required``→ANY, a tool name → ANY restricted to it); a response schema (or
    ``response_format="json_schema"`` with ``json_schema``) → ``response_mime_type`` JSON plus
    ``response_json_schema``; ``cache.cached_content`` → ``cached_content`` (and then no system
    instruction, tools or tool config: they live in the cache, and the API refuses them beside it).
    ``verbosity`` and ``parallel_tool_calls`` have no Gemini equivalent and
    are not sent. ``extra`` is merged into the request body as wire JSON (camelCase keys, e.g.
    ``{"generationConfig": {"topK": 40}}``) by the SDK's ``extra_body``.

Reasoning effort (``gemini-3`` and later take a thinking *level*, 2.5 a token *budget*; 1.x/2.0 and
Gemma do not think and get no ``thinking_config``):

=========  =========================  ==================  ===================
effort     Gemini 3+ level            2.5 budget          2.5 Pro budget
=========  =========================  ==================  ===================
none       MINIMAL (Pro: LOW)         0 (thinking off)    128 (cannot be off)
minimal    MINIMAL (Pro: LOW)         512                 128
low        LOW                        1024                1024
medium     MEDIUM                     8192                8192
high       HIGH                       24576               32768
xhigh      HIGH                       24576               32768
=========  =========================  ==================  ===================
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from google.genai import types

from kanawa.llm.errors import LLMBadRequestError
from kanawa.llm.gemini.payload import PROVIDER
from kanawa.llm.settings import ModelSettings, ReasoningEffort
from kanawa.types import JsonObject, OutputSchema, ToolSpec

_MAJOR_VERSION = re.compile(r"gemini-(\d+)")
_NON_THINKING = re.compile(r"^(?:gemini-1\.|gemini-2\.0|gemma)")
_LEVELS: dict[ReasoningEffort, types.ThinkingLevel] = {
    "none": types.ThinkingLevel.MINIMAL,
    "minimal": types.ThinkingLevel.MINIMAL,
    "low": types.ThinkingLevel.LOW,
    "medium": types.ThinkingLevel.MEDIUM,
    "high": types.ThinkingLevel.HIGH,
    "xhigh": types.ThinkingLevel.HIGH,
}
_BUDGETS: dict[ReasoningEffort, int] = {
    "none": 0,
    "minimal": 512,
    "low": 1024,
    "medium": 8192,
    "high": 24576,
    "xhigh": 24576,
}
_PRO_BUDGETS: dict[ReasoningEffort, int] = {
    **_BUDGETS,
    "none": 128,
    "minimal": 128,
    "high": 32768,
    "xhigh": 32768,
}


# --------------------------------------------------------------------------------- model families


@dataclass(frozen=True, slots=True)
class ModelProfile:
    """What the adapter needs to know about a Gemini model name (a catalogue, not scattered checks)."""

    thinks: bool
    uses_thinking_level: bool
    is_pro: bool

    @classmethod
    def of(cls, model: str) -> ModelProfile:
        """Profile of a normalised model name (``gemini-2.5-flash``, ``gemini-3-pro-preview`` …)."""
        match = _MAJOR_VERSION.search(model)
        major = int(match.group(1)) if match else 0
        return cls(
            thinks=not _NON_THINKING.match(model),
            uses_thinking_level=major >= 3,
            is_pro="-pro" in model,
        )


def thinking_config(settings: ModelSettings, profile: ModelProfile) -> types.ThinkingConfig | None:
    """Map ``reasoning_effort`` / ``reasoning_summary`` onto Gemini's thinking config (module table)."""
    effort = settings.reasoning_effort
    include = settings.reasoning_summary is not None
    if not profile.thinks or (effort is None and not include):
        return None
    include_thoughts = True if include else None
    if effort is None:
        return types.ThinkingConfig(include_thoughts=include_thoughts)
    if profile.uses_thinking_level:
        level = _LEVELS[effort]
        if profile.is_pro and level is types.ThinkingLevel.MINIMAL:
            level = types.ThinkingLevel.LOW
        return types.ThinkingConfig(include_thoughts=include_thoughts, thinking_level=level)
    budget = (_PRO_BUDGETS if profile.is_pro else _BUDGETS)[effort]
    return types.ThinkingConfig(include_thoughts=include_thoughts, thinking_budget=budget)


# ------------------------------------------------------------------------------------------ config


def build_config(
    settings: ModelSettings,
    *,
    profile: ModelProfile,
    system: types.Content | None,
    tools: Sequence[ToolSpec],
    response_schema: OutputSchema | None,
    timeout: float | None,
) -> types.GenerateContentConfig:
    """The request config: generation settings, thinking, tools, structured output, HTTP options.

    The SDK's client-side helpers are switched off (automatic function calling — kanawa runs tools
    itself; automatic continuation — one call is one request). ``timeout`` (seconds) becomes the
    SDK's per-request timeout in milliseconds; ``settings.extra`` becomes the SDK's ``extra_body``.
    """
    schema = _output_schema(settings, response_schema)
    cached_content = settings.cache.cached_content if settings.cache is not None else None
    if cached_content is not None:
        system, tools = None, ()
    return types.GenerateContentConfig(
        cached_content=cached_content,
        system_instruction=system,
        max_output_tokens=settings.max_output_tokens,
        temperature=settings.temperature,
        top_p=settings.top_p,
        stop_sequences=list(settings.stop) or None,
        seed=settings.seed,
        thinking_config=thinking_config(settings, profile),
        tools=[types.Tool(function_declarations=[_declaration(t) for t in tools])] if tools else None,
        tool_config=_tool_config(settings.tool_choice, tools),
        response_mime_type="application/json" if schema is not None else None,
        response_json_schema=schema,
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
        automatic_continuation=False,
        http_options=types.HttpOptions(
            timeout=round(timeout * 1000) if timeout is not None else None,
            extra_body=dict(settings.extra) or None,
        ),
    )


def _output_schema(settings: ModelSettings, response_schema: OutputSchema | None) -> JsonObject | None:
    if response_schema is not None:
        return response_schema.schema
    if settings.response_format == "json_schema" and settings.json_schema is not None:
        return settings.json_schema
    return None


def _declaration(spec: ToolSpec) -> types.FunctionDeclaration:
    """A function declaration with the tool's JSON schema as is (``parametersJsonSchema``); a tool
    without parameters is declared without a schema, which Gemini reads as "no arguments"."""
    properties = spec.parameters.get("properties")
    has_parameters = isinstance(properties, dict) and bool(properties)
    return types.FunctionDeclaration(
        name=spec.name,
        description=spec.description or None,
        parameters_json_schema=spec.parameters if has_parameters else None,
    )


def _tool_config(choice: str | None, tools: Sequence[ToolSpec]) -> types.ToolConfig | None:
    if choice is None or not tools:
        return None
    allowed: list[str] | None = None
    if choice == "auto":
        mode = types.FunctionCallingConfigMode.AUTO
    elif choice == "none":
        mode = types.FunctionCallingConfigMode.NONE
    elif choice in ("required", "any"):
        mode = types.FunctionCallingConfigMode.ANY
    else:
        if choice not in {t.name for t in tools}:
            raise LLMBadRequestError(
                f"tool_choice {choice!r} is not one of the offered tools", provider=PROVIDER
            )
        mode, allowed = types.FunctionCallingConfigMode.ANY, [choice]
    return types.ToolConfig(
        function_calling_config=types.FunctionCallingConfig(mode=mode, allowed_function_names=allowed)
    )
