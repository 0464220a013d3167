"""``Curator``: turns a reflection into delta operations and keeps the playbook lean (ACE's Curator).

Three sources of operations, all merged by :func:`~kanawa.apps.ace.operations.apply_operations`:

1. **Tags** — each of the Reflector's bullet tags becomes a ``TAG`` (no model involved).
2. **Deltas** — the model proposes at most ``max_new_bullets`` ``ADD``s (and, when it must,
   ``UPDATE``/``REMOVE`` of cited bullets) from the reflection and the playbook's sections; ids it
   invents are dropped. It never rewrites the playbook.
3. **Refinement** (:meth:`Curator.refine`, run after the deltas land) — near-duplicates, found by
   embedding cosine ≥ ``merge_threshold`` (the search's embeddings, cached by content hash), become
   ``MERGE`` operations that keep the older id and sum the counters; then, while the playbook's text
   exceeds ``token_budget`` tokens, the least useful bullets are removed (most harmful first, then
   fewest helpful votes, then the oldest). Both passes are deterministic.

:meth:`Curator.update` does the whole round against a store (each ``aapply`` atomic) and returns the
operations with their audit records.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Final, Literal

import numpy as np
from pydantic import BaseModel, Field

from kanawa.agents.agent import Agent
from kanawa.apps.ace.operations import AddOp, AuditRecord, MergeOp, Operation, RemoveOp, TagOp, UpdateOp
from kanawa.apps.ace.playbook import Playbook
from kanawa.apps.ace.reflector import Reflection
from kanawa.apps.ace.search.hybrid import HybridSearch
from kanawa.apps.ace.store.base import PlaybookStore
from kanawa.apps.ace.trajectory import Trajectory
from kanawa.llm.adapter import LLMAdapter
from kanawa.llm.tokens import count_message_tokens

ALL_PAIRS_LIMIT: Final = 5_000
"""Above this many bullets, :meth:`Curator.refine` compares only the bullets a curation touched."""

INSTRUCTIONS: Final = (
    "You are the Curator of a playbook of advice. From a reflection on one attempt, propose only the new, "
    "specific, reusable insights that the playbook does not already contain, as small operations. Prefer "
    "ADD to an existing section. Never restate existing bullets. Propose nothing if there is nothing new."
)


class ProposedOperation(BaseModel):
    type: Literal["ADD", "UPDATE", "REMOVE"]
    section: str | None = None
    content: str | None = None
    bullet_id: str | None = None


class CuratorOutput(BaseModel):
    reasoning: str = ""
    operations: list[ProposedOperation] = Field(default_factory=list)


class CurationResult(BaseModel):
    """What one :meth:`Curator.update` did."""

    operations: list[Operation]
    audit: list[AuditRecord]


class Curator:
    """Delta operations from reflections (see the module docstring).

    Args:
        llm_client: the model proposing deltas; ``None`` applies tags and refinement only.
        search: the source of embeddings for near-duplicate merges (``None``: exact duplicates only).
        merge_threshold: cosine similarity at or above which two bullets are merged.
        token_budget: most tokens the playbook's text may take (``None``: unbounded).
        max_new_bullets: most ADDs accepted per reflection.
    """

    def __init__(
        self,
        llm_client: LLMAdapter | str | None,
        *,
        search: HybridSearch | None = None,
        merge_threshold: float = 0.93,
        token_budget: int | None = 20_000,
        max_new_bullets: int = 3,
        default_section: str = "OTHERS",
    ) -> None:
        if not 0.0 < merge_threshold <= 1.0:
            raise ValueError("merge_threshold must be in (0, 1]")
        self.agent: Agent[CuratorOutput] | None = (
            Agent("ace-curator", INSTRUCTIONS, model=llm_client, output_type=CuratorOutput)
            if llm_client is not None
            else None
        )
        self.search = search
        self.merge_threshold = merge_threshold
        self.token_budget = token_budget
        self.max_new_bullets = max_new_bullets
        self.default_section = default_section

    async def aclose(self) -> None:
        if self.agent is not None:
            await self.agent.aclose()

    async def curate(
        self, reflection: Reflection, trajectory: Trajectory, playbook: Playbook
    ) -> list[Operation]:
        """Tags from the reflection, then the model's deltas (validated against ``playbook``)."""
        operations: list[Operation] = [
            TagOp(bullet_id=tag.id, tag=tag.tag, reason="reflector")
            for tag in reflection.bullet_tags
            if tag.id in playbook
        ]
        if self.agent is None:
            return operations
        result = await self.agent.arun(build_prompt(reflection, trajectory, playbook))
        proposed = result.output.operations if result.output is not None else []
        adds = 0
        for op in proposed:
            if op.type == "ADD" and op.content and adds < self.max_new_bullets:
                section = op.section or self.default_section
                operations.append(AddOp(section=section, content=op.content, reason="curator"))
                adds += 1
            elif op.type == "UPDATE" and op.bullet_id is not None and op.bullet_id in playbook and op.content:
                operations.append(UpdateOp(bullet_id=op.bullet_id, content=op.content, reason="curator"))
            elif op.type == "REMOVE" and op.bullet_id is not None and op.bullet_id in playbook:
                operations.append(RemoveOp(bullet_id=op.bullet_id, reason="curator"))
        return operations

    async def refine(self, playbook: Playbook, *, focus: Collection[str] | None = None) -> list[Operation]:
        """MERGE near-duplicates, then REMOVE the least useful bullets until within the token budget.

        ``focus`` limits the duplicate search to pairs involving those ids (the bullets a curation just
        added or edited), which keeps it linear in the playbook's size; without it every pair is
        compared, for playbooks of up to ``ALL_PAIRS_LIMIT`` bullets."""
        operations: list[Operation] = []
        gone: set[str] = set()
        bullets = playbook.bullets
        if focus is None and len(bullets) > ALL_PAIRS_LIMIT:
            focus = ()
        if self.search is not None and self.search.embedder is not None and len(bullets) > 1:
            await self.search.aprepare(playbook)
            matrix = self.search.vectors(playbook)
            rows = (
                list(range(len(bullets)))
                if focus is None
                else [i for i, b in enumerate(bullets) if b.id in set(focus)]
            )
            order = sorted(range(len(bullets)), key=lambda i: bullets[i].counter)
            pairs: dict[int, set[int]] = {}
            if rows:
                sims = matrix[rows] @ matrix.T
                for r, i in enumerate(rows):
                    for j in np.flatnonzero(sims[r] >= self.merge_threshold):
                        if int(j) != i:
                            pairs.setdefault(i, set()).add(int(j))
                            pairs.setdefault(int(j), set()).add(i)
            for i in order:
                if bullets[i].id in gone or i not in pairs:
                    continue
                twins = sorted(
                    (
                        j
                        for j in pairs[i]
                        if bullets[j].id not in gone and bullets[j].counter > bullets[i].counter
                    ),
                    key=lambda j: bullets[j].counter,
                )
                if twins:
                    ids = [bullets[i].id, *(bullets[j].id for j in twins)]
                    gone.update(ids[1:])
                    best = max(float(matrix[i] @ matrix[j]) for j in twins)
                    operations.append(MergeOp(bullet_ids=ids, reason=f"near-duplicate (cosine {best:.3f})"))
        if self.token_budget is not None:
            remaining = [b for b in playbook.bullets if b.id not in gone]
            total = count_message_tokens(Playbook(bullets=remaining, sections=playbook.sections).to_text())
            victims = sorted(remaining, key=lambda b: (b.helpful - b.harmful, b.helpful, b.counter))
            for bullet in victims:
                if total <= self.token_budget:
                    break
                total -= count_message_tokens(f"[{bullet.id}] helpful=0 harmful=0 :: {bullet.content}\n")
                operations.append(RemoveOp(bullet_id=bullet.id, reason=f"token budget {self.token_budget}"))
        return operations

    async def update(
        self, store: PlaybookStore, dataset: str, reflection: Reflection, trajectory: Trajectory
    ) -> CurationResult:
        """Curate against ``store``: apply tags and deltas, then refinement; each apply is atomic."""
        playbook = await store.aload(dataset)
        operations = await self.curate(reflection, trajectory, playbook)
        audit = await store.aapply(dataset, operations) if operations else []
        touched = {
            a.bullet_id
            for a in audit
            if a.status == "applied" and a.type in ("ADD", "UPDATE") and a.bullet_id
        }
        current = await store.aload(dataset)
        refined = await self.refine(current, focus=touched if len(current) > ALL_PAIRS_LIMIT else None)
        if refined:
            audit += await store.aapply(dataset, refined)
        return CurationResult(operations=[*operations, *refined], audit=audit)


def build_prompt(reflection: Reflection, trajectory: Trajectory, playbook: Playbook) -> str:
    cited = [playbook.get(i) for i in trajectory.used_bullet_ids]
    lines = "\n".join(f"[{b.id}] {b.content}" for b in cited if b is not None)
    return "\n\n".join(
        [
            f"## Sections\n{', '.join(playbook.sections) or '(none yet)'}",
            f"## Task\n{trajectory.query}",
            f"## Bullets the attempt used\n{lines or '(none)'}",
            "## Reflection\n" + reflection.model_dump_json(exclude={"bullet_tags"}, indent=1),
            'Reply with JSON: {"reasoning": "...", "operations": [{"type": "ADD", "section": "...", '
            '"content": "..."}]}',
        ]
    )


__all__ = ["CurationResult", "Curator", "CuratorOutput", "ProposedOperation", "build_prompt"]
