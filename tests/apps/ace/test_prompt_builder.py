"""Seed 004 "PromptBuilder", "テンプレートファイル不在" and Correctness Property 3."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kanawa.apps.ace.playbook import Bullet, format_id
from kanawa.apps.ace.prompt_builder import FALLBACK_TEMPLATE, PromptBuilder, TemplateError

_content = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=120).filter(
    lambda s: s.strip()
)


@st.composite
def bullet_lists(draw: st.DrawFn) -> list[Bullet]:
    contents = draw(st.lists(_content, max_size=5))
    bullets = []
    for counter, content in enumerate(contents, start=1):
        try:
            bullets.append(Bullet(id=format_id("shr", counter), section="S", content=content))
        except ValueError:
            continue  # content a bullet cannot hold (a line that reads as a header) is not a bullet
    return bullets


# Feature: generator-agent, Property 3: プロンプト構築時のコンテンツ包含
@settings(deadline=None)
@given(
    query=st.text(min_size=1, max_size=120).filter(lambda s: s.strip()),
    bullets=bullet_lists(),
    dataset=st.sampled_from(["appworld", "finance", "other"]),
)
def test_property_3_prompt_contains_query_and_every_bullet(
    query: str, bullets: list[Bullet], dataset: str
) -> None:
    prompt = PromptBuilder(prompts_dir=None).build(query, bullets, dataset)
    assert query in prompt
    for bullet in bullets:  # each bullet by its id, not its content alone (one may be inside another)
        assert f"[{bullet.id}] {bullet.content}" in prompt


def test_dataset_template_then_default_then_fallback(tmp_path: Path) -> None:
    (tmp_path / "finance.txt").write_text("FIN {context} / {query}", encoding="utf-8")
    (tmp_path / "default.txt").write_text("DEF {context} / {query}", encoding="utf-8")
    builder = PromptBuilder(prompts_dir=tmp_path)
    assert builder.build("q", [], "finance") == "FIN  / q"
    assert builder.build("q", [], "unknown") == "DEF  / q"
    assert builder.template_source("finance") == str(tmp_path / "finance.txt")


def test_shipped_templates_are_package_data_and_user_dir_overrides_them(tmp_path: Path) -> None:
    builder = PromptBuilder(prompts_dir=tmp_path / "missing")
    assert builder.template_source("appworld") == "package:appworld.txt"
    assert builder.template_source("finance") == "package:default.txt"
    assert "AppWorld" in builder.build("task", [], "appworld")
    (tmp_path / "appworld.txt").write_text("MINE {query}", encoding="utf-8")
    assert PromptBuilder(prompts_dir=tmp_path).build("task", [], "appworld") == "MINE task"


def test_builtin_fallback_when_no_template_file_exists(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr("kanawa.apps.ace.prompt_builder._shipped", lambda name: None)
    builder = PromptBuilder(prompts_dir=tmp_path)
    assert builder.template_source("x") == "fallback"
    assert builder.build("q", [], "x") == FALLBACK_TEMPLATE.format(context="", query="q")


def test_braces_in_bullets_and_query_do_not_break_formatting() -> None:
    bullet = Bullet(id="code-00001", section="S", content='print(f"{x}") and {"json": {0}} and {context}')
    prompt = PromptBuilder(prompts_dir=None).build("use {query} {0}", [bullet], "default")
    assert '[code-00001] print(f"{x}") and {"json": {0}} and {context}' in prompt
    assert "use {query} {0}" in prompt


def test_context_is_one_bullet_per_line_in_order() -> None:
    bullets = [
        Bullet(id="a-00001", section="S", content="one"),
        Bullet(id="a-00002", section="S", content="two"),
    ]
    assert "[a-00001] one\n[a-00002] two" in PromptBuilder(prompts_dir=None).build("q", bullets, "x")


def test_template_with_unknown_placeholder_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "default.txt").write_text("{context} {query} {user}", encoding="utf-8")
    with pytest.raises(TemplateError, match=r"unknown placeholders: \['user'\]"):
        PromptBuilder(prompts_dir=tmp_path).build("q", [], "x")


def test_dataset_names_cannot_reach_outside_the_prompts_dir(tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("SECRET {query}", encoding="utf-8")
    inner = tmp_path / "prompts"
    inner.mkdir()
    assert "SECRET" not in PromptBuilder(prompts_dir=inner).build("q", [], "../secret")
