"""The LLM layer: the :class:`LLMAdapter` protocol, settings, errors, model strings and test models.

Provider adapters (``openai_responses``, ``openai_chat``, ``anthropic``, ``gemini``) are separate
modules imported only when a model string names them.
"""

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
