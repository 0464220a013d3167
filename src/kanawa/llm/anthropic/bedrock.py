"""Claude on Amazon Bedrock: ``bedrock:<model id>`` through the Anthropic SDK's ``AsyncAnthropicBedrock``.

The Messages API is the same as Anthropic's own, so this is :class:`AnthropicAdapter` with another
client: requests go to ``POST /model/<model id>/invoke`` and ``/invoke-with-response-stream`` on
``bedrock-runtime.<region>.amazonaws.com``, signed with AWS Signature Version 4 by botocore, and a
stream arrives as AWS event-stream frames (``application/vnd.amazon.eventstream``) that the SDK turns
back into the Messages API's events.

Settings, each an argument or else the usual AWS environment:

* the region: ``aws_region``, else ``AWS_REGION`` / ``AWS_DEFAULT_REGION``, else the profile's;
* credentials: ``aws_access_key`` / ``aws_secret_key`` / ``aws_session_token``, else ``aws_profile``,
  else botocore's default chain (``AWS_ACCESS_KEY_ID`` / ``AWS_SECRET_ACCESS_KEY`` /
  ``AWS_SESSION_TOKEN``, ``AWS_PROFILE``, instance roles …); or a Bedrock API key (``api_key``, else
  ``AWS_BEARER_TOKEN_BEDROCK``) sent as a bearer token instead of a signature;
* ``base_url`` (else ``ANTHROPIC_BEDROCK_BASE_URL``) for a VPC endpoint or a test server.

Credentials are resolved when the adapter is built, so a missing one is an :class:`LLMAuthError`
at once, naming what to set; the access key id, secret key and session token are registered with
:mod:`kanawa.secrets`. The model id is sent as given (``anthropic.claude-sonnet-4-5-20250929-v1:0``,
an inference profile such as ``us.anthropic.…`` or an ARN); :meth:`normalize_model_name` drops the
region and vendor prefixes so per-model defaults (thinking mode, ``max_tokens``) still apply.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from typing import Any, ClassVar, Unpack

import boto3
import botocore.eventstream
import botocore.exceptions
from anthropic import AsyncAnthropicBedrock, AsyncStream

from kanawa.llm.anthropic.adapter import _SDK_ERRORS, AnthropicAdapter, AnthropicOptions, adapter_options
from kanawa.llm.errors import LLMAuthError, LLMBadRequestError, LLMError
from kanawa.llm.provider_adapter import Call, ChatRequest
from kanawa.llm.stream_parts import malformed
from kanawa.secrets import guard_credentials

__all__ = ["BedrockAnthropicAdapter", "BedrockOptions"]

PROVIDER = "bedrock"
API_KEY_ENV = "AWS_BEARER_TOKEN_BEDROCK"

_STREAM_ERROR_STATUS: Mapping[str, int] = {
    "validationException": 400,
    "accessDeniedException": 403,
    "resourceNotFoundException": 404,
    "modelTimeoutException": 408,
    "throttlingException": 429,
    "serviceQuotaExceededException": 429,
    "internalServerException": 500,
    "modelStreamErrorException": 500,
    "modelErrorException": 500,
    "serviceUnavailableException": 503,
    "modelNotReadyException": 503,
}
"""Bedrock's exception frames inside a stream → the HTTP status the same fault has outside one."""

ANTHROPIC_VERSION = "bedrock-2023-05-31"
"""The Messages API version Bedrock accepts, sent in the body (Bedrock has no ``anthropic-version``
header)."""

_REGION_PREFIXES = ("us.", "eu.", "apac.", "jp.", "au.", "ca.", "us-gov.", "global.")


def _region(aws_region: str | None, session: boto3.Session, model: str) -> str:
    region = aws_region or os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
    region = region or session.region_name
    if not region:
        raise LLMBadRequestError(
            "no AWS region for Bedrock: pass aws_region=... or export AWS_REGION",
            provider=PROVIDER,
            model=model,
        )
    return region


def _signing_credentials(session: boto3.Session, model: str) -> tuple[str, str, str | None]:
    """The credentials botocore will sign with, resolved now (a missing one fails at construction)."""
    try:
        found = session.get_credentials()
        frozen = found.get_frozen_credentials() if found is not None else None
    except botocore.exceptions.BotoCoreError as exc:
        raise LLMAuthError(
            f"AWS credentials could not be loaded ({type(exc).__name__})", provider=PROVIDER, model=model
        ) from None
    if frozen is None or not frozen.access_key or not frozen.secret_key:
        raise LLMAuthError(
            "no AWS credentials for Bedrock: export AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or "
            f"AWS_PROFILE, or {API_KEY_ENV}), or pass aws_access_key=... and aws_secret_key=...",
            provider=PROVIDER,
            model=model,
        )
    return frozen.access_key, frozen.secret_key, frozen.token


