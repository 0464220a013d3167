"""The provider credential form (seed 001 §3.3) as kanawa's normalised credentials.

``openai_api_key`` required; ``openai_organization`` stripped; ``openai_api_base`` gets ``/v1``;
``request_timeout_seconds`` clamped to 30..900; ``max_retries`` clamped to 0..5 — all by
:class:`kanawa.llm.openai.credentials.OpenAICredentials`, which this module only adapts to Dify's
error type.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

from dify_plugin.errors.model import CredentialsValidateFailedError

from kanawa.llm.openai.credentials import OpenAICredentials
from kanawa.llm.openai.responses_sync import OpenAIResponsesSyncClient

__all__ = ["client_for", "normalize_credentials"]


def normalize_credentials(credentials: Mapping[str, object]) -> OpenAICredentials:
    """Normalise the form; a missing key is a ``CredentialsValidateFailedError`` (§3.3 "欠落時は失敗")."""
    try:
        return OpenAICredentials.from_dict(credentials)
    except ValueError as exc:
        raise CredentialsValidateFailedError(str(exc)) from None


@functools.lru_cache(maxsize=32)
def client_for(credentials: OpenAICredentials) -> OpenAIResponsesSyncClient:
    """One client (and its connection pool) per distinct credentials, kept for the process's life.

    Building an HTTP client costs more than a short request (TLS context, pool); Dify sends the same
    credentials with every call. A client evicted from this small cache is closed when collected.
    """
    return OpenAIResponsesSyncClient(credentials)
