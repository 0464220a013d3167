"""Provider and model definitions load into the SDK's own entities (seed 001 §3.1–§3.5)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from dify_plugin.core.entities.plugin.setup import PluginConfiguration
from dify_plugin.entities.model import ModelFeature, ParameterType
from dify_plugin.entities.model.provider import ModelProviderConfiguration

from tests.openai_gpt5_responses.conftest import PLUGIN_DIR

MODELS = [
    "gpt-5.2",
    "gpt-5.2-pro",
    "gpt-5",
    "gpt-5-mini",
    "gpt-5-nano",
    "gpt-5-codex",
    "gpt-5.1-codex",
    "gpt-5.3-codex",
]
PARAMETERS = {
    "max_output_tokens": (ParameterType.INT, 8192, []),
    "reasoning_effort": (
        ParameterType.STRING,
        "medium",
        ["none", "minimal", "low", "medium", "high", "xhigh"],
    ),
    "reasoning_summary": (ParameterType.STRING, "auto", ["auto", "concise", "detailed"]),
    "verbosity": (ParameterType.STRING, "medium", ["low", "medium", "high"]),
    "response_format": (ParameterType.STRING, "text", ["text", "json_schema"]),
    "json_schema": (ParameterType.TEXT, None, []),
    "tool_choice": (ParameterType.STRING, "auto", []),
    "parallel_tool_calls": (ParameterType.BOOLEAN, True, []),
    "enable_stream": (ParameterType.BOOLEAN, True, []),
}


@pytest.fixture(scope="module")
def provider() -> Iterator[ModelProviderConfiguration]:
    cwd = Path.cwd()
    os.chdir(PLUGIN_DIR)  # the SDK globs model YAMLs relative to the plugin directory, as in the daemon
    try:
        data = yaml.safe_load((PLUGIN_DIR / "provider" / "openai_gpt5.yaml").read_text())
        yield ModelProviderConfiguration(**data)
    finally:
        os.chdir(cwd)


def test_layout_is_seed_3_1() -> None:
    expected = [
        "manifest.yaml", "main.py", "README.md", "PRIVACY.md", ".env.example", "requirements.txt", "icon.svg",
        "provider/openai_gpt5.yaml", "provider/openai_gpt5.py",
        "models/llm/_position.yaml", "models/llm/llm.py",
        "internal/__init__.py", "internal/credentials.py", "internal/payloads.py", "internal/messages.py",
        "internal/errors.py",
    ] + [f"models/llm/{m}.yaml" for m in MODELS]  # fmt: skip
    assert [p for p in expected if not (PLUGIN_DIR / p).is_file()] == []


def test_manifest_is_seed_3_2() -> None:
    manifest = PluginConfiguration(**yaml.safe_load((PLUGIN_DIR / "manifest.yaml").read_text()))
    assert manifest.type.value == "plugin"
    assert manifest.plugins.models == ["provider/openai_gpt5.yaml"]
    assert (manifest.meta.runner.language.value, manifest.meta.runner.version) == ("python", "3.12")
    assert manifest.meta.runner.entrypoint == "main"
    assert manifest.meta.minimum_dify_version == "1.10.0"


def test_provider_declares_both_methods_and_both_credential_schemas(
    provider: ModelProviderConfiguration,
) -> None:
    assert [t.value for t in provider.supported_model_types] == ["llm"]
    assert [m.value for m in provider.configurate_methods] == ["predefined-model", "customizable-model"]
    assert provider.provider_credential_schema is not None
    assert provider.model_credential_schema is not None
    table = {f.variable: f for f in provider.provider_credential_schema.credential_form_schemas}
    assert list(table) == [
        "openai_api_key", "openai_organization", "openai_api_base", "request_timeout_seconds", "max_retries",
    ]  # fmt: skip
    assert table["openai_api_key"].type.value == "secret-input"
    assert table["openai_api_key"].required
    assert [(table[k].default, table[k].required) for k in list(table)[2:]] == [
        ("", False), ("300", False), ("1", False),
    ]  # fmt: skip
    model_form = [f.variable for f in provider.model_credential_schema.credential_form_schemas]
    assert model_form == list(table)


def test_predefined_models_follow_the_position_file(provider: ModelProviderConfiguration) -> None:
    assert provider.position is not None
    assert provider.position.llm == MODELS
    assert sorted(m.model for m in provider.models) == sorted(MODELS)


@pytest.mark.parametrize("name", MODELS)
def test_every_model_declares_the_seed_3_5_parameters_and_features(
    provider: ModelProviderConfiguration, name: str
) -> None:
    model = next(m for m in provider.models if m.model == name)
    assert set(model.features or []) == {
        ModelFeature.TOOL_CALL,
        ModelFeature.MULTI_TOOL_CALL,
        ModelFeature.AGENT_THOUGHT,
        ModelFeature.STREAM_TOOL_CALL,
    }
    assert ModelFeature.VISION not in (model.features or [])
    rules = {r.name: r for r in model.parameter_rules}
    assert list(rules) == list(PARAMETERS)
    for rule_name, (kind, default, options) in PARAMETERS.items():
        rule = rules[rule_name]
        assert (rule.type, rule.default, rule.options or []) == (kind, default, options), rule_name
    assert (rules["max_output_tokens"].min, rules["max_output_tokens"].max) == (1, 128000)
