"""A provider's embedding API: any OpenAI-compatible ``/embeddings`` endpoint (OpenAI, Azure-style
proxies, vLLM, Ollama, LM Studio …) through the official ``openai`` client (the ``openai`` extra).

Keys follow the chat adapter's rule (DESIGN.md): ``api_key=``, then ``KANAWA_CHAT_API_KEY``, then
``OPENAI_API_KEY`` only when the host is OpenAI's own, so a key is never sent to a third-party server
by accident. Errors surface as :class:`~kanawa.llm.errors.LLMError` subclasses, masked like the chat
adapter's. Texts go in batches of ``batch_size`` per request, rows come back in input order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from kanawa.agents.memory.embeddings.base import TextKind, Vectors, normalise_rows
from kanawa.llm.errors import seal_errors
from kanawa.secrets import guard_credentials

if TYPE_CHECKING:
    import openai


class OpenAIEmbedder:
    """Embeddings from ``model`` (e.g. ``"text-embedding-3-small"``) at ``base_url``.

    Args:
        model: the embedding model name the server knows.
        dim: the vector length the model returns (``dimensions`` is sent when the model can shorten
            its output, i.e. ``text-embedding-3-*``).
        base_url: where the server is (see the module docstring).
        api_key: with what key (see the module docstring).
        query_prefix: prepended to query texts (``"query: "`` for e5 models served behind the API;
            empty by default).
        passage_prefix: prepended to passage texts (``"passage: "`` for e5 models; empty by default).
        batch_size: texts per request (OpenAI accepts up to 2,048).
    """

    provider = "openai"

    def __init__(
        self,
        *,
        model: str = "text-embedding-3-small",
        dim: int = 1536,
        base_url: str | None = None,
        api_key: str | None = None,
        query_prefix: str = "",
        passage_prefix: str = "",
        batch_size: int = 256,
        timeout: float | None = None,
    ) -> None:
        if batch_size < 1 or dim < 1:
            raise ValueError("batch_size and dim must be >= 1")
        self._model = model
        self._dim = dim
        self._base_url = base_url
        self._api_key = api_key
        self._prefixes: dict[TextKind, str] = {"query": query_prefix, "passage": passage_prefix}
        self._batch_size = batch_size
        self._timeout = timeout
        self._client: openai.AsyncOpenAI | None = None

    @property
    def name(self) -> str:
        return f"openai:{self._model}@{self._base_url or 'api.openai.com'}:{self._dim}"

    @property
    def dim(self) -> int:
        return self._dim

    async def aclose(self) -> None:
        """Close the HTTP connections of the client this embedder built."""
        if self._client is not None:
            client, self._client = self._client, None
            await client.close()

    def _get_client(self) -> openai.AsyncOpenAI:
        if self._client is None:
            from kanawa.llm.openai.chat import chat_api_key
            from kanawa.llm.openai.common import build_client

            key = self._api_key or chat_api_key(self._base_url)
            self._client = build_client(
                api_key=key, base_url=self._base_url, timeout=self._timeout, require_key=False
            )
            guard_credentials(self._client.api_key)
        return self._client

    @seal_errors
    async def aembed(self, texts: Sequence[str], *, kind: TextKind) -> Vectors:
        from kanawa.llm.openai.common import MAPPED_EXCEPTIONS, map_openai_error

        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        client = self._get_client()
        prefix = self._prefixes[kind]
        parts: list[Vectors] = []
        for start in range(0, len(texts), self._batch_size):
            batch = [prefix + text for text in texts[start : start + self._batch_size]]
            try:
                if self._model.startswith("text-embedding-3"):  # these can shorten their output
                    response = await client.embeddings.create(
                        model=self._model, input=batch, encoding_format="float", dimensions=self._dim
                    )
                else:
                    response = await client.embeddings.create(
                        model=self._model, input=batch, encoding_format="float"
                    )
            except MAPPED_EXCEPTIONS as exc:
                raise map_openai_error(exc, provider=self.provider, model=self._model) from None
            rows = sorted(response.data, key=lambda item: item.index)
            if len(rows) != len(batch):
                from kanawa.llm.errors import LLMError

                raise LLMError(
                    f"the embedding server returned {len(rows)} vectors for {len(batch)} texts",
                    provider=self.provider,
                    model=self._model,
                )
            matrix = normalise_rows([row.embedding for row in rows])
            if matrix.shape[1] != self._dim:
                from kanawa.llm.errors import LLMError

                raise LLMError(
                    f"the embedding model returned {matrix.shape[1]} dimensions, expected {self._dim}",
                    provider=self.provider,
                    model=self._model,
                )
            parts.append(matrix)
        return np.concatenate(parts, axis=0)


__all__ = ["OpenAIEmbedder"]
