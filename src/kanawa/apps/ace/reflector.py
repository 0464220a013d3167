"""``Reflector``: diagnoses one Generator run and tags the bullets it used (ACE's Reflector).

Input: a :class:`Trajectory`, the bullets it cited, and either the ground truth or execution feedback
(test output, an error message, a user's verdict) — or both. Output: a :class:`Reflection` with the
reasoning, the error identified, its root cause, the correct approach, the key insight to remember,
and a helpful / harmful / neutral tag per cited bullet. Tags for ids the run did not cite are dropped,
so a model cannot vote on bullets it never saw.

The model is a kanawa :class:`~kanawa.Agent` with ``output_type=Reflection`` (structured output).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Final, Literal

from pydantic import BaseModel, Field

from kanawa.agents.agent import Agent
from kanawa.apps.ace.playbook import Bullet
from kanawa.apps.ace.trajectory import Trajectory
from kanawa.llm.adapter import LLMAdapter

INSTRUCTIONS: Final = (
    "You are the Reflector of a self-improving agent. You read one attempt at a task, the playbook bullets "
    "it used, and the ground truth or execution feedback. Diagnose what went right or wrong, name the root "
    "cause, state the correct approach and one reusable key insight, and tag each used bullet as helpful, "
    "harmful or neutral for this attempt. Be specific and concise."
)


class BulletTag(BaseModel):
    id: str
    tag: Literal["helpful", "harmful", "neutral"]


class Reflection(BaseModel):
    """ACE's reflection fields."""

    reasoning: str = ""
    error_identification: str = ""
    root_cause_analysis: str = ""
    correct_approach: str = ""
    key_insight: str = ""
    bullet_tags: list[BulletTag] = Field(default_factory=list)


class Reflector:
    """Turns a trajectory and feedback into a :class:`Reflection`.

    Args:
        llm_client: an :class:`~kanawa.llm.LLMAdapter` or a model string.
    """

    def __init__(self, llm_client: LLMAdapter | str) -> None:
        self.agent: Agent[Reflection] = Agent(
            "ace-reflector", INSTRUCTIONS, model=llm_client, output_type=Reflection
        )

    async def aclose(self) -> None:
        await self.agent.aclose()

    async def reflect(
        self,
        trajectory: Trajectory,
        *,
        bullets: Sequence[Bullet] = (),
        ground_truth: str | None = None,
        feedback: str | None = None,
    ) -> Reflection:
        """Reflect on ``trajectory``. ``bullets`` are the playbook bullets it cited (for their text).
        Raises ``ValueError`` when neither ``ground_truth`` nor ``feedback`` is given."""
        if ground_truth is None and not feedback:
            raise ValueError("the Reflector needs ground_truth or execution feedback")
        result = await self.agent.arun(build_prompt(trajectory, bullets, ground_truth, feedback))
        reflection = result.output
        if reflection is None:
            raise ValueError("the Reflector's model gave no reflection")
        used = set(trajectory.used_bullet_ids)
        tags = {tag.id: tag for tag in reflection.bullet_tags if tag.id in used}
        return reflection.model_copy(update={"bullet_tags": list(tags.values())})


def build_prompt(
    trajectory: Trajectory, bullets: Sequence[Bullet], ground_truth: str | None, feedback: str | None
) -> str:
    cited = "\n".join(f"[{b.id}] {b.content}" for b in bullets if b.id in trajectory.used_bullet_ids)
    parts = [
        f"## Task\n{trajectory.query}",
        "## Attempt\nReasoning:\n" + "\n".join(f"- {step}" for step in trajectory.reasoning_steps),
        f"Answer:\n{trajectory.generated_answer}",
        f"Status: {trajectory.status}"
        + (f" ({trajectory.error_message})" if trajectory.error_message else ""),
        "## Playbook bullets used\n" + (cited or "(none)"),
    ]
    if ground_truth is not None:
        parts.append(f"## Ground truth\n{ground_truth}")
    if feedback:
        parts.append(f"## Execution feedback\n{feedback}")
    schema = json.dumps(list(Reflection.model_fields))
    parts.append(f"Reply with a JSON object with the fields {schema}; bullet_tags is a list of {{id, tag}}.")
    return "\n\n".join(parts)


__all__ = ["BulletTag", "Reflection", "Reflector", "build_prompt"]
