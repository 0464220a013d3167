"""The one secret-masking rule (``kanawa.secrets``): configured values, key shapes, headers, logs.

The end-to-end proof — real SDKs against a server that echoes the key — is in
``tests/llm/test_key_echo.py``; this file pins the rule itself.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator

import pytest

from kanawa.secrets import (
    MASK,
    SECRET_FILTER,
    forget_secret,
    guard_credentials,
    install_log_filter,
    is_secret_name,
    mask,
    mask_json_text,
    mask_value,
    register_headers,
    register_secret,
)

OPENAI_KEY = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWx0123456789"
ANTHROPIC_KEY = "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWx-0123456789"
GOOGLE_KEY = "AIzaSyA-1234567890abcdefghijklmnopqrstu"
OPAQUE = "proxy-credential-5c1e77"
BEARER = "Bearer eyJhbGciOiJIUzI1NiJ9.payload.signature"


@pytest.fixture
def opaque_registered() -> Iterator[str]:
    register_secret(OPAQUE)
    yield OPAQUE
    forget_secret(OPAQUE)


# --------------------------------------------------------------------------------- key shapes


@pytest.mark.parametrize(
    "secret",
    [OPENAI_KEY, ANTHROPIC_KEY, GOOGLE_KEY, "sk-" + "a" * 48, "ghp_" + "A1" * 15, "xoxb-1234-abcdefghij"],
)
def test_key_shaped_values_are_masked_inside_text(secret: str) -> None:
    assert mask(f"call failed with key {secret} (retry)") == f"call failed with key {MASK} (retry)"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"Authorization: {BEARER}", f"Authorization: Bearer {MASK}"),
        ("authorization: Basic dXNlcjpwYXNzd29yZA==", f"authorization: Basic {MASK}"),
        ("x-api-key: opaque-value-1", f"x-api-key: {MASK}"),
        ('{"x-goog-api-key": "opaque-value-1"}', f'{{"x-goog-api-key": "{MASK}"}}'),
        ("{'api_key': 'opaque-value-1'}", f"{{'api_key': '{MASK}'}}"),
        ("OPENAI_API_KEY=opaque-value-1", f"OPENAI_API_KEY={MASK}"),
        ("client_secret=opaque-value-1&x=1", f"client_secret={MASK}&x=1"),
        ("GET /v1beta/models?key=opaque-value-1&alt=sse", f"GET /v1beta/models?key={MASK}&alt=sse"),
        (
            "[(b'x-api-key', b'opaque-value-1'), (b'date', b'today')]",
            f"[(b'x-api-key', b'{MASK}'), (b'date', b'today')]",
        ),
        ("(b'authorization', b'Bearer opaque-value-1')", f"(b'authorization', b'Bearer {MASK}')"),
    ],
)
def test_values_after_credential_names_are_masked_in_every_common_notation(text: str, expected: str) -> None:
    assert mask(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "ask-me anything; sk- is a prefix; Bearer tokens are short; tokens=12",
        "OPENAI_API_KEY is not set: pass api_key=... or export OPENAI_API_KEY",
        "no Gemini API key: pass api_key= or set GEMINI_API_KEY (or GOOGLE_API_KEY)",
        "invalid x-api-key; max_tokens: 1234, secretary_name: Bob, input_tokens=5",
        "the task-management tool answered 42",
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert mask(text) == text


def test_masking_is_idempotent() -> None:
    once = mask(f"Authorization: {BEARER}; x-api-key: opaque-value-1; {OPENAI_KEY}")
    assert mask(once) == once


def test_long_adversarial_text_is_masked_in_linear_time() -> None:
    text = "key-" * 25_000 + OPENAI_KEY
    assert mask(text).endswith(MASK)


# --------------------------------------------------------------------------- configured values


def test_a_registered_value_is_masked_even_when_it_has_no_key_shape(opaque_registered: str) -> None:
    assert (
        mask(f"proxy said: unknown credential {opaque_registered}!")
        == f"proxy said: unknown credential {MASK}!"
    )


def test_forgotten_values_and_tiny_values_are_not_masked() -> None:
    register_secret("abc")
    assert mask("abc") == "abc"
    register_secret(OPAQUE)
    forget_secret(OPAQUE)
    assert mask(OPAQUE) == OPAQUE


def test_provider_environment_variables_are_masked_without_registration(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "env-held-credential-77")
    assert mask("echo env-held-credential-77") == f"echo {MASK}"
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    assert mask("echo env-held-credential-77") == "echo env-held-credential-77"


def test_credential_named_headers_are_registered_with_and_without_their_scheme() -> None:
    register_headers({"Authorization": "Bearer hdr-token-value-9", "x-trace": "not-a-secret-value"})
    try:
        assert mask("got hdr-token-value-9") == f"got {MASK}"
        assert mask("got not-a-secret-value") == "got not-a-secret-value"
    finally:
        forget_secret("Bearer hdr-token-value-9")
        forget_secret("hdr-token-value-9")


def test_the_longest_registered_value_wins_when_values_overlap() -> None:
    register_secret("overlap-secret")
    register_secret("overlap-secret-and-more")
    try:
        assert mask("x overlap-secret-and-more y") == f"x {MASK} y"
    finally:
        forget_secret("overlap-secret")
        forget_secret("overlap-secret-and-more")


# ---------------------------------------------------------------------------------- structures


@pytest.mark.parametrize(
    "key",
    [
        "api_key",
        "API-KEY",
        "x-api-key",
        "Authorization",
        "password",
        "client_secret",
        "token",
        "refresh_token",
    ],
)
def test_credential_named_keys_are_secret(key: str) -> None:
    assert is_secret_name(key)


@pytest.mark.parametrize(
    "key", ["max_tokens", "input_tokens", "tokens", "tool", "key_points", "secretary_name"]
)
def test_counts_and_ordinary_names_are_not_secret(key: str) -> None:
    assert not is_secret_name(key)


def test_structures_are_masked_by_key_name_and_by_value_without_mutation() -> None:
    value = {
        "headers": {"Authorization": BEARER},
        "items": [f"key={GOOGLE_KEY}"],
        "max_tokens": 5,
        "password": None,
    }
    snapshot = json.dumps(value)
    assert mask_value(value) == {
        "headers": {"Authorization": MASK},
        "items": [f"key={MASK}"],
        "max_tokens": 5,
        "password": None,
    }
    assert json.dumps(value) == snapshot


def test_json_text_is_masked_structurally() -> None:
    text = json.dumps({"api_key": "plain-looking-value", "q": "weather"})
    assert json.loads(mask_json_text(text)) == {"api_key": MASK, "q": "weather"}
    assert mask_json_text('{"q": "weather"}') == '{"q": "weather"}'


def test_too_deep_structures_fail_closed() -> None:
    deep: object = "x"
    for _ in range(40):
        deep = [deep]
    flat = json.dumps(mask_value(deep))
    assert MASK in flat


# ---------------------------------------------------------------------------------------- logs


def _record(msg: str, *args: object, exc: BaseException | None = None, **extra: object) -> logging.LogRecord:
    record = logging.LogRecord("openai._base_client", logging.DEBUG, __file__, 1, msg, args, None)
    if exc is not None:
        record.exc_info = (type(exc), exc, exc.__traceback__)
    record.__dict__.update(extra)
    return record


def test_the_filter_masks_message_arguments_exceptions_and_extras(opaque_registered: str) -> None:
    try:
        raise RuntimeError(f"server said {opaque_registered}")
    except RuntimeError as exc:
        record = _record(
            "headers: %s", {"x-echo": opaque_registered}, exc=exc, audit={"param": opaque_registered}
        )
    assert SECRET_FILTER.filter(record) is True
    formatted = logging.Formatter("%(message)s %(audit)s").format(record)
    assert opaque_registered not in formatted
    assert MASK in formatted
    assert record.exc_info is None
    assert record.exc_text is not None
    assert "RuntimeError" in record.exc_text


def test_the_filter_leaves_clean_records_as_they_are() -> None:
    record = _record("HTTP Response: %s %i", "POST", 200)
    SECRET_FILTER.filter(record)
    assert (record.msg, record.args) == ("HTTP Response: %s %i", ("POST", 200))


def test_the_filter_survives_arguments_that_do_not_fit_the_format(opaque_registered: str) -> None:
    record = _record("%d items", opaque_registered)
    assert SECRET_FILTER.filter(record) is True
    assert opaque_registered not in record.getMessage()


def test_installing_covers_existing_child_loggers_of_every_prefix_and_kanawa_loggers() -> None:
    child = logging.getLogger("httpcore2.some_new_module_for_the_test")
    other = logging.getLogger("unrelated.library")
    install_log_filter()
    install_log_filter()
    assert child.filters.count(SECRET_FILTER) == 1
    assert SECRET_FILTER not in other.filters
    from kanawa._logging import get_logger

    assert SECRET_FILTER in get_logger("kanawa.some.module").filters


def test_guard_credentials_registers_keys_and_headers_and_installs_the_filter() -> None:
    guard_credentials(None, 42, "guarded-key-value-1", headers={"x-api-key": "guarded-header-value"})
    try:
        assert mask("guarded-key-value-1 guarded-header-value") == f"{MASK} {MASK}"
        assert SECRET_FILTER in logging.getLogger("openai").filters
    finally:
        forget_secret("guarded-key-value-1")
        forget_secret("guarded-header-value")
