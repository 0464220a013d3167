"""Anthropic: the Messages API adapter (also on Amazon Bedrock), its payload builder and response parser.

The adapter imports the ``anthropic`` SDK; this package imports it only when first read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kanawa._lazy import lazy_exports

_EXPORTS = {
    "AnthropicAdapter": "kanawa.llm.anthropic.adapter",
    "BedrockAnthropicAdapter": "kanawa.llm.anthropic.bedrock",
}

if TYPE_CHECKING:
    from kanawa.llm.anthropic.adapter import AnthropicAdapter
    from kanawa.llm.anthropic.bedrock import BedrockAnthropicAdapter

__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)

__all__ = ["AnthropicAdapter", "BedrockAnthropicAdapter"]
