"""The prompt library: template id → text per language (seed 002 §9-1)."""

from __future__ import annotations

import pytest

from kanawa.prompts import DEFAULT_PROMPTS, PromptLibrary, PromptTemplateError

LOOP_TEMPLATES = {
    "final_output_request": {"schema"},
    "final_output_retry": {"error", "schema"},
    "max_steps_finalize": set(),
    "tool_fallback_thought": {"tools"},
}


def test_get_substitutes_variables() -> None:
    library = PromptLibrary()
    library.register("greet", "Hello, $name! Budget: $$5, ${count}x")
    assert library.get("greet", name="Aiko", count=3) == "Hello, Aiko! Budget: $5, 3x"


def test_braces_in_templates_and_dollars_in_values_are_left_alone() -> None:
    library = PromptLibrary()
    library.register("schema", 'Reply like {"a": 1}. Schema: $schema')
    assert (
        library.get("schema", schema='{"$ref": "#/$defs/X"}')
        == 'Reply like {"a": 1}. Schema: {"$ref": "#/$defs/X"}'
    )


def test_missing_variable_raises_prompt_template_error_naming_it() -> None:
    library = PromptLibrary()
    library.register("t", "Need $first and $second")
    with pytest.raises(PromptTemplateError, match="'second'") as info:
        library.get("t", first="x")
    assert info.value.variable == "second"
    assert info.value.template_id == "t"
    assert isinstance(info.value, KeyError)
    assert "Need" not in str(info.value)  # never the prompt text


def test_unknown_template_id_raises() -> None:
    with pytest.raises(PromptTemplateError, match="unknown prompt template 'nope'"):
        PromptLibrary().get("nope")


def test_missing_language_falls_back_to_english() -> None:
    library = PromptLibrary(templates={"t": {"en": "english $x", "ja": "日本語 $x"}})
    assert library.get("t", lang="ja", x=1) == "日本語 1"
    assert library.get("t", lang="fr", x=1) == "english 1"
    assert library.get("t", lang="ja-JP", x=1) == "日本語 1"
    assert library.get("t", lang="JA_jp", x=1) == "日本語 1"


def test_no_text_in_language_nor_english_raises() -> None:
    library = PromptLibrary(templates={"t": {"ja": "日本語"}})
    with pytest.raises(PromptTemplateError, match="available: ja"):
        library.get("t", lang="de")


def test_unused_variables_are_ignored() -> None:
    library = PromptLibrary(templates={"t": {"en": "fixed"}})
    assert library.get("t", extra="ignored") == "fixed"


def test_template_id_may_also_be_a_variable_name() -> None:
    library = PromptLibrary(templates={"t": {"en": "id=$template_id"}})
    assert library.get("t", template_id="x") == "id=x"


def test_invalid_placeholder_is_rejected_at_register() -> None:
    library = PromptLibrary()
    with pytest.raises(PromptTemplateError, match="invalid placeholder"):
        library.register("t", "costs $5")
    assert "t" not in library


def test_register_replaces_existing_text() -> None:
    library = PromptLibrary(templates={"t": {"en": "old"}})
    library.register("t", "new")
    assert library.get("t") == "new"


def test_default_prompts_are_read_only_and_copy_is_independent() -> None:
    with pytest.raises(PromptTemplateError, match="read-only"):
        DEFAULT_PROMPTS.register("final_output_request", "hijack")
    mine = DEFAULT_PROMPTS.copy()
    mine.register("final_output_request", "mine $schema")
    assert mine.get("final_output_request", schema="S") == "mine S"
    assert DEFAULT_PROMPTS.get("final_output_request", schema="S") != "mine S"


def test_default_prompts_hold_the_loop_templates() -> None:
    assert set(LOOP_TEMPLATES) <= set(DEFAULT_PROMPTS.ids())


@pytest.mark.parametrize("template_id", sorted(LOOP_TEMPLATES))
def test_loop_templates_use_the_documented_variables(template_id: str) -> None:
    for lang in ("en", "ja"):
        assert set(DEFAULT_PROMPTS.variables(template_id, lang=lang)) == LOOP_TEMPLATES[template_id]


@pytest.mark.parametrize("template_id", DEFAULT_PROMPTS.ids())
def test_every_english_template_has_a_japanese_text(template_id: str) -> None:
    assert set(DEFAULT_PROMPTS.languages(template_id)) >= {"en", "ja"}
    assert DEFAULT_PROMPTS.text(template_id, lang="ja") != DEFAULT_PROMPTS.text(template_id, lang="en")


def test_final_output_templates_carry_schema_and_error() -> None:
    request = DEFAULT_PROMPTS.get("final_output_request", schema='{"type": "object"}')
    assert request.endswith('{"type": "object"}')
    assert "JSON" in request
    retry = DEFAULT_PROMPTS.get("final_output_retry", lang="ja", error="Expecting value", schema="{}")
    assert "Expecting value" in retry
    assert retry.endswith("{}")


def test_max_steps_finalize_needs_no_variables() -> None:
    assert "tool" in DEFAULT_PROMPTS.get("max_steps_finalize")
    assert "ツール" in DEFAULT_PROMPTS.get("max_steps_finalize", lang="ja")
