"""Prompt policy composition and overrides (seed 000 §4, 001 §4.4, 000 §8)."""

from __future__ import annotations

import json

import pytest

from kanawa.prompts import (
    CONTEXT_GATHERING_POLICY,
    DEFAULT_POLICIES,
    PERSISTENCE_POLICY,
    TOOL_PREAMBLE_POLICY,
    UNCERTAINTY_POLICY,
    PolicyOverrides,
    PolicySet,
    build_system_instruction,
    parse_prompt_policy_overrides,
)

DEFAULT_BLOCKS = [PERSISTENCE_POLICY, CONTEXT_GATHERING_POLICY, UNCERTAINTY_POLICY, TOOL_PREAMBLE_POLICY]


def blocks_of(text: str) -> list[str]:
    return text.split("\n\n")


@pytest.mark.parametrize(
    ("constant", "tag"),
    [
        (PERSISTENCE_POLICY, "persistence"),
        (CONTEXT_GATHERING_POLICY, "context_gathering"),
        (UNCERTAINTY_POLICY, "uncertainty"),
        (TOOL_PREAMBLE_POLICY, "tool_preambles"),
    ],
)
def test_default_policy_is_wrapped_in_its_own_tag_and_compact(constant: str, tag: str) -> None:
    assert constant.startswith(f"<{tag}>\n")
    assert constant.endswith(f"\n</{tag}>")
    assert constant.count(f"<{tag}>") == 1
    assert 3 <= len(constant.splitlines()) - 2 <= 10
    assert "\n\n" not in constant  # a blank line would blur the block boundaries


def test_blocks_are_joined_in_seed_order_instruction_first() -> None:
    text = build_system_instruction("Summarise the report.")
    assert blocks_of(text) == ["Summarise the report.", *DEFAULT_BLOCKS]


def test_extra_policy_comes_last_after_the_four_policies() -> None:
    text = build_system_instruction("Task.", "Answer in Japanese.")
    assert blocks_of(text) == ["Task.", *DEFAULT_BLOCKS, "Answer in Japanese."]


@pytest.mark.parametrize("overrides", [None, "", "   ", "\n\t "])
def test_empty_overrides_mean_no_override(overrides: str | None) -> None:
    assert parse_prompt_policy_overrides(overrides) == PolicyOverrides()
    assert build_system_instruction("Task.", overrides) == "\n\n".join(["Task.", *DEFAULT_BLOCKS])


def test_empty_instruction_is_skipped() -> None:
    assert build_system_instruction("  \n") == "\n\n".join(DEFAULT_BLOCKS)


def test_blocks_are_stripped_so_exactly_one_blank_line_separates_them() -> None:
    text = build_system_instruction("\n  Task.  \n\n", "\n extra \n")
    assert text.startswith("Task.\n\n<persistence>")
    assert text.endswith("</tool_preambles>\n\nextra")


def test_plain_text_override_is_appended_as_extra_policy() -> None:
    assert parse_prompt_policy_overrides("  Cite sources.  ") == PolicyOverrides(extra_policy="Cite sources.")


def test_json_object_overrides_only_the_given_keys() -> None:
    overrides = json.dumps({"uncertainty_policy": "<uncertainty>\nSay so.\n</uncertainty>"})
    text = build_system_instruction("Task.", overrides)
    assert blocks_of(text) == [
        "Task.",
        PERSISTENCE_POLICY,
        CONTEXT_GATHERING_POLICY,
        "<uncertainty>\nSay so.\n</uncertainty>",
        TOOL_PREAMBLE_POLICY,
    ]


def test_json_object_can_override_all_five_keys() -> None:
    overrides = json.dumps(
        {
            "persistence_policy": "p",
            "context_gathering_policy": "c",
            "uncertainty_policy": "u",
            "tool_preamble_policy": "t",
            "extra_policy": "e",
        }
    )
    assert blocks_of(build_system_instruction("I", overrides)) == [
        "I",
        "<persistence>\np\n</persistence>",
        "<context_gathering>\nc\n</context_gathering>",
        "<uncertainty>\nu\n</uncertainty>",
        "<tool_preambles>\nt\n</tool_preambles>",
        "e",
    ]


def test_json_unknown_keys_are_ignored() -> None:
    overrides = json.dumps({"persona": "pirate", "instruction": "ignore all", "extra": "x"})
    assert parse_prompt_policy_overrides(overrides) == PolicyOverrides()
    assert build_system_instruction("Task.", overrides) == build_system_instruction("Task.")


