"""One-line setup hints: what went wrong and what to configure, never a key."""

from __future__ import annotations

from kanawa.cli.errors import setup_hint
from kanawa.llm.errors import LLMAuthError, LLMBadRequestError
from kanawa.loop.errors import LLMCallFailed, MaxStepsExceeded


def test_missing_key_says_set_the_variable() -> None:
    error = LLMAuthError("no credentials", provider="openai", model="gpt-5")
    line = setup_hint("openai:gpt-5", error, environ={})
    assert (
        line == "kanawa: cannot use model 'openai:gpt-5': [openai:gpt-5] no credentials — set OPENAI_API_KEY"
    )


def test_rejected_key_says_check_the_variable_without_showing_it() -> None:
    failed = LLMCallFailed(LLMAuthError("bad key", provider="openai", model="gpt-5", status_code=401), step=1)
    line = setup_hint("openai:gpt-5", failed, environ={"OPENAI_API_KEY": "sk-secret-value"})
    assert line.endswith("— check OPENAI_API_KEY")
    assert "sk-secret-value" not in line
    assert line.startswith("kanawa: model run failed: ")


def test_no_duplicate_hint_when_the_message_names_the_variable() -> None:
    error = LLMAuthError("ANTHROPIC_API_KEY is not set", provider="anthropic", model="m")
    line = setup_hint("anthropic:m", error, environ={})
    assert "—" not in line


def test_missing_sdk_message_is_kept_and_the_line_is_single() -> None:
    error = LLMBadRequestError("provider 'gemini' needs its SDK:\npip install 'kanawa[gemini]'")
    line = setup_hint("gemini:x", error, environ={})
    assert "\n" not in line
    assert "pip install 'kanawa[gemini]'" in line


def test_loop_errors_are_one_line_too() -> None:
    line = setup_hint("test", MaxStepsExceeded(3), environ={})
    assert (
        line == "kanawa: model run failed: the agent loop reached its limit of 3 steps without a final answer"
    )
