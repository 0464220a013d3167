"""SmartAO's ``Coordinator`` (seed 002 §4: ``router: BaseRouter``, ``merge_patches()``; issue 12 part 7).

The story of one coaching run (``Coordinator(resources).stream(request)``):

1. A :class:`CoachingSession` is made for the request; it is the ``deps`` of every agent.
2. The library's :class:`kanawa.agents.team.AgentTeam` routes with a
   :class:`~kanawa.agents.routing.RuleRouter` (default: Guard → Style → Draft → Ref; ``focus="style"`` or
   ``"refs"`` narrow it) or the :class:`~kanawa.agents.routing.LLMRouter` given, and runs the agents
   one after another. Their events stream through as ``NestedEvent`` s; after each agent a
   :class:`Findings` event (kind ``findings``) carries its structured result (issues, passages,
   references, suggestions). GuardAgent runs first, so a plagiarism block (> 0.4) stops the run
   before the others spend tokens: the ``findings`` of Guard (with the passages) are yielded, then
   :class:`~kanawa.loop.errors.GuardrailViolation` is raised.
3. :meth:`Coordinator.merge_patches` combines Style's and Draft's patches into one
   :class:`~kanawa.apps.smartao.patch.PatchJSON` (Style's changes win an overlap: see
   :mod:`kanawa.apps.smartao.patch`), yielded as a ``patch`` event.
4. The Coordinator's own agent hands off to :class:`EvalAgent` (``transfer_to_evalagent``; should its
   model answer without handing off, EvalAgent runs directly, so a run always ends with a rubric); the
   rubric comes back from the cache (:class:`~kanawa.apps.smartao.reflexion.EvalStore`) when this essay
   was scored before on the same inputs (:class:`~kanawa.apps.smartao.reflexion.EvaluationInputs`: the
   request, the style backend and its issues, the other agents' findings, the lessons, the models). A
   ``rubric`` event carries it.
5. The stream ends with a ``FinalResponse`` whose output is the :class:`CoachingReport` (patch, findings,
   rubric, usage and cost of every agent).

Each event has a ``kind``, so a service streams a run like any other; the page needs only the events
and the final ``PatchJSON``.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Mapping, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

from kanawa._sync import run_in_new_loop
from kanawa.agents.agent import Agent
from kanawa.agents.routing import LLMRouter, RouteDecision, RuleRouter
from kanawa.agents.team import AgentTeam
from kanawa.apps.smartao.agents import (
    DraftAgent,
    DraftSuggestions,
    EvalAgent,
    GuardAgent,
    RefAgent,
    StyleAgent,
    draft_patch,
)
from kanawa.apps.smartao.demo_model import demo_model
from kanawa.apps.smartao.issue_messages import issue_messages
from kanawa.apps.smartao.issues import StyleIssue
from kanawa.apps.smartao.patch import MergeResult, PatchJSON, merge_patches
from kanawa.apps.smartao.plagiarism import PlagiarismReport
from kanawa.apps.smartao.reflexion import EvaluationInputs, evaluation_key
from kanawa.apps.smartao.rubric import Rubric
from kanawa.apps.smartao.session import CoachingSession, EssayRequest, Reference, SmartAOResources
from kanawa.context import RunContext
from kanawa.llm.adapter import LLMAdapter
from kanawa.loop.errors import GuardrailViolation, InvalidLoopState
from kanawa.loop.events import FinalResponse, NestedEvent
from kanawa.loop.hooks import RunHooks
from kanawa.loop.result import RunResult
from kanawa.types import Usage, UserMessage

AGENT_ORDER = ("GuardAgent", "StyleAgent", "DraftAgent", "RefAgent")
Focus = Literal["all", "style", "refs", "draft"]


class CoachingReport(BaseModel):
    """The run's output: the merged patch, every finding, the rubric, and what the run cost."""

    patch: PatchJSON
    dropped_changes: int
    style_issues: list[StyleIssue]
    plagiarism: PlagiarismReport | None
    references: list[Reference]
    draft: DraftSuggestions | None
    rubric: Rubric | None
    rubric_cached: bool
    agents: list[str]
    usage: dict[str, int]
    cost: float | None
    demo: bool


@dataclass(frozen=True, slots=True)
class Findings:
    """One agent's structured result, right after it finished (``data`` is JSON-ready)."""

    agent: str
    data: Mapping[str, Any]
    kind: Literal["findings"] = "findings"


@dataclass(frozen=True, slots=True)
class PatchReady:
    """The merged patch of Style and Draft (``dropped``: changes the overlap rule left out)."""

    patch: PatchJSON
    dropped: int
    kind: Literal["patch"] = "patch"


