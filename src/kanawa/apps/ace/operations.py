"""Delta operations on a playbook, applied deterministically (ACE "incremental delta updates").

ACE never rewrites a playbook wholesale — a rewrite by a model loses detail a little more each time
("context collapse"). The Curator emits small operations instead, and :func:`apply_operations` merges
them by plain code:

- ``ADD`` a bullet to a section (new id: the section prefix and the playbook's next shared counter);
- ``UPDATE`` a bullet's content;
- ``TAG`` a bullet helpful / harmful / neutral (counters only ever grow by the tag's count);
- ``REMOVE`` a bullet;
- ``MERGE`` near-duplicates into the first id: counters are summed, the others removed, and the
  content replaced when the operation carries one.

Each operation yields one :class:`AuditRecord` (applied or skipped, with the reason and the content
before and after). The same playbook, operations and time give the same result: no randomness, no
clock reads besides ``at``. Stores run this function inside their lock or transaction, which is what
makes two concurrent curators lose nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from kanawa.apps.ace.playbook import Bullet, Playbook, format_id, normalise_section, now

Tag = Literal["helpful", "harmful", "neutral"]


class _Op(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    reason: str = ""


class AddOp(_Op):
    type: Literal["ADD"] = "ADD"
    section: str
    content: str


class UpdateOp(_Op):
    type: Literal["UPDATE"] = "UPDATE"
    bullet_id: str
    content: str


class TagOp(_Op):
    type: Literal["TAG"] = "TAG"
    bullet_id: str
    tag: Tag
    count: int = Field(default=1, ge=1)


class RemoveOp(_Op):
    type: Literal["REMOVE"] = "REMOVE"
    bullet_id: str


class MergeOp(_Op):
    type: Literal["MERGE"] = "MERGE"
    bullet_ids: list[str] = Field(min_length=2)
    content: str | None = None


Operation = Annotated[AddOp | UpdateOp | TagOp | RemoveOp | MergeOp, Field(discriminator="type")]
OPERATIONS: TypeAdapter[list[Operation]] = TypeAdapter(list[Operation])


class AuditRecord(BaseModel):
    """What one operation did. ``bullet_id`` is the bullet created or changed (the kept one for MERGE)."""

    model_config = ConfigDict(frozen=True)

    index: int
    type: Literal["ADD", "UPDATE", "TAG", "REMOVE", "MERGE"]
    status: Literal["applied", "skipped"]
    bullet_id: str | None = None
    detail: str = ""
    before: str | None = None
    after: str | None = None
    at: datetime


def normalised_text(text: str) -> str:
    """Text compared for exact duplicates: case-folded, whitespace collapsed, trailing punctuation dropped."""
    return re.sub(r"[\s。．.!！]+$", "", " ".join(text.casefold().split()))


def _candidate(op: AddOp) -> Bullet | str:
    """The bullet an ADD would make (its id given later), or why it cannot be made."""
    try:
        section = normalise_section(op.section)
        return Bullet(id=format_id("x", 0), section=section, content=op.content)
    except ValueError as exc:
        return _first_line(exc)


def _merge(
    bullets: dict[str, Bullet], op: MergeOp, stamp: datetime
) -> tuple[Bullet, Bullet, list[Bullet]] | str:
    """A MERGE: the kept bullet, what it becomes (counters summed, the new content if given) and the
    bullets it absorbs; or why it cannot apply."""
    ids = list(dict.fromkeys(op.bullet_ids))
    missing = [bullet_id for bullet_id in ids if bullet_id not in bullets]
    if missing:
        return f"no such bullet: {', '.join(missing)}"
    if len(ids) < 2:
        return "needs two distinct bullets"
    keep, *others = (bullets[bullet_id] for bullet_id in ids)
    update: dict[str, object] = {
        "helpful": keep.helpful + sum(b.helpful for b in others),
        "harmful": keep.harmful + sum(b.harmful for b in others),
        "neutral": keep.neutral + sum(b.neutral for b in others),
        "updated_at": stamp,
    }
    if op.content is not None and op.content.strip():
        update["content"] = op.content
    return keep, Bullet.model_validate({**keep.model_dump(), **update}), others


def apply_operations(
    playbook: Playbook, operations: Sequence[Operation], *, at: datetime | None = None
) -> tuple[Playbook, list[AuditRecord]]:
    """Apply ``operations`` in order to a copy of ``playbook``; returns the new playbook and the audit.

    An operation that cannot apply (unknown id, empty content, an ADD that repeats an existing bullet
    word for word) is skipped with a reason; the rest still apply.
    """
    stamp = at or now()
    bullets: dict[str, Bullet] = {bullet.id: bullet for bullet in playbook.bullets}
    order = [bullet.id for bullet in playbook.bullets]
    sections = list(playbook.sections)
    prefixes = dict(playbook.prefixes)
    counter = playbook.next_counter
    audit: list[AuditRecord] = []

    def record(index: int, op: Operation, status: Literal["applied", "skipped"], **fields: object) -> None:
        audit.append(AuditRecord(index=index, type=op.type, status=status, at=stamp, **fields))  # type: ignore[arg-type]

    for index, op in enumerate(operations):
        if isinstance(op, UpdateOp | TagOp | RemoveOp) and op.bullet_id not in bullets:
            record(index, op, "skipped", bullet_id=op.bullet_id, detail="no such bullet")
            continue
        if isinstance(op, AddOp):
            candidate = _candidate(op)
            if isinstance(candidate, str):
                record(index, op, "skipped", detail=candidate)
                continue
            section = candidate.section
            key = normalised_text(candidate.content)
            twin = next((b for b in bullets.values() if normalised_text(b.content) == key), None)
            if twin is not None:
                record(index, op, "skipped", bullet_id=twin.id, detail=f"same text as {twin.id}")
                continue
            if section not in sections:
                sections.append(section)
            prefix = prefixes.get(section) or Playbook(sections=[section]).prefix_for(section)
            prefixes.setdefault(section, prefix)
            bullet_id = format_id(prefix, counter)
            counter += 1
            bullets[bullet_id] = candidate.model_copy(
                update={"id": bullet_id, "created_at": stamp, "updated_at": stamp}
            )
            order.append(bullet_id)
            record(index, op, "applied", bullet_id=bullet_id, after=candidate.content)
        elif isinstance(op, UpdateOp):
            old = bullets[op.bullet_id]
            try:
                new = Bullet.model_validate({**old.model_dump(), "content": op.content, "updated_at": stamp})
            except ValueError as exc:
                record(index, op, "skipped", bullet_id=op.bullet_id, detail=_first_line(exc))
                continue
            bullets[op.bullet_id] = new
            record(index, op, "applied", bullet_id=op.bullet_id, before=old.content, after=new.content)
        elif isinstance(op, TagOp):
            old = bullets[op.bullet_id]
            value = getattr(old, op.tag) + op.count
            bullets[op.bullet_id] = old.model_copy(update={op.tag: value, "updated_at": stamp})
            record(index, op, "applied", bullet_id=op.bullet_id, detail=f"{op.tag}={value}")
        elif isinstance(op, RemoveOp):
            old = bullets.pop(op.bullet_id)
            order.remove(op.bullet_id)
            record(index, op, "applied", bullet_id=op.bullet_id, before=old.content)
        elif isinstance(op, MergeOp):
            merging = _merge(bullets, op, stamp)
            if isinstance(merging, str):
                record(index, op, "skipped", bullet_id=op.bullet_ids[0], detail=merging)
                continue
            keep, merged, others = merging
            bullets[keep.id] = merged
            for other in others:
                del bullets[other.id]
                order.remove(other.id)
            record(
                index,
                op,
                "applied",
                bullet_id=keep.id,
                detail=f"absorbed {', '.join(b.id for b in others)}",
                before=keep.content,
                after=merged.content,
            )
    result = Playbook(
        bullets=[bullets[bullet_id] for bullet_id in order],
        sections=sections,
        prefixes=prefixes,
        next_counter=counter,
    )
    return result, audit


def _first_line(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return "; ".join(str(error["msg"]) for error in exc.errors())
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[-1] if lines else type(exc).__name__


__all__ = [
    "OPERATIONS",
    "AddOp",
    "AuditRecord",
    "MergeOp",
    "Operation",
    "RemoveOp",
    "Tag",
    "TagOp",
    "UpdateOp",
    "apply_operations",
    "normalised_text",
]
