"""System instruction composition (seed 000 §4, seed 001 §4.4): kanawa's composer plus the run context.

``build_system_instruction(base_instruction, prompt_policy_overrides)`` is kanawa's: instruction, then
persistence, context gathering, uncertainty and tool preamble policies, then the extra policy; empty
overrides keep the defaults, plain text becomes ``extra_policy``, a JSON object replaces only the known
keys (unknown keys ignored, the four policy blocks wrapped in their tags when given bare).
``context`` (runtime data) is a separate concept (seed 000 §8) and goes after the policies in a
``<context>`` block.
"""

from __future__ import annotations

import json

from kanawa.prompts.policies import build_system_instruction

__all__ = ["build_system_instruction", "compose_system_prompt"]


def _context_text(context: object) -> str:
    if context is None:
        return ""
    if isinstance(context, str):
        return context.strip()
    try:
        return json.dumps(context, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(context)


def compose_system_prompt(instruction: str, prompt_policy_overrides: str | None, context: object) -> str:
    """The whole system message of a run: the composed policies and, if given, the context block."""
    system = build_system_instruction(instruction or "", prompt_policy_overrides)
    text = _context_text(context)
    return f"{system}\n\n<context>\n{text}\n</context>" if text else system
