"""Prompt building blocks: GPT-5 policies, the ``<think>`` filter, display rules and the prompt library.

- :mod:`~kanawa.prompts.policies` — default policies and ``build_system_instruction`` (seed 000 §4).
- :mod:`~kanawa.prompts.think` — streaming ``<think>`` separation and the fallback thought (001 §4.6).
- :mod:`~kanawa.prompts.display` — which round text is shown (seed 000 §5).
- :mod:`~kanawa.prompts.library` — template id → text per language (seed 002 §9-1).
"""

from kanawa.prompts.display import should_emit_response_text, visible_text
from kanawa.prompts.library import DEFAULT_PROMPTS, PromptLibrary, PromptTemplateError
from kanawa.prompts.policies import (
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
from kanawa.prompts.think import ThinkOutput, ThinkTagFilter, fallback_thought, split_think

__all__ = [
    "CONTEXT_GATHERING_POLICY",
    "DEFAULT_POLICIES",
    "DEFAULT_PROMPTS",
    "PERSISTENCE_POLICY",
    "TOOL_PREAMBLE_POLICY",
    "UNCERTAINTY_POLICY",
    "PolicyOverrides",
    "PolicySet",
    "PromptLibrary",
    "PromptTemplateError",
    "ThinkOutput",
    "ThinkTagFilter",
    "build_system_instruction",
    "fallback_thought",
    "parse_prompt_policy_overrides",
    "should_emit_response_text",
    "split_think",
    "visible_text",
]
