"""Seed 004 "DIコンテナ拡張" and "DIコンテナの設定アクセス"."""

from __future__ import annotations

import ast
import inspect
import json
from pathlib import Path

from dependency_injector import providers

from kanawa import ScriptedLLM, TestLLM
from kanawa.apps.ace import container as container_module
from kanawa.apps.ace.container import Container
from kanawa.apps.ace.generator import GeneratorAgent
from kanawa.apps.ace.store.json_store import JsonPlaybookStore
from kanawa.apps.ace.store.sqlite_store import SQLitePlaybookStore


def test_config_is_read_with_bracket_access_never_dotted_form() -> None:
    tree = ast.parse(inspect.getsource(container_module))
    dotted = [
        ast.unparse(node)
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Attribute)
        and isinstance(node.value.value, ast.Name)
        and node.value.value.id == "config"
    ]
    assert dotted == []  # e.g. config.llm.provider
    brackets = [ast.unparse(node) for node in ast.walk(tree) if isinstance(node, ast.Subscript)]
    assert "config.llm['provider']" in brackets


def test_the_dotted_form_would_not_reach_the_provider_setting() -> None:
    config = providers.Configuration()
    config.from_dict({"llm": {"provider": "openai"}})
    assert config.llm["provider"]() == "openai"
    assert config.llm.provider() != "openai"  # why the seed forbids it: `provider` is taken


def test_container_wires_store_search_llm_prompt_builder_and_generator(tmp_path: Path) -> None:
    container = Container()
    container.config.from_dict(
        {
            "llm": {"provider": "test"},
            "store": {"location": str(tmp_path / "pb.sqlite3")},
            "prompts": {"dir": str(tmp_path)},
            "generator": {"top_k": 3},
        }
    )
    generator = container.generator_agent()
    assert isinstance(generator, GeneratorAgent)
    assert isinstance(container.playbook_store(), SQLitePlaybookStore)
    assert isinstance(container.llm_client(), TestLLM)
    assert generator.top_k == 3
    assert generator.hybrid_search is container.hybrid_search()
    assert container.hybrid_search().store is container.playbook_store()
    assert container.prompt_builder().prompts_dir == tmp_path


async def test_generator_from_container_runs_with_an_overridden_llm(tmp_path: Path) -> None:
    container = Container()
    container.config.from_dict({"llm": {"provider": "test"}, "store": {"location": str(tmp_path)}})
    answer = json.dumps({"reasoning": [], "bullet_ids": [], "final_answer": "ok"})
    with container.llm_client.override(providers.Object(ScriptedLLM([answer]))):
        trajectory = await container.generator_agent().arun("q", "demo")
    assert (trajectory.status, trajectory.generated_answer) == ("success", "ok")
    assert isinstance(container.playbook_store(), JsonPlaybookStore)
