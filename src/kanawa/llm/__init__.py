"""The LLM layer: the :class:`LLMAdapter` protocol, settings, errors, model strings and test models.

Provider adapters (``openai_responses``, ``openai_chat``, ``anthropic``, ``gemini``) are separate
modules imported only when a model string names them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kanawa._lazy import lazy_exports

# Loaded on first use: a run imports the modules it needs (the adapter protocol, the
# settings), not every error class and helper of the layer.
_EXPORTS: dict[str, str] = {
    "LLMAdapter": "kanawa.llm.adapter",
    "SupportsToolSpec": "kanawa.llm.adapter",
    "ToolLike": "kanawa.llm.adapter",
    "tool_specs": "kanawa.llm.adapter",
    "LLMAuthError": "kanawa.llm.errors",
    "LLMBadRequestError": "kanawa.llm.errors",
    "LLMConnectionError": "kanawa.llm.errors",
    "LLMError": "kanawa.llm.errors",
    "LLMRateLimitError": "kanawa.llm.errors",
    "LLMStreamInterruptedError": "kanawa.llm.errors",
    "LLMTimeoutError": "kanawa.llm.errors",
    "is_context_length_error": "kanawa.llm.errors",
    "parse_model_string": "kanawa.llm.models",
    "resolve_model": "kanawa.llm.models",
    "ModelSettings": "kanawa.llm.settings",
    "PromptCache": "kanawa.llm.settings",
}

if TYPE_CHECKING:
    from kanawa.llm.adapter import LLMAdapter, SupportsToolSpec, ToolLike, tool_specs
    from kanawa.llm.errors import (
        LLMAuthError,
        LLMBadRequestError,
        LLMConnectionError,
        LLMError,
        LLMRateLimitError,
        LLMStreamInterruptedError,
        LLMTimeoutError,
        is_context_length_error,
    )
    from kanawa.llm.models import parse_model_string, resolve_model
    from kanawa.llm.settings import ModelSettings, PromptCache

__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)

__all__ = [
    "LLMAdapter",
    "LLMAuthError",
    "LLMBadRequestError",
    "LLMConnectionError",
    "LLMError",
    "LLMRateLimitError",
    "LLMStreamInterruptedError",
    "LLMTimeoutError",
    "ModelSettings",
    "PromptCache",
    "SupportsToolSpec",
    "ToolLike",
    "is_context_length_error",
    "parse_model_string",
    "resolve_model",
    "tool_specs",
]
