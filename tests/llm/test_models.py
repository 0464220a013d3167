"""Model strings (DESIGN.md core contracts): ``openai:gpt-5``, ``openai-chat:<model>@<base_url>``,
``anthropic:<model>``, ``gemini:<model>``, ``test``; provider modules load only when named."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from kanawa.llm.errors import LLMBadRequestError
from kanawa.llm.models import PROVIDERS, ModelString, ProviderEntry, parse_model_string, resolve_model
from kanawa.llm.retry import NO_RETRY, RetryingLLM
from kanawa.llm.testing import ScriptedLLM, TestLLM


@pytest.mark.parametrize(
    ("spec", "parsed"),
    [
        ("openai:gpt-5", ModelString("openai", "gpt-5")),
        ("  openai:gpt-5.2-pro ", ModelString("openai", "gpt-5.2-pro")),
        ("OpenAI:gpt-5", ModelString("openai", "gpt-5")),
        ("openai-responses:gpt-5-codex", ModelString("openai", "gpt-5-codex")),
        ("anthropic:claude-sonnet-4-5", ModelString("anthropic", "claude-sonnet-4-5")),
        ("gemini:gemini-2.5-flash", ModelString("gemini", "gemini-2.5-flash")),
        ("google:gemini-2.5-pro", ModelString("gemini", "gemini-2.5-pro")),
        ("google-gla:gemini-2.5-pro", ModelString("gemini", "gemini-2.5-pro")),
        (
            "openai-chat:qwen2.5-7b-instruct@http://localhost:8000/v1",
            ModelString("openai-chat", "qwen2.5-7b-instruct", "http://localhost:8000/v1"),
        ),
        (
            "openai-chat:llama3@https://user@example.com/v1",
            ModelString("openai-chat", "llama3", "https://user@example.com/v1"),
        ),
        ("openai-chat:org/model:latest", ModelString("openai-chat", "org/model:latest")),
        ("anthropic:claude-sonnet-4@20250514", ModelString("anthropic", "claude-sonnet-4@20250514")),
        ("test", ModelString("test", "test")),
        ("test:my-model", ModelString("test", "my-model")),
    ],
)
def test_model_strings_parse(spec: str, parsed: ModelString) -> None:
    assert parse_model_string(spec) == parsed


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("gpt-5", "expected 'provider:model'"),
        (
            "mistral:large",
            "provider one of anthropic, azure, azure-chat, bedrock, gemini, openai, openai-chat, test, "
            "vertex",
        ),
        ("openai:", "expected 'provider:model'"),
        ("", "expected 'provider:model'"),
        ("openai-chat:@http://localhost:8000/v1", "names no model"),
        ("openai-chat:llama3@localhost:8000", "must be an http(s) base URL"),
        ("openai-chat:llama3@ftp://host/v1", "must be an http(s) base URL"),
    ],
)
def test_malformed_model_strings_are_refused_with_an_example(spec: str, message: str) -> None:
    with pytest.raises(LLMBadRequestError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_model_string(spec)


def test_test_string_resolves_to_test_llm_unwrapped() -> None:
    model = resolve_model("test")
    assert isinstance(model, TestLLM)
    assert model.model == "test"
    named = resolve_model("test:smoke")
    assert isinstance(named, TestLLM)
    assert named.model == "smoke"


def test_an_adapter_is_returned_as_is() -> None:
    scripted = ScriptedLLM(["x"])
    assert resolve_model(scripted) is scripted


@pytest.fixture
def fake_provider(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """Register provider ``fake`` backed by a real module on disk that records its constructor args."""
    (tmp_path / "fake_adapter_mod.py").write_text(
        textwrap.dedent(
            """
            from kanawa.llm.testing import ScriptedLLM

            class FakeAdapter(ScriptedLLM):
                def __init__(self, model, **kwargs):
                    super().__init__([], model=model)
                    self.kwargs = kwargs
            """
        )
    )
    (tmp_path / "needs_missing_sdk.py").write_text("import kanawa_sdk_that_is_not_installed  # noqa\n")
    (tmp_path / "no_factory_mod.py").write_text("VALUE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("fake_adapter_mod", "needs_missing_sdk", "no_factory_mod"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.setitem(PROVIDERS, "fake", ProviderEntry("fake_adapter_mod", "FakeAdapter", "fake", None))
    return "fake"


def test_provider_module_is_imported_and_given_model_base_url_and_kwargs(fake_provider: str) -> None:
    model = resolve_model("fake:m1@http://127.0.0.1:9/v1", retry_policy=NO_RETRY, api_key="k", timeout=3)
    assert isinstance(model, RetryingLLM)
    adapter = model.primary
    assert adapter.model == "m1"
    assert adapter.kwargs == {"api_key": "k", "timeout": 3, "base_url": "http://127.0.0.1:9/v1"}  # type: ignore[attr-defined]
    explicit = resolve_model("fake:m1@http://127.0.0.1:9/v1", base_url="http://127.0.0.1:10/v1")
    assert explicit.primary.kwargs["base_url"] == "http://127.0.0.1:10/v1"  # type: ignore[attr-defined]


def test_missing_adapter_module_gives_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(
        PROVIDERS, "ghost", ProviderEntry("kanawa.llm._no_such_adapter", "GhostAdapter", "x", None)
    )
    with pytest.raises(
        LLMBadRequestError, match=r"'ghost' is not available .*kanawa\.llm\._no_such_adapter"
    ) as info:
        resolve_model("ghost:model-1")
    assert info.value.provider == "ghost"
    assert info.value.model == "model-1"


def test_missing_sdk_names_the_extra_to_install(fake_provider: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(PROVIDERS, "fake", ProviderEntry("needs_missing_sdk", "X", "fakesdk", None))
    with pytest.raises(LLMBadRequestError, match=r"needs its SDK: pip install 'kanawa\[fakesdk\]'"):
        resolve_model("fake:m")


def test_module_without_its_factory_gives_a_clear_error(
    fake_provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(PROVIDERS, "fake", ProviderEntry("no_factory_mod", "FakeAdapter", "fake", None))
    with pytest.raises(LLMBadRequestError, match="no_factory_mod defines no FakeAdapter"):
        resolve_model("fake:m")


# The cloud platforms need a place besides a key; vertex: picks its adapter by model family.
_CLOUD_OPTIONS: dict[str, dict[str, object]] = {
    "bedrock": {"aws_region": "us-east-1"},
    "vertex": {"project": "p", "location": "us-central1", "access_token": "ya29.test-token"},
}
_FACTORY_CLASS = {"vertex_model": "VertexGeminiAdapter"}


async def test_every_registered_provider_resolves_to_its_own_adapter() -> None:
    """Every prefix in the table resolves (the SDKs are installed here) to an adapter of that provider
    for that model; a missing SDK is covered by ``test_missing_sdk_names_the_extra_to_install``."""
    for name, entry in PROVIDERS.items():
        key = {} if name == "vertex" else {"api_key": "sk-test"}
        options = {**key, **_CLOUD_OPTIONS.get(name, {})}
        llm = resolve_model(f"{name}:some-model@http://127.0.0.1:9/v1", **options)
        async with llm:
            assert llm.provider == name
            assert llm.model == "some-model"
            primary = getattr(llm, "primary", llm)
            assert type(primary).__name__ == _FACTORY_CLASS.get(entry.factory, entry.factory)