@dataclass(frozen=True, slots=True)
class RubricReady:
    """EvalAgent's rubric (``cached``: it came from the evaluation cache)."""

    rubric: Rubric
    cached: bool
    kind: Literal["rubric"] = "rubric"


SmartAOEvent = (
    RouteDecision | NestedEvent | Findings | PatchReady | RubricReady | FinalResponse[CoachingReport]
)


def default_router() -> RuleRouter:
    """Rules on the session's ``focus`` (first match wins); the default runs every agent."""
    return RuleRouter(
        [
            (lambda _text, ctx: getattr(ctx, "focus", "all") == "style", ["GuardAgent", "StyleAgent"]),
            (lambda _text, ctx: getattr(ctx, "focus", "all") == "refs", ["GuardAgent", "RefAgent"]),
            (lambda _text, ctx: getattr(ctx, "focus", "all") == "draft", ["GuardAgent", "DraftAgent"]),
        ],
        default=AGENT_ORDER,
    )


@dataclass(frozen=True, slots=True)
class _RouteContext:
    focus: Focus
    session: CoachingSession


class _FrontAgent(Agent[str, CoachingSession]):
    """The Coordinator's own agent: it hands the findings to EvalAgent and keeps the rubric it returns."""

    async def on_handoff_return(
        self, target: Agent[Any, Any], result: RunResult[Any], context: RunContext[CoachingSession]
    ) -> str:
        if isinstance(result.output, Rubric):
            context.deps.rubric = result.output
        return await super().on_handoff_return(target, result, context)


class Coordinator:
    """SmartAO's coordinator: ``Coordinator(resources).stream(EssayRequest(essay=…))``.

    Args:
        resources: the shared :class:`SmartAOResources`.
        model: one model for every agent (``None``: the offline demo model per agent); ``models``
            overrides it per agent name (``{"EvalAgent": "openai:gpt-5"}``).
        router: a :class:`RuleRouter` or :class:`LLMRouter` over the agent names (default
            :func:`default_router`).
        guardrails: passed to every agent — the hook for a session budget (``TokenGuard``).
        depth: DraftAgent's deepening depth.
    """

    def __init__(
        self,
        resources: SmartAOResources,
        *,
        model: str | LLMAdapter | None = None,
        models: Mapping[str, str | LLMAdapter] | None = None,
        router: RuleRouter | LLMRouter | None = None,
        guardrails: Sequence[RunHooks] = (),
        depth: int = 2,
    ) -> None:
        chosen = dict(models or {})

        def pick(name: str) -> str | LLMAdapter | None:
            return chosen.get(name, model)

        self.resources = resources
        self.demo = model is None and not chosen
        self.guardrails = tuple(guardrails)
        self.eval_agent = EvalAgent(model=pick("EvalAgent"), guardrails=guardrails)
        self.agents: dict[str, Agent[Any, CoachingSession]] = {
            "GuardAgent": GuardAgent(model=pick("GuardAgent"), guardrails=guardrails),
            "StyleAgent": StyleAgent(model=pick("StyleAgent"), guardrails=guardrails),
            "DraftAgent": DraftAgent(model=pick("DraftAgent"), depth=depth, guardrails=guardrails),
            "RefAgent": RefAgent(model=pick("RefAgent"), guardrails=guardrails),
        }
        front_model = pick("Coordinator")
        self.front = _FrontAgent(
            "Coordinator",
            "あなたは SmartAO の Coordinator です。各エージェントの結果を受け取ったら、"
            "必ず transfer_to_evalagent で"
            " EvalAgent に評価を依頼し、その結果を一言で伝えてください。",
            model=front_model if front_model is not None else demo_model("coordinator"),
            deps_type=CoachingSession,
            handoffs=[self.eval_agent],
            guardrails=guardrails,
        )
        self.rubric_models = (_model_name(pick("EvalAgent")), _model_name(front_model))
        """The models that write the rubric (EvalAgent's, the Coordinator's): part of its cache key."""
        self.router = router if router is not None else default_router()
        self._core = AgentTeam("Coordinator", router=self.router, agents=list(self.agents.values()))

    @staticmethod
    def merge_patches(original: str, style: PatchJSON | None, draft: PatchJSON | None) -> MergeResult:
        """Seed 002 §4 ``merge_patches()``: Draft's and Style's patches as one. Style's changes are
        listed first, so they win an overlap (precise corrections over additions); dropped changes
        are counted in the result."""
        patches = [p for p in (style, draft) if p is not None]
        return merge_patches(original, patches)

    def stream(
        self,
        request: EssayRequest | str,
        *,
        focus: Focus = "all",
        evaluate: bool = True,
        stream: bool = True,
        tenant: str = "",
    ) -> SmartAORun:
        """Start a run; iterate for :data:`SmartAOEvent` s (with the models' deltas unless
        ``stream=False``), ``.result`` for the :class:`CoachingReport`. ``ValueError`` for an empty essay.
        ``tenant`` is whose run it is: the rubric cache and the lessons are that tenant's."""
        if isinstance(request, str):
            request = EssayRequest(essay=request)
        if not request.essay.strip():
            raise ValueError("the essay is empty")
        session = CoachingSession(request, self.resources, tenant=tenant)
        return SmartAORun(self, session, focus=focus, evaluate=evaluate, stream=stream)

    async def arun(
        self, request: EssayRequest | str, *, focus: Focus = "all", evaluate: bool = True
    ) -> CoachingReport:
        """Run to the end and return the :class:`CoachingReport`."""
        running = self.stream(request, focus=focus, evaluate=evaluate, stream=False)
        async with aclosing(running) as events:
            async for _ in events:
                pass
        return running.result

    def run(
        self, request: EssayRequest | str, *, focus: Focus = "all", evaluate: bool = True
    ) -> CoachingReport:
        """:meth:`arun` for scripts (its own event loop; inside a running loop, await :meth:`arun`)."""
        return run_in_new_loop(
            lambda: self.arun(request, focus=focus, evaluate=evaluate), twin="Coordinator.arun"
        )