@pytest.mark.parametrize(
    ("key", "tag"),
    [
        ("persistence_policy", "persistence"),
        ("context_gathering_policy", "context_gathering"),
        ("uncertainty_policy", "uncertainty"),
        ("tool_preamble_policy", "tool_preambles"),
    ],
)
def test_four_policy_keys_are_auto_wrapped_when_tag_omitted(key: str, tag: str) -> None:
    parsed = parse_prompt_policy_overrides(json.dumps({key: "  Line one.\nLine two.  "}))
    assert getattr(parsed, key) == f"<{tag}>\nLine one.\nLine two.\n</{tag}>"


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("persistence_policy", "<persistence>\nmine\n</persistence>"),
        ("persistence_policy", "<PERSISTENCE>mine</PERSISTENCE>"),
        ("context_gathering_policy", '<context_gathering level="low">\nmine\n</context_gathering>'),
        ("tool_preamble_policy", "<tool_preambles>mine</tool_preambles>"),
    ],
)
def test_value_that_already_opens_with_its_tag_is_not_wrapped_again(key: str, value: str) -> None:
    assert getattr(parse_prompt_policy_overrides(json.dumps({key: value})), key) == value


@pytest.mark.parametrize("value", ["<persistence", "<persistenceX>mine</persistenceX>", "text <persistence>"])
def test_value_that_only_looks_like_its_tag_is_wrapped(value: str) -> None:
    parsed = parse_prompt_policy_overrides(json.dumps({"persistence_policy": value}))
    assert parsed.persistence_policy == f"<persistence>\n{value}\n</persistence>"


def test_value_with_a_different_tag_is_still_wrapped_in_its_own_tag() -> None:
    parsed = parse_prompt_policy_overrides(json.dumps({"uncertainty_policy": "<persistence>x</persistence>"}))
    assert parsed.uncertainty_policy == "<uncertainty>\n<persistence>x</persistence>\n</uncertainty>"


def test_extra_policy_from_json_is_not_wrapped() -> None:
    parsed = parse_prompt_policy_overrides(json.dumps({"extra_policy": "Use metric units."}))
    assert parsed == PolicyOverrides(extra_policy="Use metric units.")


def test_empty_string_value_disables_that_block() -> None:
    overrides = json.dumps({"context_gathering_policy": "", "tool_preamble_policy": "   "})
    assert blocks_of(build_system_instruction("Task.", overrides)) == [
        "Task.",
        PERSISTENCE_POLICY,
        UNCERTAINTY_POLICY,
    ]


@pytest.mark.parametrize("value", [None, 1, 2.5, True, ["x"], {"text": "x"}])
def test_non_string_value_is_ignored_and_default_kept(value: object) -> None:
    overrides = json.dumps({"persistence_policy": value, "extra_policy": value})
    assert parse_prompt_policy_overrides(overrides) == PolicyOverrides()


@pytest.mark.parametrize("text", ["[1]", '"x"', "42", "null", "true", '["persistence_policy"]'])
def test_valid_json_that_is_not_an_object_is_plain_text(text: str) -> None:
    assert parse_prompt_policy_overrides(text) == PolicyOverrides(extra_policy=text)


@pytest.mark.parametrize(
    "text", ['{"persistence_policy": "x"', "{not json}", '{"a": 1} trailing', "{ prefer short answers }"]
)
def test_invalid_json_starting_with_brace_is_plain_text(text: str) -> None:
    assert parse_prompt_policy_overrides(text) == PolicyOverrides(extra_policy=text)
    assert blocks_of(build_system_instruction("Task.", text))[-1] == text


def test_json_object_with_surrounding_whitespace_is_still_json() -> None:
    parsed = parse_prompt_policy_overrides('\n  {"extra_policy": "E"}  \n')
    assert parsed == PolicyOverrides(extra_policy="E")


def test_custom_defaults_are_used_and_still_overridable() -> None:
    org = PolicySet(persistence_policy="<persistence>org</persistence>", extra_policy="org extra")
    text = build_system_instruction("Task.", '{"extra_policy": "run extra"}', defaults=org)
    assert blocks_of(text) == [
        "Task.",
        "<persistence>org</persistence>",
        CONTEXT_GATHERING_POLICY,
        UNCERTAINTY_POLICY,
        TOOL_PREAMBLE_POLICY,
        "run extra",
    ]


def test_with_overrides_returns_a_new_set_and_leaves_defaults_untouched() -> None:
    changed = DEFAULT_POLICIES.with_overrides(PolicyOverrides(persistence_policy=""))
    assert changed.persistence_policy == ""
    assert DEFAULT_POLICIES.persistence_policy == PERSISTENCE_POLICY
    assert DEFAULT_POLICIES.with_overrides(PolicyOverrides()) is DEFAULT_POLICIES
