"""Training and held-out cases (ACE's offline adaptation protocol: learn on one split, measure on the other).

A case names its split in ``metadata["split"]`` — ``"train"``, or ``"held_out"`` / ``"test"`` /
``"holdout"`` — and when any case of a dataset does, those names decide (cases without one train).
Otherwise a seeded shuffle puts a ``held_out`` fraction aside: the same dataset and seed always give
the same split, so two learning runs can be compared.

The split is the only place that sees both halves. What it returns keeps them apart by type:
:class:`HeldOut` exposes no case, only :meth:`HeldOut.examiner` (the one reader of its labels, which
answers with numbers), so code that teaches the playbook cannot reach a held-out label by accident.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from kanawa.evals.cases import Case, Dataset

if TYPE_CHECKING:
    from kanawa.apps.ace.learning.examine import HeldOutExaminer

TRAIN_NAMES: Final = frozenset({"train", "training"})
HELD_OUT_NAMES: Final = frozenset({"held_out", "heldout", "holdout", "test", "eval", "validation"})


class HeldOut:
    """The held-out cases, sealed: their count and names are public, their labels are not.

    Only :class:`~kanawa.apps.ace.learning.examine.HeldOutExaminer` opens it (through
    :meth:`examiner`), and that examiner reports scores, never expected outputs or scorer reasons.
    """

    __slots__ = ("_cases",)

    def __init__(self, cases: Sequence[Case[Any, Any]]) -> None:
        self._cases = tuple(cases)

    def __len__(self) -> int:
        return len(self._cases)

    @property
    def names(self) -> list[str]:
        return [case.name for case in self._cases]

    def __repr__(self) -> str:
        return f"HeldOut({len(self._cases)} cases)"

    def examiner(self, dataset: Dataset[Any, Any], **options: Any) -> HeldOutExaminer:
        """The examiner that scores these cases (``options`` go to its constructor)."""
        from kanawa.apps.ace.learning.examine import HeldOutExaminer

        return HeldOutExaminer(self._cases, dataset, **options)


@dataclass(frozen=True)
class Split:
    """``train``: the cases the playbook learns from; ``held_out``: sealed (see :class:`HeldOut`)."""

    train: tuple[Case[Any, Any], ...]
    held_out: HeldOut


def split_of(case: Case[Any, Any]) -> str | None:
    """``"train"``, ``"held_out"`` or ``None`` from ``case.metadata["split"]``; an unknown name raises."""
    value = case.metadata.get("split")
    if value is None:
        return None
    name = str(value).strip().lower().replace("-", "_")
    if name in TRAIN_NAMES:
        return "train"
    if name in HELD_OUT_NAMES:
        return "held_out"
    raise ValueError(f"case {case.name!r}: metadata split {value!r} is neither train nor held_out (or test)")


def split_dataset(dataset: Dataset[Any, Any], *, held_out: float = 0.3, seed: int = 0) -> Split:
    """Split ``dataset``'s cases (see the module docstring). Raises ``ValueError`` when either half
    would be empty or ``held_out`` is not in (0, 1)."""
    cases = list(dataset.cases)
    names = [split_of(case) for case in cases]
    if any(name is not None for name in names):
        train = [case for case, name in zip(cases, names, strict=True) if name != "held_out"]
        test = [case for case, name in zip(cases, names, strict=True) if name == "held_out"]
    else:
        if not 0.0 < held_out < 1.0:
            raise ValueError("held_out must be a fraction between 0 and 1 (exclusive)")
        order = list(range(len(cases)))
        random.Random(seed).shuffle(order)
        count = min(len(cases) - 1, max(1, round(len(cases) * held_out)))
        aside = set(order[:count])
        train = [case for i, case in enumerate(cases) if i not in aside]
        test = [case for i, case in enumerate(cases) if i in aside]
    if not train or not test:
        raise ValueError(
            f"dataset {dataset.name!r} needs at least one training and one held-out case "
            f"(has {len(train)} training, {len(test)} held-out)"
        )
    return Split(train=tuple(train), held_out=HeldOut(test))


__all__ = ["HELD_OUT_NAMES", "TRAIN_NAMES", "HeldOut", "Split", "split_dataset", "split_of"]