class SmartAORun:
    """One coaching run; an async iterator of :data:`SmartAOEvent`."""

    def __init__(
        self, owner: Coordinator, session: CoachingSession, *, focus: Focus, evaluate: bool, stream: bool
    ) -> None:
        self._owner = owner
        self.session = session
        self._focus = focus
        self._evaluate = evaluate
        self._stream = stream
        self._result: CoachingReport | None = None
        self._gen = self._run()

    def __aiter__(self) -> SmartAORun:
        return self

    def __anext__(self) -> Awaitable[SmartAOEvent]:
        return self._gen.__anext__()

    async def aclose(self) -> None:
        await self._gen.aclose()

    @property
    def result(self) -> CoachingReport:
        if self._result is None:
            raise InvalidLoopState("the run has not finished: iterate it to the end first")
        return self._result

    async def _run(self) -> AsyncGenerator[SmartAOEvent, None]:
        owner, session = self._owner, self.session
        essay = session.request.essay
        route = _RouteContext(self._focus, session)
        running = owner._core.stream(essay, deps=session, context=route, stream=self._stream)
        reported: set[str] = set()
        try:
            async with aclosing(running) as events:
                async for event in events:
                    if isinstance(event, FinalResponse):
                        continue
                    yield event
                    if (
                        isinstance(event, NestedEvent)
                        and isinstance(event.event, FinalResponse)
                        and event.depth == 1
                    ):
                        reported.add(event.agent)
                        yield Findings(event.agent, _findings(event.agent, session, event.event.output))
        except GuardrailViolation:
            # a plagiarism block stops GuardAgent before its findings: the page still needs the passages
            # (any other guardrail, e.g. a spent budget, may stop a later agent: Guard's are out already)
            if session.plagiarism is not None and "GuardAgent" not in reported:
                yield Findings("GuardAgent", {"plagiarism": session.plagiarism.model_dump()})
            raise
        results = dict(running.result.results)
        draft_output = results["DraftAgent"].output if "DraftAgent" in results else None
        draft = draft_output if isinstance(draft_output, DraftSuggestions) else None
        session.draft_patch = draft_patch(essay, draft) if draft is not None else None
        merged = owner.merge_patches(essay, session.style_patch, session.draft_patch)
        yield PatchReady(merged.patch, len(merged.dropped))
        if self._evaluate:
            async for evaluated in self._evaluate_essay(results):
                yield evaluated
        usage = sum((r.usage for r in results.values()), Usage())
        costs = [r.cost for r in results.values()]
        cost = None if any(c is None for c in costs) else sum(c for c in costs if c is not None)
        report = CoachingReport(
            patch=merged.patch,
            dropped_changes=len(merged.dropped),
            style_issues=session.style_issues or [],
            plagiarism=session.plagiarism,
            references=session.references,
            draft=draft,
            rubric=session.rubric,
            rubric_cached=session.rubric_cached,
            agents=list(results),
            usage={
                "input_tokens": usage.input_tokens,
                "output_tokens": usage.output_tokens,
                "requests": usage.requests,
            },
            cost=cost,
            demo=owner.demo,
        )
        self._result = report
        yield FinalResponse(0, report, report.patch.new_text, usage)

    async def _evaluate_essay(self, results: dict[str, RunResult[Any]]) -> AsyncGenerator[SmartAOEvent, None]:
        """Step 4: the rubric from the cache, else through the handoff to EvalAgent."""
        owner, session = self._owner, self.session
        store = session.resources.eval_store
        key = evaluation_key(_evaluation_inputs(session, owner.rubric_models))
        cached = store.get(key) if store is not None else None
        if cached is not None:
            session.rubric, session.rubric_cached = cached, True
        else:
            issues = len(session.style_issues or ())
            score = session.plagiarism.score if session.plagiarism else 0.0
            brief = f"表記の指摘 {issues} 件、一致率 {score:.0%}、参考資料 {len(session.references)} 件。"
            runner = owner.front._start(
                brief, history=(), stream=self._stream, settings=None, run_id=None, deps=session
            )
            async with aclosing(runner) as events:
                async for event in events:
                    yield event if isinstance(event, NestedEvent) else NestedEvent("Coordinator", 0, event)
            results["Coordinator"] = runner.result
            if session.rubric is None:
                # the coordinator's model answered without handing off: the rubric is still owed, so
                # EvalAgent runs directly, one level below the coordinator, on the same brief
                direct = owner.eval_agent._start_nested(
                    [UserMessage(brief)],
                    deps=session,
                    stream=self._stream,
                    tracer=None,
                    handoff_path=("Coordinator",),
                )
                async with aclosing(direct) as direct_events:
                    async for step in direct_events:
                        yield step if isinstance(step, NestedEvent) else NestedEvent("EvalAgent", 1, step)
                results["EvalAgent"] = direct.result
                if isinstance(direct.result.output, Rubric):
                    session.rubric = direct.result.output
            if session.rubric is not None and store is not None:
                store.put(key, session.rubric, tenant=session.tenant)
        if session.rubric is not None:
            yield RubricReady(session.rubric, session.rubric_cached)