class BedrockOptions(AnthropicOptions, total=False):
    """The connection options plus AWS's own (the module docstring says where each falls back to)."""

    aws_region: str | None
    aws_access_key: str | None
    aws_secret_key: str | None
    aws_session_token: str | None
    aws_profile: str | None


def _client_from(model: str, options: BedrockOptions) -> AsyncAnthropicBedrock:
    """A Bedrock client with SDK retries off, signing with credentials resolved (and masked) now."""
    profile = options.get("aws_profile")
    keys = (options.get("aws_access_key"), options.get("aws_secret_key"), options.get("aws_session_token"))
    bearer = options.get("api_key") or (None if any((*keys, profile)) else os.environ.get(API_KEY_ENV))
    try:
        session = boto3.Session(profile_name=profile)
    except botocore.exceptions.BotoCoreError as exc:
        raise LLMAuthError(
            f"the AWS profile could not be loaded ({type(exc).__name__})", provider=PROVIDER, model=model
        ) from None
    region = _region(options.get("aws_region"), session, model)
    timeout, default_headers = options.get("timeout"), options.get("default_headers")
    make = functools.partial(
        AsyncAnthropicBedrock,
        aws_region=region,
        base_url=options.get("base_url"),
        timeout=600.0 if timeout is None else timeout,
        max_retries=0,
        default_headers=default_headers,
        open_telemetry=False,
    )
    if bearer:
        guard_credentials(bearer, headers=default_headers)
        return make(api_key=bearer)
    signing = boto3.Session(
        profile_name=profile,
        region_name=region,
        aws_access_key_id=keys[0],
        aws_secret_access_key=keys[1],
        aws_session_token=keys[2],
    )
    access_key, secret_key, token = _signing_credentials(signing, model)
    guard_credentials(access_key, secret_key, token, headers=default_headers)
    return make(aws_access_key=access_key, aws_secret_key=secret_key, aws_session_token=token)


class BedrockAnthropicAdapter(AnthropicAdapter):
    """A Claude model on Amazon Bedrock (``bedrock:<model id>``); the module docstring has the settings."""

    provider = PROVIDER
    NAME_PREFIXES = ("bedrock:", *_REGION_PREFIXES, "anthropic.")
    SDK_ERRORS: ClassVar[tuple[type[BaseException], ...]] = (
        *_SDK_ERRORS,
        botocore.exceptions.BotoCoreError,
        botocore.eventstream.ParserError,
    )
    STREAM_ERROR_STATUS = _STREAM_ERROR_STATUS

    def __init__(
        self,
        model: str,
        *,
        client: AsyncAnthropicBedrock | None = None,
        **options: Unpack[BedrockOptions],
    ) -> None:
        name = model.strip()
        if name.lower().startswith("bedrock:"):
            name = name[len("bedrock:") :].strip()
        if not name:
            raise LLMBadRequestError("BedrockAnthropicAdapter needs a model id", provider=PROVIDER)
        super().__init__(name, client=client or _client_from(name, options), **adapter_options(options))
        if client is None:
            self._close_owned = self._client.close

    def _build(self, request: ChatRequest) -> dict[str, Any]:
        return {**super()._build(request), "anthropic_version": ANTHROPIC_VERSION}

    def _stream_error_status(self, kind: str) -> int:
        return self.STREAM_ERROR_STATUS.get(kind[:1].lower() + kind[1:], 500)

    def _map_error(
        self, exc: BaseException, call: Call[dict[str, object]], handle: AsyncStream[object] | None
    ) -> LLMError:
        if isinstance(
            exc, botocore.exceptions.NoCredentialsError | botocore.exceptions.PartialCredentialsError
        ):
            return LLMAuthError(
                "AWS credentials are missing or incomplete", provider=PROVIDER, model=self._model
            )
        if isinstance(exc, botocore.eventstream.ParserError):
            return self._filled(
                malformed(
                    "Anthropic response",
                    f"undecodable AWS event stream frame ({type(exc).__name__})",
                    provider=PROVIDER,
                )
            )
        if isinstance(exc, botocore.exceptions.BotoCoreError):
            return LLMError(f"AWS client error ({type(exc).__name__})", provider=PROVIDER, model=self._model)
        return super()._map_error(exc, call, handle)
