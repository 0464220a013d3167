"""``GeneratorAgent``: answers a task with the playbook's help and says which bullets it used
(seed 004 "GeneratorAgent", ACE's Generator).

The story of one ``run(query, dataset)`` (the seed's five steps):

1. load the dataset's :class:`Playbook` from the :class:`PlaybookStore`;
2. find the relevant bullets with :class:`HybridSearch` (``search(SearchQuery(query, top_k), playbook)``);
3. build the prompt with :class:`PromptBuilder` (dataset template, bullets as ``{context}``);
4. run a kanawa :class:`~kanawa.Agent` on it, asking for ``{reasoning, bullet_ids, final_answer}``
   as structured output (sent as a response schema where the provider supports one). A model that
   answers in prose anyway is read tolerantly: the whole text becomes the answer and bullet ids are
   picked out of it;
5. return a :class:`Trajectory`: ``reasoning_steps`` are the steps really taken (retrieval, tool
   calls, the model's own reasoning), ``used_bullet_ids`` only ids that exist in the playbook.

Any failure in steps 1–4 (the store, the search, the model) gives ``status="failure"`` with an
``error_message`` (masked, one line) — never an exception (seed 004 "Error Handling").

The agent can also use tools: pass ``tools=[...]``; each tool reaches the run's playbook, dataset and
retrieved bullets through ``RunContext[GeneratorDeps]`` (``ctx.deps``), and ``search_tool=True`` adds
:func:`search_playbook` so the model can look up more bullets itself.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from pydantic import BaseModel, Field

from kanawa._sync import run_in_new_loop
from kanawa.agents.agent import Agent
from kanawa.apps.ace.playbook import Bullet, Playbook
from kanawa.apps.ace.prompt_builder import PromptBuilder
from kanawa.apps.ace.search.hybrid import HybridSearch
from kanawa.apps.ace.search.models import SearchQuery
from kanawa.apps.ace.store.base import PlaybookStore
from kanawa.apps.ace.trajectory import Trajectory
from kanawa.context import RunContext
from kanawa.llm.adapter import LLMAdapter
from kanawa.loop.config import AgentConfiguration
from kanawa.loop.errors import LLMCallFailed, OutputDecodingFailed
from kanawa.loop.events import ToolCallStep
from kanawa.loop.options import RunOptions
from kanawa.secrets import mask
from kanawa.tools.base import Tool
from kanawa.tools.decorator import make_tool
from kanawa.types import AssistantMessage

INSTRUCTIONS: Final = (
    "You solve tasks using a playbook of advice. Cite the ids of the bullets you actually relied on. "
    "Reply with the JSON object the task asks for."
)
_ID_IN_TEXT: Final = re.compile(r"\b[a-z][a-z0-9]*-\d{5,}\b")


class GeneratorOutput(BaseModel):
    """What the model is asked to return (ACE's Generator output)."""

    reasoning: list[str] = Field(default_factory=list, description="the steps of your reasoning")
    bullet_ids: list[str] = Field(default_factory=list, description="ids of the playbook bullets you used")
    final_answer: str = Field(description="the answer to the task")


@dataclass(slots=True)
class GeneratorDeps:
    """What the Generator's tools see as ``ctx.deps``."""

    dataset: str
    playbook: Playbook
    retrieved: list[Bullet]
    search: HybridSearch
    looked_up: list[str] = field(default_factory=list)


async def search_playbook(ctx: RunContext[GeneratorDeps], query: str, top_k: int = 5) -> str:
    """Search the playbook for more advice.

    Args:
        query: what to look for, in your own words.
        top_k: how many bullets to return (1-20).
    """
    deps = ctx.deps
    results = await deps.search.asearch(
        SearchQuery(query_text=query, top_k=max(1, min(top_k, 20))), deps.playbook
    )
    deps.looked_up.extend(result.bullet.id for result in results)
    return "\n".join(f"[{r.bullet.id}] {r.bullet.content}" for r in results) or "(no bullets found)"


class GeneratorAgent:
    """The ACE Generator (see the module docstring).

    Args:
        playbook_store: the first of the seed's four dependencies: where playbooks are kept.
        hybrid_search: the second: how bullets are retrieved.
        llm_client: the third: an :class:`~kanawa.llm.LLMAdapter` or a model string (``"openai:gpt-5"``).
        prompt_builder: the fourth: how the prompt is built.
        top_k: bullets retrieved per task.
        tools: optional extra tools (functions or :class:`~kanawa.tools.Tool`).
        search_tool: offer :func:`search_playbook` to the model.
        config: loop limits for the underlying agent.
    """

    def __init__(
        self,
        playbook_store: PlaybookStore,
        hybrid_search: HybridSearch,
        llm_client: LLMAdapter | str,
        prompt_builder: PromptBuilder,
        *,
        top_k: int = 10,
        tools: Iterable[Tool | Callable[..., Any]] = (),
        search_tool: bool = False,
        config: AgentConfiguration | None = None,
    ) -> None:
        self.playbook_store = playbook_store
        self.hybrid_search = hybrid_search
        self.prompt_builder = prompt_builder
        self.top_k = top_k
        offered = list(tools)
        if search_tool:
            offered.append(make_tool(search_playbook))
        self.agent: Agent[GeneratorOutput, GeneratorDeps] = Agent(
            "ace-generator",
            INSTRUCTIONS,
            tools=offered,
            model=llm_client,
            output_type=GeneratorOutput,
            config=config or AgentConfiguration(max_decode_retries=1),
            deps_type=GeneratorDeps,
        )

    async def aclose(self) -> None:
        await self.agent.aclose()

    async def arun(self, query: str, dataset: str, *, options: RunOptions | None = None) -> Trajectory:
        """Answer ``query`` with ``dataset``'s playbook; never raises for store, search or model faults.
        ``options`` go to the model's run (trace sinks, guardrails): how an eval traces each case."""
        steps: list[str] = []
        try:
            playbook = await self.playbook_store.aload(dataset)
            steps.append(f"Loaded the '{dataset}' playbook ({len(playbook)} bullets)")
            results = await self.hybrid_search.asearch(
                SearchQuery(query_text=query, top_k=self.top_k), playbook
            )
            bullets = [result.bullet for result in results]
            if bullets:
                steps.append(f"Retrieved {len(bullets)} bullets: {', '.join(b.id for b in bullets)}")
            else:
                steps.append("Retrieved no bullets; answering without playbook context")
            prompt = self.prompt_builder.build(query, bullets, dataset)
            deps = GeneratorDeps(
                dataset=dataset, playbook=playbook, retrieved=bullets, search=self.hybrid_search
            )
            answer, reasoning, cited = await self._ask(prompt, deps, steps, options)
        except Exception as exc:  # seed 004: every failure becomes a failed Trajectory
            return Trajectory(
                query=query,
                dataset=dataset,
                generated_answer="",
                reasoning_steps=steps,
                used_bullet_ids=[],
                status="failure",
                error_message=_describe(exc),
            )
        steps.extend(reasoning)
        return Trajectory(
            query=query,
            dataset=dataset,
            generated_answer=answer,
            reasoning_steps=steps,
            used_bullet_ids=_existing(cited, playbook),
            status="success",
        )

    def run(self, query: str, dataset: str) -> Trajectory:
        """Seed 004's ``run(query, dataset) -> Trajectory``: :meth:`arun` in an event loop of its own
        (inside a running loop, await :meth:`arun`)."""
        return run_in_new_loop(
            lambda: self.arun(query, dataset), twin="GeneratorAgent.arun", receiver="generator"
        )

    async def _ask(
        self, prompt: str, deps: GeneratorDeps, steps: list[str], options: RunOptions | None = None
    ) -> tuple[str, list[str], list[str]]:
        """Run the model; returns (answer, the model's reasoning steps, cited ids)."""
        try:
            result = await self.agent.arun(prompt, deps=deps, options=options)
        except OutputDecodingFailed as exc:
            steps.append("The model did not answer in the requested JSON; read its text as the answer")
            answer, reasoning, cited = parse_answer(exc.text)
            return answer, reasoning, cited + deps.looked_up
        for step in result.steps:
            if isinstance(step, ToolCallStep):
                steps.append(f"Called tool {step.call.name}({_short(step.call.arguments)})")
        output = result.output
        if output is None:  # the run ended without a decodable answer: read the model's last words
            last = next((m for m in reversed(result.messages) if isinstance(m, AssistantMessage)), None)
            answer, reasoning, cited = parse_answer(last.text if last is not None else result.text)
            return answer, reasoning, cited + deps.looked_up
        return (
            output.final_answer,
            [s for s in output.reasoning if s.strip()],
            output.bullet_ids + deps.looked_up,
        )


def parse_answer(text: str) -> tuple[str, list[str], list[str]]:
    """Tolerant reading of a reply that is not the requested JSON: a JSON object with ``final_answer``
    anywhere in it is used; otherwise the whole text is the answer and ids are taken from it."""
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        try:
            data = json.loads(text[start : end + 1])
        except ValueError:
            data = None
        if isinstance(data, dict) and isinstance(data.get("final_answer"), str):
            reasoning = data.get("reasoning")
            ids = data.get("bullet_ids")
            return (
                data["final_answer"],
                [str(s) for s in reasoning] if isinstance(reasoning, list) else [],
                [str(i) for i in ids] if isinstance(ids, list) else _ID_IN_TEXT.findall(text),
            )
    return text, [], _ID_IN_TEXT.findall(text)


def _existing(ids: Sequence[str], playbook: Playbook) -> list[str]:
    return [bullet_id for bullet_id in dict.fromkeys(ids) if bullet_id in playbook]


def _short(arguments: str, limit: int = 80) -> str:
    return arguments if len(arguments) <= limit else arguments[: limit - 1] + "…"


def _describe(exc: BaseException) -> str:
    if isinstance(exc, LLMCallFailed):
        exc = exc.error
    text = " ".join(str(exc).split()) or type(exc).__name__
    return mask(f"{type(exc).__name__}: {text}")[:500]


__all__ = ["GeneratorAgent", "GeneratorDeps", "GeneratorOutput", "parse_answer", "search_playbook"]