def _model_name(spec: str | LLMAdapter | None) -> str:
    """A model as the rubric cache names it: ``provider:model`` (``demo`` for the offline demo model)."""
    if spec is None:
        return "demo"
    return spec if isinstance(spec, str) else f"{spec.provider}:{spec.model}"


def _evaluation_inputs(session: CoachingSession, models: Sequence[str]) -> EvaluationInputs:
    """What the rubric of ``session`` depends on (:class:`EvaluationInputs`), read after the agents ran:
    the request, the style backend and its issues, Guard's and Ref's findings, the latest lessons."""
    request, resources = session.request, session.resources
    issues = session.style_issues
    backend = "" if issues is None else ("textlint" if resources.textlint is not None else "sudachi")
    store = resources.eval_store
    return EvaluationInputs(
        essay=request.essay,
        tenant=session.tenant,
        policy=request.policy,
        kind=request.kind,
        university=request.university,
        faculty=request.faculty,
        style_backend=backend,
        style_issues=tuple(f"{i.rule}@{i.start}-{i.end}" for i in issues or ()),
        plagiarism_score=session.plagiarism.score if session.plagiarism is not None else None,
        references=len(session.references),
        lessons=store.latest_lessons(tenant=session.tenant) if store is not None else (),
        models=tuple(models),
    )


def _findings(agent: str, session: CoachingSession, output: object) -> dict[str, Any]:
    if agent == "StyleAgent":  # each issue with its message in both of the page's languages
        return {
            "issues": [{**i.model_dump(), "messages": issue_messages(i)} for i in session.style_issues or ()],
            "patch": session.style_patch.model_dump() if session.style_patch else None,
        }
    if agent == "GuardAgent":
        return {"plagiarism": session.plagiarism.model_dump() if session.plagiarism else None}
    if agent == "RefAgent":
        return {"references": [r.model_dump() for r in session.references]}
    if agent == "DraftAgent" and isinstance(output, DraftSuggestions):
        return {
            "draft": output.model_dump(),
            "patch": draft_patch(session.request.essay, output).model_dump(),
        }
    return {"text": output if isinstance(output, str) else str(output)}


__all__ = [
    "AGENT_ORDER",
    "CoachingReport",
    "Coordinator",
    "Findings",
    "PatchReady",
    "RubricReady",
    "SmartAOEvent",
    "SmartAORun",
    "default_router",
]
