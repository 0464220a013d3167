"""OpenAI: the Responses API adapter (GPT-5 family) and the Chat Completions adapter (any
OpenAI-compatible server), both also on Azure OpenAI, with the pieces the Dify plugins reuse (payload
builder, credentials, model catalogue, audit log, and the blocking Responses caller for gevent hosts).

The adapters import the ``openai`` SDK; this package imports them only when one is first read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kanawa._lazy import lazy_exports

_EXPORTS = {
    "AzureOpenAIAdapter": "kanawa.llm.openai.azure",
    "AzureOpenAIChatAdapter": "kanawa.llm.openai.azure",
    "OpenAIResponsesAdapter": "kanawa.llm.openai.responses",
    "OpenAIChatAdapter": "kanawa.llm.openai.chat",
    "OpenAIResponsesSyncClient": "kanawa.llm.openai.responses_sync",
}

if TYPE_CHECKING:
    from kanawa.llm.openai.azure import AzureOpenAIAdapter, AzureOpenAIChatAdapter
    from kanawa.llm.openai.chat import OpenAIChatAdapter
    from kanawa.llm.openai.responses import OpenAIResponsesAdapter
    from kanawa.llm.openai.responses_sync import OpenAIResponsesSyncClient

__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)

__all__ = [
    "AzureOpenAIAdapter",
    "AzureOpenAIChatAdapter",
    "OpenAIChatAdapter",
    "OpenAIResponsesAdapter",
    "OpenAIResponsesSyncClient",
]
