"""``LLMError`` text is masked when built, and ``seal_errors``/``seal_stream_errors`` cut the chain
(``kanawa.llm.errors``; the wire-level proof per adapter is ``tests/llm/test_key_echo.py``)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from kanawa.cli.errors import setup_hint
from kanawa.llm.errors import LLMAuthError, LLMError, seal_errors, seal_stream_errors
from kanawa.loop.errors import AgentError
from kanawa.secrets import MASK, forget_secret, register_secret

KEY = "sealing-test-credential-31"


@pytest.fixture(autouse=True)
def _registered() -> Iterator[None]:
    register_secret(KEY)
    yield
    forget_secret(KEY)


class SdkError(Exception):
    """Stands in for an SDK exception whose text holds the raw response."""


def test_an_error_built_anywhere_masks_its_message_code_and_request_id() -> None:
    error = LLMAuthError(f"rejected {KEY}", provider="p", model="m", request_id=KEY, code=f"bad_{KEY}")
    assert KEY not in f"{error} {error!r} {error.args} {error.request_id} {error.code}"
    assert error.message == f"rejected {MASK}"


class Adapter:
    @seal_errors
    async def chat(self) -> str:
        try:
            raise SdkError(f"401 body echoing {KEY}")
        except SdkError as exc:
            failure = LLMAuthError("rejected", provider="p")
            failure.message = f"rejected, and a late edit added {KEY}"
            raise failure from exc

    @seal_stream_errors
    async def stream(self) -> AsyncIterator[int]:
        yield 1
        try:
            raise SdkError(f"stream body echoing {KEY}")
        except SdkError:
            raise LLMError("stream failed") from None


def _assert_sealed(error: LLMError) -> None:
    assert error.__cause__ is None
    assert error.__context__ is None
    assert KEY not in error.message


async def test_seal_errors_cuts_cause_and_context_and_masks_late_edits() -> None:
    with pytest.raises(LLMAuthError) as caught:
        await Adapter().chat()
    _assert_sealed(caught.value)


async def test_seal_stream_errors_cuts_the_context_that_from_none_leaves_behind() -> None:
    seen: list[int] = []

    async def consume() -> None:
        async for item in Adapter().stream():
            seen.append(item)

    with pytest.raises(LLMError) as caught:
        await consume()
    assert seen == [1]
    _assert_sealed(caught.value)


def test_the_cli_error_line_is_masked_whatever_the_error() -> None:
    line = setup_hint("test", AgentError(f"a custom policy quoted {KEY}"))
    assert line == f"kanawa: model run failed: a custom policy quoted {MASK}"
