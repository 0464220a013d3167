"""Provider credential validation (seed 001 §3.8): ``GET /models`` with the normalised credentials."""

from __future__ import annotations

from collections.abc import Mapping

from dify_plugin import ModelProvider
from dify_plugin.errors.model import CredentialsValidateFailedError
from internal.credentials import normalize_credentials

from kanawa.llm.errors import LLMError
from kanawa.llm.openai.responses_sync import OpenAIResponsesSyncClient


class OpenAIGPT5Provider(ModelProvider):
    """``openai_gpt5``: validates the provider form by listing models (connectivity and key)."""

    def validate_provider_credentials(self, credentials: Mapping) -> None:  # type: ignore[type-arg]
        creds = normalize_credentials(credentials)
        try:
            with OpenAIResponsesSyncClient(creds) as client:
                client.list_models()
        except LLMError as exc:
            raise CredentialsValidateFailedError(str(exc)) from None
