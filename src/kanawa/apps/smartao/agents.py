"""The SmartAO agents (seed 002 §4): each is a :class:`kanawa.Agent` with its tools, instructions and
``deps_type=CoachingSession``.

- :class:`DraftAgent` — deepening suggestions; its system prompt carries the keep-headings rule and the
  deepening depth; its structured answer becomes an insert-only patch that keeps every heading line
  (:func:`draft_patch`).
- :class:`StyleAgent` — ``grammar_check``; issues → ``change_map``.
- :class:`RefAgent` — ``vector_search`` over the reference corpus.
- :class:`GuardAgent` — ``plagiarism_check``, and :class:`PlagiarismGuardrail` on its input: a score from
  0.28 to 0.4 yields a ``GuardrailTripped`` warning, above 0.4 the run ends with ``GuardrailViolation``.
- :class:`EvalAgent` — the rubric (:class:`~kanawa.apps.smartao.rubric.Rubric`), a handoff target.

``model=None`` gives the offline demo model (:mod:`kanawa.apps.smartao.demo_model`). ``guardrails=`` is
passed through to the agent unchanged: the hook point for a session budget
(``kanawa.agents.budget.TokenGuard``) or any other :class:`~kanawa.loop.hooks.RunHooks`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from kanawa.agents.agent import Agent
from kanawa.agents.guardrails import Guardrail
from kanawa.apps.smartao import tools
from kanawa.apps.smartao.demo_model import demo_model
from kanawa.apps.smartao.patch import Change, ChangeOp, PatchJSON
from kanawa.apps.smartao.plagiarism import BLOCK_ABOVE, WARN_AT
from kanawa.apps.smartao.rubric import AXES, Rubric, load_rubric
from kanawa.apps.smartao.session import CoachingSession
from kanawa.context import RunContext
from kanawa.llm.adapter import LLMAdapter
from kanawa.loop.errors import GuardrailViolation
from kanawa.loop.events import GuardrailStage, GuardrailTripped
from kanawa.loop.hooks import RunHooks, Warnings
from kanawa.types import Message

ModelSpec = str | LLMAdapter | None

KEEP_HEADINGS_RULE = (
    "見出し維持ルール: 見出し行（■、【】、#、「第一章」、「1.」などで始まる行）は"
    "一字も変えず、順序も変えない。"
    "提案は本文の文の直後に挿入する形でのみ行う。"
)


def draft_instructions(depth: int) -> str:
    """DraftAgent's system prompt (seed 002 §4: "見出し維持ルール + 深掘り depth を System に含める")."""
    return (
        "あなたは総合型選抜（AO）の志望理由書・小論文を指導する DraftAgent です。\n"
        f"{KEEP_HEADINGS_RULE}\n"
        f"深掘り depth: {depth}（本文で具体性が足りない箇所を最大{depth}か所選び、"
        "経験・数字・場面を補う一文を提案する）。\n"
        "まず essay_outline を呼び、suggestions の after には本文の文をそのまま引用すること。"
    )


class Deepening(BaseModel):
    """Insert ``text`` right after the sentence ``after`` (quoted from the essay)."""

    after: str
    text: str


class DraftSuggestions(BaseModel):
    """DraftAgent's structured answer."""

    suggestions: list[Deepening] = Field(default_factory=list)
    note: str = ""


def draft_patch(essay: str, suggestions: DraftSuggestions) -> PatchJSON:
    """The suggestions as an insert-only patch: each ``text`` goes right after the first occurrence of
    its ``after`` sentence in a body line. Suggestions anchored on a heading line, on text not in the
    essay, or at a point already used are skipped — so every heading line survives as written."""
    changes: list[Change] = []
    used: set[int] = set()
    offset = 0
    body: list[tuple[int, str]] = []
    for line in essay.splitlines(keepends=True):
        if not tools.is_heading(line):
            body.append((offset, line))
        offset += len(line)
    for item in suggestions.suggestions:
        anchor = item.after.strip()
        if not anchor or not item.text:
            continue
        for start, line in body:
            found = line.find(anchor)
            if found >= 0:
                point = start + found + len(anchor)
                if point not in used:
                    used.add(point)
                    changes.append(Change(op=ChangeOp.insert, start=point, end=point, text=item.text))
                break
    return PatchJSON.from_changes(essay, changes)


def keeps_headings(original: str, patched: str) -> bool:
    """Whether every heading line of ``original`` is in ``patched``, unchanged and in order."""
    return tools.heading_lines(original) == tools.heading_lines(patched)


class DraftAgent(Agent[DraftSuggestions, CoachingSession]):
    """Deepening suggestions as a patch that keeps headings (seed 002 §4 DraftAgent)."""

    def __init__(
        self, *, model: ModelSpec = None, depth: int = 2, guardrails: Sequence[RunHooks] = ()
    ) -> None:
        if not 1 <= depth <= 5:
            raise ValueError("depth must be between 1 and 5")
        super().__init__(
            "DraftAgent",
            draft_instructions(depth),
            tools=[tools.essay_outline],
            model=model if model is not None else demo_model("draft"),
            output_type=DraftSuggestions,
            deps_type=CoachingSession,
            guardrails=guardrails,
        )
        self.depth = depth


