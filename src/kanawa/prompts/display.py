"""What the user sees of a round's response text (seed 000 §5, 001 §4.6).

``emit_intermediate_thoughts`` (default ``true``, seed 001 §4.3) decides whether the ``<think>``
narration of intermediate rounds reaches the user:

=============== ============================== ====================================
tool calls      ``emit_intermediate_thoughts``  text shown
=============== ============================== ====================================
no              any                            yes
yes             ``true``                       yes, thoughts included
yes             ``false``                      only on the final iteration
=============== ============================== ====================================

With ``false``, ``<think>…</think>`` blocks are also removed from whatever is shown, so the final
display holds only the user-facing text.
"""

from __future__ import annotations

from kanawa.prompts.think import split_think

__all__ = ["should_emit_response_text", "visible_text"]


def should_emit_response_text(
    *, has_tool_calls: bool, emit_intermediate_thoughts: bool, is_final_iteration: bool
) -> bool:
    """Whether a round's response text is shown (seed 000 §5 table)."""
    if not has_tool_calls:
        return True
    return emit_intermediate_thoughts or is_final_iteration


def visible_text(text: str, *, emit_intermediate_thoughts: bool) -> str:
    """``text`` as shown: unchanged when thoughts are emitted, else with every ``<think>`` block removed.

    Removal follows :func:`~kanawa.prompts.think.split_think` exactly (an unclosed block hides the rest
    of the text; a stray ``</think>`` is dropped); surrounding whitespace is kept as written.
    """
    if emit_intermediate_thoughts:
        return text
    return split_think(text)[0]
