"""Prompt building blocks: GPT-5 policies, the ``<think>`` filter, display rules and the prompt library.

- :mod:`~kanawa.prompts.policies` — default policies and ``build_system_instruction`` (seed 000 §4).
- :mod:`~kanawa.prompts.think` — streaming ``<think>`` separation and the fallback thought (001 §4.6).
- :mod:`~kanawa.prompts.display` — which round text is shown (seed 000 §5).
- :mod:`~kanawa.prompts.library` — template id → text per language (seed 002 §9-1).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kanawa._lazy import lazy_exports

# Loaded on first use: the loop takes the library and the display rules; the policy
# texts and the <think> filter load when a run needs them.
_EXPORTS: dict[str, str] = {
    "should_emit_response_text": "kanawa.prompts.display",
    "visible_text": "kanawa.prompts.display",
    "DEFAULT_PROMPTS": "kanawa.prompts.library",
    "PromptLibrary": "kanawa.prompts.library",
    "PromptTemplateError": "kanawa.prompts.library",
    "CONTEXT_GATHERING_POLICY": "kanawa.prompts.policies",
    "DEFAULT_POLICIES": "kanawa.prompts.policies",
    "PERSISTENCE_POLICY": "kanawa.prompts.policies",
    "TOOL_PREAMBLE_POLICY": "kanawa.prompts.policies",
    "UNCERTAINTY_POLICY": "kanawa.prompts.policies",
    "PolicyOverrides": "kanawa.prompts.policies",
    "PolicySet": "kanawa.prompts.policies",
    "build_system_instruction": "kanawa.prompts.policies",
    "parse_prompt_policy_overrides": "kanawa.prompts.policies",
    "ThinkOutput": "kanawa.prompts.think",
    "ThinkTagFilter": "kanawa.prompts.think",
    "fallback_thought": "kanawa.prompts.think",
    "split_think": "kanawa.prompts.think",
}

if TYPE_CHECKING:
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

__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)

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