class StyleAgent(Agent[str, CoachingSession]):
    """Japanese style check; issues become a patch (seed 002 §4 StyleAgent)."""

    def __init__(self, *, model: ModelSpec = None, guardrails: Sequence[RunHooks] = ()) -> None:
        super().__init__(
            "StyleAgent",
            "あなたは日本語の表記を点検する StyleAgent です。"
            "grammar_check を呼び、指摘を重要な順に短く説明してください。",
            tools=[tools.grammar_check],
            model=model if model is not None else demo_model("style"),
            deps_type=CoachingSession,
            guardrails=guardrails,
        )


class RefAgent(Agent[str, CoachingSession]):
    """References for the essay's topic from the reference corpus (seed 002 §4 RefAgent)."""

    def __init__(self, *, model: ModelSpec = None, guardrails: Sequence[RunHooks] = ()) -> None:
        super().__init__(
            "RefAgent",
            "あなたは参考資料を探す RefAgent です。"
            "vector_search で本文の主題に関わる資料を探し、使い方を一言ずつ添えてください。",
            tools=[tools.vector_search],
            model=model if model is not None else demo_model("ref"),
            deps_type=CoachingSession,
            guardrails=guardrails,
        )


_INPUT_STAGE: tuple[GuardrailStage, ...] = ("input",)


class PlagiarismGuardrail(Guardrail):
    """GuardAgent's input guardrail (seed 002 §4: 0.28–0.4 → warn, > 0.4 → block).

    It checks the essay before GuardAgent's first model request and records the report (with the
    matching passages) on the session, so a caller has them even when the run is blocked. The reasons
    name the score and the source, never the essay's text."""

    def __init__(self) -> None:
        super().__init__(name="plagiarism", action="block", stages=_INPUT_STAGE)

    async def check_input(self, messages: Sequence[Message], context: RunContext[Any]) -> Warnings:
        session = context.deps
        if not isinstance(session, CoachingSession):
            return ()
        report = session.plagiarism
        if report is None:
            report = session.plagiarism = session.resources.plagiarism.check(session.request.essay)
        if report.verdict == "pass":
            return ()
        best = report.matches[0]
        reasons = (
            f"containment {report.score:.2f} with {best.source_id!r} "
            f"(warn from {WARN_AT}, block above {BLOCK_ABOVE}); {len(best.passages)} matching passages",
        )
        event = GuardrailTripped(context.step, "input", self.name, report.verdict, reasons)
        if report.verdict == "block":
            raise GuardrailViolation(event)
        return (event,)


class GuardAgent(Agent[str, CoachingSession]):
    """Plagiarism check with the seed's warn/block thresholds (seed 002 §4 GuardAgent)."""

    def __init__(self, *, model: ModelSpec = None, guardrails: Sequence[RunHooks] = ()) -> None:
        super().__init__(
            "GuardAgent",
            "あなたは剽窃を点検する GuardAgent です。"
            "plagiarism_check を呼び、一致した箇所を自分の言葉で書き直すよう助言してください。",
            tools=[tools.plagiarism_check],
            model=model if model is not None else demo_model("guard"),
            deps_type=CoachingSession,
            guardrails=[PlagiarismGuardrail(), *guardrails],
        )


def eval_instructions() -> str:
    axes = "\n".join(f"- {a['name']}: {a['guide']}" for a in load_rubric()["axes"])
    return (
        "あなたは総合型選抜の答案を評価する EvalAgent です。rubric_evidence を呼び、その根拠を踏まえて"
        f"次の観点ごとに1〜5点と理由を JSON で返してください（観点の順序: {'、'.join(AXES)}）。\n{axes}"
    )


class EvalAgent(Agent[Rubric, CoachingSession]):
    """Rubric scores with reasons per axis (seed 002 §4 EvalAgent; a handoff target of the Coordinator)."""

    def __init__(self, *, model: ModelSpec = None, guardrails: Sequence[RunHooks] = ()) -> None:
        super().__init__(
            "EvalAgent",
            eval_instructions(),
            tools=[tools.rubric_evidence],
            model=model if model is not None else demo_model("eval"),
            output_type=Rubric,
            deps_type=CoachingSession,
            guardrails=guardrails,
        )


__all__ = [
    "KEEP_HEADINGS_RULE",
    "Deepening",
    "DraftAgent",
    "DraftSuggestions",
    "EvalAgent",
    "GuardAgent",
    "PlagiarismGuardrail",
    "RefAgent",
    "StyleAgent",
    "draft_instructions",
    "draft_patch",
    "keeps_headings",
]
