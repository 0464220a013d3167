"""Manifest, provider and strategy definitions load into the SDK's entities (seed 001 §4.1–§4.3)."""

from __future__ import annotations

import yaml
from dify_plugin.core.entities.plugin.setup import PluginConfiguration
from dify_plugin.entities.agent import AgentStrategyParameter

from tests.gpt5_agent_strategies.conftest import PLUGIN_DIR

LAYOUT = [
    "manifest.yaml", "main.py", "README.md", "PRIVACY.md", ".env.example", "requirements.txt", "icon.svg",
    "provider/gpt5_agent.yaml", "provider/gpt5_agent.py",
    "strategies/gpt5_function_calling.yaml", "strategies/gpt5_function_calling.py",
    "strategies/gpt5_react.yaml", "strategies/gpt5_react.py",
    "internal/__init__.py", "internal/flow.py", "internal/loop.py", "internal/policy.py",
    "internal/tooling.py",
    "prompt/template.py",
]  # fmt: skip


def test_layout_is_seed_4_1() -> None:
    assert [p for p in LAYOUT if not (PLUGIN_DIR / p).is_file()] == []


def test_manifest_and_provider_are_seed_4_2() -> None:
    manifest = PluginConfiguration(**yaml.safe_load((PLUGIN_DIR / "manifest.yaml").read_text()))
    assert manifest.plugins.agent_strategies == ["provider/gpt5_agent.yaml"]
    assert manifest.meta.minimum_dify_version == "1.10.0"
    assert (manifest.meta.runner.version, manifest.meta.runner.entrypoint) == ("3.12", "main")
    provider = yaml.safe_load((PLUGIN_DIR / "provider" / "gpt5_agent.yaml").read_text())
    assert [p.split("/")[-1] for p in provider["strategies"]] == [
        "gpt5_function_calling.yaml",
        "gpt5_react.yaml",
    ]


def test_both_strategies_declare_the_seed_4_3_parameters() -> None:
    expected = {
        "model": ("model-selector", True, None),
        "tools": ("array[tools]", True, None),
        "instruction": ("string", True, None),
        "prompt_policy_overrides": ("string", False, None),
        "context": ("any", False, None),
        "query": ("string", True, None),
        "maximum_iterations": ("number", True, 6),
        "emit_intermediate_thoughts": ("boolean", False, True),
    }
    for name in ("gpt5_function_calling", "gpt5_react"):
        data = yaml.safe_load((PLUGIN_DIR / "strategies" / f"{name}.yaml").read_text())
        assert data["identity"]["name"] == name
        params = {p["name"]: AgentStrategyParameter(**p) for p in data["parameters"]}
        assert list(params) == list(expected)
        got = {k: (p.type.value, bool(p.required), p.default) for k, p in params.items()}
        assert got == expected
        assert params["model"].scope == "tool-call&llm"
        assert (params["maximum_iterations"].min, params["maximum_iterations"].max) == (1, 30)
