"""Gemini: the ``google-genai`` adapter, its request config, payload, response parser and errors.

The adapter imports the ``google-genai`` SDK; this package imports it only when first read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kanawa._lazy import lazy_exports

_EXPORTS = {"GeminiAdapter": "kanawa.llm.gemini.adapter"}

if TYPE_CHECKING:
    from kanawa.llm.gemini.adapter import GeminiAdapter

__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)

__all__ = ["GeminiAdapter"]
