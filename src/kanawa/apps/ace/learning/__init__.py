"""ACE learns from an eval: a :class:`kanawa.evals.Dataset`'s failures teach a playbook (issue 32, part 7).

``learn(dataset, model=..., epochs=N)`` (``alearn`` to await) runs ACE's offline adaptation with the
dataset's scorers as the judge: the Generator answers the training cases, failing ones go to the
Reflector with the scorers' reasons as feedback, the Curator's delta operations update the playbook,
and a held-out split — whose labels never reach learning — is re-scored after every epoch. The
:class:`LearningReport` holds the learning curve, the playbook's growth, the cost per role and each
epoch's playbook diff (Markdown, rich and HTML views in :mod:`.render`). ``kanawa ace learn`` is the
command line.

Modules: :mod:`.split` (train / held-out, sealed), :mod:`.examine` (grading), :mod:`.metering` (cost
per role), :mod:`.loop` (the epochs), :mod:`.report` and :mod:`.render`, :mod:`.demo` (a built-in
dataset with a learnable rule and scripted roles, for running offline).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kanawa._lazy import lazy_exports

_EXPORTS = {
    "learn": "kanawa.apps.ace.learning.loop",
    "alearn": "kanawa.apps.ace.learning.loop",
    "LearningReport": "kanawa.apps.ace.learning.report",
    "EpochRecord": "kanawa.apps.ace.learning.report",
    "HeldOutVerdict": "kanawa.apps.ace.learning.report",
    "LearningStep": "kanawa.apps.ace.learning.report",
    "SplitScore": "kanawa.apps.ace.learning.report",
    "CaseScore": "kanawa.apps.ace.learning.report",
    "RoleCost": "kanawa.apps.ace.learning.report",
    "Split": "kanawa.apps.ace.learning.split",
    "HeldOut": "kanawa.apps.ace.learning.split",
    "split_dataset": "kanawa.apps.ace.learning.split",
}

if TYPE_CHECKING:
    from kanawa.apps.ace.learning.loop import alearn, learn
    from kanawa.apps.ace.learning.report import (
        CaseScore,
        EpochRecord,
        HeldOutVerdict,
        LearningReport,
        LearningStep,
        RoleCost,
        SplitScore,
    )
    from kanawa.apps.ace.learning.split import HeldOut, Split, split_dataset

__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)

__all__ = [
    "CaseScore",
    "EpochRecord",
    "HeldOut",
    "HeldOutVerdict",
    "LearningReport",
    "LearningStep",
    "RoleCost",
    "Split",
    "SplitScore",
    "alearn",
    "learn",
    "split_dataset",
]
