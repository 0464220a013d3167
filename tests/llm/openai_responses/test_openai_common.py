"""The shared OpenAI client builder and error mapping (seed 002 §3-3, §7; seed 001 §3.8)."""

from __future__ import annotations

import json

import httpx2
import openai
import pytest

from kanawa.llm.errors import (
    LLMAuthError,
    LLMBadRequestError,
    LLMConnectionError,
    LLMError,
    LLMRateLimitError,
    LLMTimeoutError,
    parse_retry_after,
)
from kanawa.llm.openai.common import (
    KEYLESS_PLACEHOLDER,
    MAX_MESSAGE_CHARS,
    MISSING_KEY_MESSAGE,
    build_client,
    error_for_code,
    map_openai_error,
)
from kanawa.secrets import forget_secret, register_secret

REQUEST = httpx2.Request("POST", "https://api.openai.com/v1/responses")


def status_error(status: int, body: object, headers: dict[str, str] | None = None) -> openai.APIStatusError:
    response = httpx2.Response(
        status, headers=headers or {}, request=REQUEST, content=json.dumps(body).encode()
    )
    inner = body.get("error", body) if isinstance(body, dict) else body
    return openai.APIStatusError(f"Error code: {status}", response=response, body=inner)


def test_missing_key_is_one_line_auth_error_naming_openai_api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(LLMAuthError) as info:
        build_client()
    assert info.value.message == MISSING_KEY_MESSAGE
    assert "\n" not in str(info.value)
    assert "OPENAI_API_KEY" in str(info.value)


def test_key_from_environment_and_sdk_retries_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-1")
    client = build_client(base_url="http://127.0.0.1:9/v1", organization="  org-x  ", timeout=12.0)
    assert client.api_key == "sk-env-1"
    assert client.max_retries == 0
    assert client.organization == "org-x"
    assert client.timeout == 12.0
    assert str(client.base_url).startswith("http://127.0.0.1:9/v1")


def test_keyless_local_servers_allowed_when_not_required(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    client = build_client(base_url="http://127.0.0.1:9/v1", require_key=False)
    assert client.api_key == KEYLESS_PLACEHOLDER


def test_retry_after_ms_wins_then_seconds_then_http_date() -> None:
    assert parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert parse_retry_after({"retry-after": "7"}) == 7.0
    assert parse_retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:30 GMT"}, now=1445412500.0) == 10.0
    assert parse_retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, now=1445412500.0) == 0.0
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({"retry-after": "-3"}) is None
    assert parse_retry_after({}) is None


@pytest.mark.parametrize(
    ("status", "cls"),
    [
        (400, LLMBadRequestError),
        (401, LLMAuthError),
        (403, LLMAuthError),
        (404, LLMBadRequestError),
        (408, LLMTimeoutError),
        (409, LLMConnectionError),
        (422, LLMBadRequestError),
        (429, LLMRateLimitError),
        (500, LLMConnectionError),
        (502, LLMConnectionError),
        (503, LLMConnectionError),
    ],
)
def test_status_errors_map_by_status(status: int, cls: type[LLMError]) -> None:
    body = {"error": {"message": "nope", "type": "x", "code": "some_code", "param": "tools"}}
    error = map_openai_error(
        status_error(status, body, {"x-request-id": "req_42", "retry-after": "3"}),
        provider="openai",
        model="gpt-5",
    )
    assert type(error) is cls
    assert (error.status_code, error.code, error.request_id, error.retry_after) == (
        status,
        "some_code",
        "req_42",
        3.0,
    )
    assert error.message == "nope"
    assert (error.provider, error.model) == ("openai", "gpt-5")


def test_long_server_messages_are_clipped() -> None:
    error = map_openai_error(
        status_error(400, {"error": {"message": "x" * 1000}}), provider="openai", model="m"
    )
    assert len(error.message) == MAX_MESSAGE_CHARS


def test_status_error_without_body_message_gets_a_generic_one() -> None:
    error = map_openai_error(status_error(502, "<html>bad gateway</html>"), provider="openai", model="m")
    assert error.message == "request failed with HTTP 502"


def test_transport_and_decode_errors() -> None:
    timeout = map_openai_error(openai.APITimeoutError(REQUEST), provider="openai", model="m")
    assert type(timeout) is LLMTimeoutError
    conn = map_openai_error(
        openai.APIConnectionError(request=REQUEST), provider="openai", model="m", streaming=True
    )
    assert type(conn) is LLMConnectionError
    assert conn.message == "connection lost while streaming"
    raw = map_openai_error(httpx2.ReadError("reset"), provider="openai", model="m")
    assert type(raw) is LLMConnectionError
    assert type(map_openai_error(httpx2.ReadTimeout("slow"), provider="openai", model="m")) is LLMTimeoutError
    decode = json.JSONDecodeError("Expecting value", "{oops", 1)
    malformed = map_openai_error(decode, provider="openai", model="m", streaming=True)
    assert type(malformed) is LLMConnectionError
    assert malformed.message == "malformed stream event"
    assert malformed.retryable


def test_other_api_errors_map_by_code() -> None:
    exc = openai.APIError("boom", REQUEST, body={"code": "rate_limit_exceeded", "message": "slow down"})
    error = map_openai_error(exc, provider="openai", model="m")
    assert type(error) is LLMRateLimitError
    assert error.message == "slow down"


@pytest.mark.parametrize(
    ("code", "cls"),
    [
        ("server_error", LLMConnectionError),
        ("rate_limit_exceeded", LLMRateLimitError),
        ("invalid_prompt", LLMBadRequestError),
        ("bio_policy", LLMBadRequestError),
        ("image_too_large", LLMBadRequestError),
        ("vector_store_timeout", LLMTimeoutError),
        ("something_new", LLMError),
        (None, LLMError),
    ],
)
def test_error_codes_without_status(code: str | None, cls: type[LLMError]) -> None:
    error = error_for_code(code, "it broke", provider="openai", model="m")
    assert type(error) is cls
    assert error.code == code


def test_unknown_exception_types_name_only_their_type() -> None:
    error = map_openai_error(RuntimeError("secret prompt text"), provider="openai", model="m")
    assert "secret prompt text" not in str(error)
    assert "RuntimeError" in str(error)


def test_key_shaped_text_in_server_messages_is_masked() -> None:
    body = {"error": {"message": "bad key sk-proj-abcdef123456 and Bearer tok-999-abcdefgh"}}
    response = httpx2.Response(401, request=REQUEST, json=body)
    exc = openai.AuthenticationError("x", response=response, body=body)
    error = map_openai_error(exc, provider="openai", model="gpt-5")
    assert "abcdef123456" not in str(error)
    assert "tok-999" not in str(error)
    assert "bad key [REDACTED] and Bearer [REDACTED]" in str(error)


def test_a_registered_secret_is_masked_even_when_not_key_shaped() -> None:
    body = {"error": {"message": "proxy rejected credential plainsecret42"}}
    response = httpx2.Response(403, request=REQUEST, json=body)
    exc = openai.PermissionDeniedError("x", response=response, body=body)
    register_secret("plainsecret42")
    try:
        error = map_openai_error(exc, provider="openai-chat", model="m")
    finally:
        forget_secret("plainsecret42")
    assert "plainsecret42" not in str(error)
    assert isinstance(error, LLMAuthError)
