"""The default GPT-5 prompt policies and the system-instruction composer (seed 000 §4, 001 §4.4).

A system instruction is the task ``instruction`` followed by four policy blocks and an optional extra
block, in this fixed order::

    instruction, persistence_policy, context_gathering_policy, uncertainty_policy,
    tool_preamble_policy, extra_policy

Each non-empty block is stripped of surrounding whitespace and separated from the next by one blank
line; empty blocks are skipped. ``prompt_policy_overrides`` (a Dify strategy parameter, seed 001 §4.3)
lets an organisation swap blocks without touching the task instruction (seed 000 §8); see
:func:`parse_prompt_policy_overrides` for the accepted forms.
"""

from __future__ import annotations

import json
from dataclasses import KW_ONLY, dataclass, fields, replace
from typing import Final

__all__ = [
    "CONTEXT_GATHERING_POLICY",
    "DEFAULT_POLICIES",
    "PERSISTENCE_POLICY",
    "POLICY_TAGS",
    "TOOL_PREAMBLE_POLICY",
    "UNCERTAINTY_POLICY",
    "PolicyOverrides",
    "PolicySet",
    "build_system_instruction",
    "parse_prompt_policy_overrides",
]

PERSISTENCE_POLICY: Final = """<persistence>
- You are an agent: keep working until the user's request is completely resolved, then end your turn.
- Do not hand control back just because something is uncertain; find the most reasonable way forward \
and keep going.
- When a detail is ambiguous, pick the most sensible assumption, act on it, and note it in your answer \
so the user can correct it.
- End your turn early only when the task is done or you are blocked on something only the user can \
provide.
</persistence>"""

CONTEXT_GATHERING_POLICY: Final = """<context_gathering>
Goal: collect just enough context to act correctly, then act.
- Start with a broad look, then narrow to the few sources that matter. Run independent searches or \
lookups in parallel in one step instead of one after another.
- Never repeat a lookup you already ran; reuse what earlier results told you.
- Stop gathering as soon as you can say exactly what to answer or change, or when further results keep \
pointing to the same conclusion.
- Budget: at most two rounds of searching before you act. Search again only if an action fails or \
raises a question you cannot answer from what you have.
- Prefer acting on what you know, with assumptions stated, over exhaustive searching.
</context_gathering>"""

UNCERTAINTY_POLICY: Final = """<uncertainty>
- Keep what you know apart from what you assume; say plainly what is unknown or could not be checked.
- Never invent facts, sources, numbers or tool results. If a tool was not called, failed, or returned \
nothing useful, say so instead of guessing its output.
- If missing information would make the answer wrong, ask one focused question; otherwise proceed on a \
stated assumption.
- Let your confidence follow the evidence: say how sure you are where it matters, and label estimates \
as estimates.
</uncertainty>"""

TOOL_PREAMBLE_POLICY: Final = """<tool_preambles>
- Before the first tool call, restate the user's goal in one sentence and outline your plan in a few \
short steps.
- Between tool calls, add a one- or two-line progress note: what you just learned and what you will do \
next.
- Keep these notes brief and factual; do not paste tool output back verbatim.
- When you finish, summarise what you did and the outcome, distinct from the plan you started with.
</tool_preambles>"""

POLICY_TAGS: Final[dict[str, str]] = {
    "persistence_policy": "persistence",
    "context_gathering_policy": "context_gathering",
    "uncertainty_policy": "uncertainty",
    "tool_preamble_policy": "tool_preambles",
}
"""Override key → XML-style tag wrapped around a value that omits it (seed 001 §4.4)."""


