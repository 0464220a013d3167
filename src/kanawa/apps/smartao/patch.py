"""The patch model (seed 002 App. A): ``ChangeOp``, ``Change``, ``PatchJSON`` and the operations on them.

A :class:`PatchJSON` is what every SmartAO agent that edits an essay hands back: the ``new_text`` and the
``change_map`` that turns the original into it. Offsets are Python characters (code points) into the
*original* text — never UTF-16 units, never bytes — so ``original[c.start:c.end]`` is exactly what a
change touches. A change map is *canonical* when its changes are sorted by position and no two overlap;
several inserts at one position apply in the order given, before any change that starts there.

Operations:

- :meth:`PatchJSON.apply` — the original in, ``new_text`` out (the contract: ``apply(original) ==
  new_text`` for a patch built by :meth:`PatchJSON.from_changes`);
- :meth:`PatchJSON.invert` — the patch that takes ``new_text`` back to the original;
- :meth:`PatchJSON.rebase` — re-express a patch made on the original against the text another patch
  produced (what a page does when the user accepts one suggestion and then another);
- :func:`merge_patches` — several patches of one original into one, by the overlap rule below.

**Overlap rule** (deterministic, documented for ``Coordinator.merge_patches``): patches are taken in
priority order (the order of the arguments). A change is kept unless it *conflicts* with a change
already kept — the ranges overlap (``a.start < b.end and b.start < a.end``), or one is an insert strictly
inside the other's range, or both are inserts at the same position from different patches. The first
patch's change wins; the dropped changes are returned in :attr:`MergeResult.dropped` so nothing is lost
silently.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from itertools import pairwise

from pydantic import BaseModel, ConfigDict, model_validator


class ChangeOp(str, Enum):  # noqa: UP042 - seed 002 App. A spells it (str, Enum)
    """Seed 002 App. A: what a change does."""

    insert = "insert"
    delete = "delete"
    replace = "replace"  # type: ignore[assignment]  # the seed's member name shadows str.replace


class Change(BaseModel):
    """One edit of the original: ``original[start:end]`` becomes ``text``.

    ``insert`` has ``start == end`` and a non-empty ``text``; ``delete`` has ``start < end`` and no text;
    ``replace`` has ``start < end`` and a text. Anything else is refused with ``ValueError`` (pydantic's
    ``ValidationError``), so a malformed change from a model never reaches :meth:`PatchJSON.apply`.
    """

    model_config = ConfigDict(frozen=True)

    op: ChangeOp
    start: int
    end: int
    text: str | None = None

    @model_validator(mode="after")
    def _check(self) -> Change:
        if self.start < 0 or self.end < self.start:
            raise ValueError(f"a change needs 0 <= start <= end, not start={self.start}, end={self.end}")
        if self.op is ChangeOp.insert:
            if self.start != self.end or not self.text:
                raise ValueError("an insert has start == end and a non-empty text")
        elif self.op is ChangeOp.delete:
            if self.start == self.end or self.text:
                raise ValueError("a delete has start < end and no text")
        elif self.start == self.end or self.text is None:
            raise ValueError("a replace has start < end and a text")
        return self

    @property
    def replacement(self) -> str:
        """What the range becomes (``""`` for a delete)."""
        return self.text or ""

    @property
    def delta(self) -> int:
        """How much the text's length changes."""
        return len(self.replacement) - (self.end - self.start)


def make_change(start: int, end: int, text: str) -> Change:
    """The change that turns ``original[start:end]`` into ``text`` with the right ``op``."""
    if start == end:
        return Change(op=ChangeOp.insert, start=start, end=end, text=text)
    if not text:
        return Change(op=ChangeOp.delete, start=start, end=end)
    return Change(op=ChangeOp.replace, start=start, end=end, text=text)


def conflicts(a: Change, b: Change) -> bool:
    """Whether two changes of one original cannot both apply (see the module's overlap rule; two
    inserts at one position do not conflict here — :func:`merge_patches` decides that by patch)."""
    if a.start < b.end and b.start < a.end:
        return True
    if a.op is ChangeOp.insert and b.start < a.start < b.end:
        return True
    return b.op is ChangeOp.insert and a.start < b.start < a.end


def canonical(changes: Iterable[Change]) -> list[Change]:
    """``changes`` sorted by position (inserts before a change starting at the same point, inserts at
    one point in their given order); ``ValueError`` when two overlap."""
    ordered = sorted(enumerate(changes), key=lambda ic: (ic[1].start, ic[1].op is not ChangeOp.insert, ic[0]))
    out = [change for _, change in ordered]
    for before, after in pairwise(out):
        if conflicts(before, after):
            raise ValueError(
                f"changes overlap: [{before.start}, {before.end}) and [{after.start}, {after.end})"
            )
    return out


