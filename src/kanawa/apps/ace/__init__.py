"""ACE — Agentic Context Engineering: playbooks that learn (seed 004; arXiv 2510.04618).

A playbook is a list of advice bullets grouped into sections. The story of one task through ACE:

1. **Generator** (:class:`GeneratorAgent`) — loads the dataset's :class:`Playbook` from the
   :class:`~kanawa.apps.ace.store.PlaybookStore`, retrieves relevant bullets with
   :class:`~kanawa.apps.ace.search.HybridSearch` (BM25 with Japanese tokens + dense embeddings,
   fused), builds the prompt with :class:`PromptBuilder` and asks the model for ``{reasoning,
   bullet_ids, final_answer}``; the result is a :class:`Trajectory`.
2. **Reflector** (:class:`Reflector`) — compares the trajectory with the ground truth or execution
   feedback, names the error, its root cause, the correct approach and the key insight, and tags the
   bullets used as helpful, harmful or neutral.
3. **Curator** (:class:`Curator`) — turns the reflection into small delta operations (ADD / UPDATE /
   TAG / REMOVE / MERGE of near-duplicates by embedding similarity) within a token budget; the store
   applies them deterministically and atomically, with an audit record per operation. Never a
   rewrite of the whole playbook, which loses detail ("context collapse").
4. :class:`AdaptationWorkflow` runs 1–3 over a JSONL dataset for several epochs (offline) or task by
   task (online). :class:`Container` wires the parts with ``dependency_injector``.

Seed 004 sections implemented: Overview, Components and Interfaces 1–4, Data Models, Error Handling,
Implementation Notes, Correctness Properties 1–4. Nothing here is imported by ``import kanawa``; the
``ace`` extra installs what it needs (``pip install 'kanawa[ace]'``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kanawa._lazy import lazy_exports

_EXPORTS = {
    "Bullet": "kanawa.apps.ace.playbook",
    "Playbook": "kanawa.apps.ace.playbook",
    "PromptBuilder": "kanawa.apps.ace.prompt_builder",
    "GeneratorAgent": "kanawa.apps.ace.generator",
    "Trajectory": "kanawa.apps.ace.trajectory",
    "Reflector": "kanawa.apps.ace.reflector",
    "Curator": "kanawa.apps.ace.curator",
    "AdaptationWorkflow": "kanawa.apps.ace.workflow",
    "Container": "kanawa.apps.ace.container",
}

if TYPE_CHECKING:
    from kanawa.apps.ace.container import Container
    from kanawa.apps.ace.curator import Curator
    from kanawa.apps.ace.generator import GeneratorAgent
    from kanawa.apps.ace.playbook import Bullet, Playbook
    from kanawa.apps.ace.prompt_builder import PromptBuilder
    from kanawa.apps.ace.reflector import Reflector
    from kanawa.apps.ace.trajectory import Trajectory
    from kanawa.apps.ace.workflow import AdaptationWorkflow

__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)

__all__ = [
    "AdaptationWorkflow",
    "Bullet",
    "Container",
    "Curator",
    "GeneratorAgent",
    "Playbook",
    "PromptBuilder",
    "Reflector",
    "Trajectory",
]