@dataclass(frozen=True, slots=True)
class PolicySet:
    """The five policy blocks that follow the instruction, in composition order.

    An empty string disables a block. The defaults are the four GPT-5 policies and no extra block.
    """

    _: KW_ONLY
    persistence_policy: str = PERSISTENCE_POLICY
    context_gathering_policy: str = CONTEXT_GATHERING_POLICY
    uncertainty_policy: str = UNCERTAINTY_POLICY
    tool_preamble_policy: str = TOOL_PREAMBLE_POLICY
    extra_policy: str = ""

    def blocks(self) -> tuple[str, str, str, str, str]:
        """The blocks in the order seed 000 §4 fixes."""
        return (
            self.persistence_policy,
            self.context_gathering_policy,
            self.uncertainty_policy,
            self.tool_preamble_policy,
            self.extra_policy,
        )

    def with_overrides(self, overrides: PolicyOverrides) -> PolicySet:
        """A copy with every block that ``overrides`` sets (non-``None``) replaced."""
        changes = {
            f.name: value for f in fields(overrides) if (value := getattr(overrides, f.name)) is not None
        }
        return replace(self, **changes) if changes else self

    def render(self, instruction: str) -> str:
        """``instruction`` and the blocks, stripped, empty ones skipped, joined by one blank line."""
        parts = (part.strip() for part in (instruction, *self.blocks()))
        return "\n\n".join(part for part in parts if part)


DEFAULT_POLICIES: Final = PolicySet()


@dataclass(frozen=True, slots=True)
class PolicyOverrides:
    """Blocks to replace; ``None`` keeps the default, ``""`` disables the block.

    Values for the four tagged policies are already wrapped in their tag (see
    :func:`parse_prompt_policy_overrides`).
    """

    _: KW_ONLY
    persistence_policy: str | None = None
    context_gathering_policy: str | None = None
    uncertainty_policy: str | None = None
    tool_preamble_policy: str | None = None
    extra_policy: str | None = None


_NO_OVERRIDES: Final = PolicyOverrides()


def _wrap(key: str, value: str) -> str:
    """Wrap ``value`` in the tag of ``key`` unless it already opens with that tag (any case/attrs)."""
    tag = POLICY_TAGS.get(key)
    if tag is None:
        return value
    head = value[: len(tag) + 2].lower()
    if head.startswith(f"<{tag}") and head[len(tag) + 1 :][:1] in (">", " ", "\t", "\n", "\r"):
        return value
    return f"<{tag}>\n{value}\n</{tag}>"


def parse_prompt_policy_overrides(text: str | None) -> PolicyOverrides:
    """Read the ``prompt_policy_overrides`` parameter (seed 000 §4, 001 §4.4).

    - ``None``, ``""`` or whitespace only: no override.
    - A JSON object (the stripped text starts with ``{`` and parses to an object): only the keys
      ``persistence_policy``, ``context_gathering_policy``, ``uncertainty_policy``,
      ``tool_preamble_policy`` and ``extra_policy`` count; unknown keys are ignored.

      * A value that is not a string (number, ``null``, list, object …) is ignored, so the default
        block stays; to remove a block, give an empty string.
      * A string is stripped; an empty (or whitespace-only) string disables that block.
      * For the first four keys, a non-empty value that does not open with its tag (``<persistence>``,
        ``<context_gathering>``, ``<uncertainty>``, ``<tool_preambles>``; case-insensitive, attributes
        allowed) is wrapped in it. ``extra_policy`` is never wrapped.
    - Anything else is plain text and becomes ``extra_policy`` (stripped). This includes valid JSON
      that is not an object (``[1]``, ``"x"``, ``42``) and text that starts with ``{`` but is not valid
      JSON: an operator's prose must never be lost because it looks a little like JSON.
    """
    if text is None:
        return _NO_OVERRIDES
    stripped = text.strip()
    if not stripped:
        return _NO_OVERRIDES
    if stripped.startswith("{"):
        try:
            data = json.loads(stripped)
        except ValueError:
            data = None
        if isinstance(data, dict):
            values: dict[str, str] = {}
            for f in fields(PolicyOverrides):
                value = data.get(f.name)
                if isinstance(value, str):
                    value = value.strip()
                    values[f.name] = _wrap(f.name, value) if value else ""
            return PolicyOverrides(**values)
    return PolicyOverrides(extra_policy=stripped)


def build_system_instruction(
    base_instruction: str,
    prompt_policy_overrides: str | None = None,
    *,
    defaults: PolicySet = DEFAULT_POLICIES,
) -> str:
    """Compose the system instruction: instruction, the four policies, then the extra policy.

    ``prompt_policy_overrides`` is interpreted by :func:`parse_prompt_policy_overrides`. ``defaults``
    lets a caller start from a different policy set (e.g. an organisation's own), still overridable.
    """
    policies = defaults.with_overrides(parse_prompt_policy_overrides(prompt_policy_overrides))
    return policies.render(base_instruction)
