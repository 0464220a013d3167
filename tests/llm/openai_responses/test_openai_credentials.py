"""Seed 001 §3.3 (credential normalisation) and §3.8 (strict bool-like values, json_schema checks)."""

from __future__ import annotations

import json

import pytest

from kanawa.llm.openai.credentials import (
    OpenAICredentials,
    base_url_host,
    clamp_retries,
    clamp_timeout,
    coerce_bool,
    normalize_base_url,
    validate_json_schema,
)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (None, None),
        ("", None),
        ("   ", None),
        ("https://api.example.com", "https://api.example.com/v1"),
        ("https://api.example.com/", "https://api.example.com/v1"),
        ("https://api.example.com///", "https://api.example.com/v1"),
        ("  https://api.example.com/v1/  ", "https://api.example.com/v1"),
        ("https://gw.example.com/openai/v1", "https://gw.example.com/openai/v1"),
        ("http://127.0.0.1:8080", "http://127.0.0.1:8080/v1"),
    ],
)
def test_openai_api_base_is_stripped_and_gets_v1_appended(raw: str | None, expected: str | None) -> None:
    assert normalize_base_url(raw) == expected


def test_base_url_host_keeps_host_and_port_but_never_user_info_or_path() -> None:
    assert base_url_host("https://user:secret@proxy.example.com:8443/v1?key=abc") == "proxy.example.com:8443"
    assert base_url_host("https://api.openai.com/v1/") == "api.openai.com"
    assert base_url_host(None) is None


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (None, 300),
        ("", 300),
        ("abc", 300),
        (True, 300),
        ("300", 300),
        (" 120 ", 120),
        ("45.0", 45),
        (5, 30),
        ("10", 30),
        (901, 900),
        ("100000", 900),
        (600.0, 600),
        ("12.5", 300),
        (float("nan"), 300),
    ],
)
def test_request_timeout_seconds_is_int_clamped_to_30_900(raw: object, expected: int) -> None:
    assert clamp_timeout(raw) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [(None, 1), ("1", 1), ("0", 0), ("3", 3), (7, 5), ("-2", 0), ("x", 1), (False, 1), ("5", 5)],
)
def test_max_retries_is_int_clamped_to_0_5(raw: object, expected: int) -> None:
    assert clamp_retries(raw) == expected


def test_clamp_default_is_itself_clamped() -> None:
    assert clamp_timeout("junk", default=5) == 30
    assert clamp_retries(None, default=9) == 5


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (True, True),
        (False, False),
        ("true", True),
        ("false", False),
        ("TRUE", True),
        ("False", False),
        (1, True),
        (0, False),
        ("1", True),
        ("0", False),
    ],
)
def test_bool_like_values_accepted_by_the_seed_table(raw: object, expected: bool) -> None:
    assert coerce_bool(raw, field="enable_stream") is expected


@pytest.mark.parametrize("raw", ["yes", "no", "on", "", " true", "2", 2, -1, 1.0, 0.0, None, [], "t"])
def test_anything_else_is_rejected_naming_the_field(raw: object) -> None:
    with pytest.raises(ValueError, match="parallel_tool_calls must be a boolean"):
        coerce_bool(raw, field="parallel_tool_calls")


def test_json_schema_accepts_dict_and_json_text_and_coerces_strict() -> None:
    schema = {"type": "object", "properties": {"v": {"type": "integer"}}}
    assert validate_json_schema({"name": "a", "schema": schema, "strict": "true"}) == {
        "name": "a",
        "schema": schema,
        "strict": True,
    }
    assert validate_json_schema(json.dumps({"schema": schema, "strict": 0})) == {
        "schema": schema,
        "strict": False,
    }


def test_json_schema_result_is_a_copy() -> None:
    original = {"schema": {"type": "object"}, "strict": "1"}
    validate_json_schema(original)
    assert original["strict"] == "1"


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("", "json_schema is required"),
        ("{not json", "json_schema is not valid JSON"),
        ("[1, 2]", "json_schema must be a JSON object, got list"),
        (42, "json_schema must be a JSON object, got int"),
        ({"name": "x"}, "must have a 'schema' field"),
        ({"schema": "object"}, "'schema' field must be a JSON object, got str"),
        ({"schema": {}, "strict": "maybe"}, "json_schema.strict must be a boolean"),
        ({"schema": {}, "name": 3}, "'name' field must be a string"),
    ],
)
def test_json_schema_validation_errors_are_clear(raw: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        validate_json_schema(raw)


def test_json_schema_error_never_quotes_the_schema_body() -> None:
    with pytest.raises(ValueError, match="not valid JSON") as info:
        validate_json_schema('{"schema": {"x": "SCHEMA-MARKER-91"}, "strict": "nope-MARK"')
    assert "SCHEMA-MARKER-91" not in str(info.value)


def test_credentials_from_dify_dict_are_normalised() -> None:
    creds = OpenAICredentials.from_dict(
        {
            "openai_api_key": "  sk-live-abc  ",
            "openai_organization": "  org-1  ",
            "openai_api_base": "https://proxy.example.com/",
            "request_timeout_seconds": "1000",
            "max_retries": "2",
        }
    )
    assert creds == OpenAICredentials("sk-live-abc", "org-1", "https://proxy.example.com/v1", 900, 2)
    assert creds.use_custom_base_url
    assert creds.base_url_host == "proxy.example.com"


def test_credentials_defaults_and_key_hidden_from_repr() -> None:
    creds = OpenAICredentials.from_dict({"openai_api_key": "sk-hidden-123", "openai_organization": " "})
    assert (creds.organization, creds.base_url, creds.timeout, creds.max_retries) == (None, None, 300, 1)
    assert not creds.use_custom_base_url
    assert "sk-hidden-123" not in repr(creds)


@pytest.mark.parametrize("key", [None, "", "   "])
def test_missing_openai_api_key_fails_validation(key: str | None) -> None:
    with pytest.raises(ValueError, match="openai_api_key is required"):
        OpenAICredentials.from_dict({"openai_api_key": key})