def apply_changes(original: str, changes: Iterable[Change]) -> str:
    """``original`` with ``changes`` applied; ``ValueError`` for overlaps or a range past the end."""
    pieces: list[str] = []
    cursor = 0
    for change in canonical(changes):
        if change.end > len(original):
            raise ValueError(
                f"a change ends at {change.end}, past the end of the {len(original)}-character text"
            )
        pieces.append(original[cursor : change.start])
        pieces.append(change.replacement)
        cursor = change.end
    pieces.append(original[cursor:])
    return "".join(pieces)


class PatchJSON(BaseModel):
    """Seed 002 App. A: the edited text and the change map from the original (Python-character offsets)."""

    model_config = ConfigDict(frozen=True)

    new_text: str
    change_map: list[Change]

    @classmethod
    def from_changes(cls, original: str, changes: Iterable[Change]) -> PatchJSON:
        """The patch of ``changes`` on ``original`` (canonical order, ``new_text`` computed)."""
        ordered = canonical(changes)
        return cls(new_text=apply_changes(original, ordered), change_map=ordered)

    @classmethod
    def identity(cls, original: str) -> PatchJSON:
        """The patch that changes nothing."""
        return cls(new_text=original, change_map=[])

    def apply(self, original: str) -> str:
        """The change map applied to ``original`` (equal to ``new_text`` when ``original`` is the text
        the patch was made on). ``ValueError`` when the map does not fit ``original``."""
        return apply_changes(original, self.change_map)

    def invert(self, original: str) -> PatchJSON:
        """The patch that turns ``new_text`` back into ``original`` (offsets into ``new_text``)."""
        inverse: list[Change] = []
        shift = 0
        for change in canonical(self.change_map):
            start = change.start + shift
            inverse.append(
                make_change(start, start + len(change.replacement), original[change.start : change.end])
            )
            shift += change.delta
        return PatchJSON(new_text=original, change_map=inverse)

    def rebase(self, onto: PatchJSON, original: str) -> PatchJSON:
        """This patch (made on ``original``) re-expressed on ``onto.new_text``, ``onto`` being another patch
        of ``original`` that was applied first. Changes that conflict with ``onto`` are dropped
        (``onto`` wins, as in :func:`merge_patches`); an insert at the same position as one of
        ``onto``'s inserts goes after it."""
        base = canonical(onto.change_map)
        moved: list[Change] = []
        for change in canonical(self.change_map):
            if any(conflicts(change, other) for other in base):
                continue
            shift = sum(o.delta for o in base if o.end <= change.start and not _after(change, o))
            moved.append(make_change(change.start + shift, change.end + shift, change.replacement))
        return PatchJSON.from_changes(onto.new_text, moved)


def _after(change: Change, other: Change) -> bool:
    """Whether ``other`` lies after ``change`` although ``other.end <= change.start``: never, except a
    non-insert ``other`` starting at an insert ``change``'s point is impossible (end > start), so this
    only guards zero-width cases: ``other`` an insert at ``change.start`` counts as before."""
    return other.start > change.start


@dataclass(frozen=True, slots=True)
class MergeResult:
    """:func:`merge_patches`' answer: the merged ``patch`` and the changes the overlap rule dropped, each
    with the index of the patch it came from."""

    patch: PatchJSON
    dropped: tuple[tuple[int, Change], ...]


def merge_patches(original: str, patches: Sequence[PatchJSON]) -> MergeResult:
    """Combine patches of one ``original`` into one (seed 002 §4 ``merge_patches``; rule in the module
    docstring: the earlier patch wins an overlap). Non-overlapping patches merge to what applying them
    one after another gives."""
    kept: list[tuple[int, Change]] = []
    dropped: list[tuple[int, Change]] = []
    for index, patch in enumerate(patches):
        for change in canonical(patch.change_map):
            clash = any(
                conflicts(change, other)
                or (
                    source != index
                    and change.op is ChangeOp.insert
                    and other.op is ChangeOp.insert
                    and change.start == other.start
                )
                for source, other in kept
            )
            (dropped if clash else kept).append((index, change))
    ordered = sorted(kept, key=lambda item: (item[1].start, item[1].op is not ChangeOp.insert, item[0]))
    return MergeResult(PatchJSON.from_changes(original, [c for _, c in ordered]), tuple(dropped))


__all__ = [
    "Change",
    "ChangeOp",
    "MergeResult",
    "PatchJSON",
    "apply_changes",
    "canonical",
    "conflicts",
    "make_change",
    "merge_patches",
]
