"""What every LLM judge shares: one kanawa Agent per judge, retries, a budget, a verdict cache and
a ledger of what judging cost.

- **Model and retries**: the model string (or adapter) resolves through
  :func:`kanawa.llm.models.resolve_model` with the judge's :class:`~kanawa.llm.retry.RetryPolicy`, so a
  429 or 5xx is retried with backoff like any kanawa run; an answer that does not decode into the
  verdict type is asked for again, with the error, in the same conversation (``decode_retries``).
- **Budget**: ``max_cost_usd`` / ``max_tokens`` / ``max_requests`` become a
  :class:`~kanawa.agents.budget.TokenGuard` shared by all of this judge's calls; once it is spent the
  judge raises :class:`JudgeBudgetExceededError` instead of sending more requests.
- **Cache**: the verdict of an identical prompt (same model, instructions, prompt, verdict type) is
  reused from a :class:`JudgeCache` (in memory, or a JSON file that survives between evals), so
  repeats and re-runs of unchanged outputs cost nothing.
- **Cost**: every judging request's cost goes to :func:`kanawa.evals.scoring.record_judge_cost`, which
  the eval runner sums into ``EvalReport.judge_cost_usd``; :class:`JudgeLedger` keeps this judge's own
  requests, tokens and USD (:func:`judge_cost_usd` adds ledgers up outside an eval).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from kanawa.evals.scoring import NoVerdictError, record_judge_cost
from kanawa.llm.adapter import LLMAdapter
from kanawa.llm.retry import RetryPolicy
from kanawa.llm.settings import ModelSettings
from kanawa.loop.config import AgentConfiguration
from kanawa.loop.decoding import OutputDecoder
from kanawa.loop.options import RunOptions
from kanawa.types import Usage

__all__ = [
    "JudgeBase",
    "JudgeBudgetExceededError",
    "JudgeCache",
    "JudgeError",
    "JudgeLedger",
    "JudgeRunner",
    "judge_cost_usd",
]

VerdictT = TypeVar("VerdictT", bound=BaseModel)


class JudgeError(NoVerdictError):
    """A judge could not give a verdict (the model failed, or its answer never decoded): the eval
    counts the case as errored for this judge, never as failed (:class:`NoVerdictError`)."""


class JudgeBudgetExceededError(JudgeError):
    """The judge's own budget is spent; no further judging request was sent."""


@dataclass(kw_only=True)
class JudgeLedger:
    """What a judge has spent: model requests, tokens and USD (``unpriced`` counts calls with no price)."""

    calls: int = 0
    cache_hits: int = 0
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    unpriced: int = 0


class JudgeCache:
    """Verdicts by prompt hash: in memory, and in a JSON file when ``path`` is given (written on put)."""

    def __init__(self, *, path: str | os.PathLike[str] | None = None) -> None:
        self._path = Path(path) if path is not None else None
        self._entries: dict[str, dict[str, Any]] = {}
        if self._path is not None and self._path.exists():
            data = json.loads(self._path.read_text(encoding="utf-8"))
            if isinstance(data, dict):
                self._entries = {str(k): v for k, v in data.items() if isinstance(v, dict)}

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: str) -> dict[str, Any] | None:
        return self._entries.get(key)

    def put(self, key: str, value: dict[str, Any]) -> None:
        self._entries[key] = value
        if self._path is not None:
            self._path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self._path.with_suffix(self._path.suffix + ".tmp")
            tmp.write_text(json.dumps(self._entries, ensure_ascii=False), encoding="utf-8")
            tmp.replace(self._path)


def _model_id(model: str | LLMAdapter) -> str:
    return model if isinstance(model, str) else f"{type(model).__name__}:{getattr(model, 'model', '')}"


class JudgeRunner(Generic[VerdictT]):
    """Runs one judging prompt through a kanawa Agent whose output type is ``verdict_type``."""

    def __init__(
        self,
        *,
        name: str,
        instructions: str,
        verdict_type: type[VerdictT],
        model: str | LLMAdapter,
        retry_policy: RetryPolicy | None = None,
        settings: ModelSettings | None = None,
        max_cost_usd: float | None = None,
        max_tokens: int | None = None,
        max_requests: int | None = None,
        cache: JudgeCache | None = None,
        decode_retries: int = 2,
    ) -> None:
        self.name = name
        self.instructions = instructions
        self.verdict_type = verdict_type
        self.model = model
        self.retry_policy = retry_policy
        self.settings = settings
        self.cache = cache if cache is not None else JudgeCache()
        self.ledger = JudgeLedger()
        self.decode_retries = decode_retries
        self._decoder = OutputDecoder(verdict_type)
        self._limits = (max_tokens, max_requests, max_cost_usd)
        self._agent: Any = None
        self._lock = asyncio.Lock()

    def _build_agent(self) -> Any:
        from kanawa.agents import Agent
        from kanawa.agents.budget import TokenGuard
        from kanawa.llm.models import resolve_model

        max_tokens, max_requests, max_cost_usd = self._limits
        guardrails = []
        if any(limit is not None for limit in self._limits):
            guardrails.append(
                TokenGuard(
                    max_tokens=max_tokens,
                    max_requests=max_requests,
                    max_cost_usd=max_cost_usd,
                    session=f"judge:{self.name}",
                    warn_at=None,
                )
            )
        adapter = resolve_model(self.model, retry_policy=self.retry_policy)
        return Agent(
            self.name,
            self.instructions,
            model=adapter,
            settings=self.settings,
            config=AgentConfiguration(max_steps=4),
            guardrails=guardrails,
        )

    def cache_key(self, prompt: str, extra_instructions: str) -> str:
        schema = json.dumps(self.verdict_type.model_json_schema(), sort_keys=True)
        parts = (_model_id(self.model), self.instructions, extra_instructions, prompt, schema)
        return hashlib.sha256("\x00".join(parts).encode()).hexdigest()

    async def ajudge(self, prompt: str, *, extra_instructions: str = "") -> VerdictT:
        """The verdict for ``prompt`` (cached); raises :class:`JudgeError` or its budget subclass.

        The agent answers in text under the verdict's JSON schema (structured output where the
        provider has it); an answer that does not decode is asked for again in the same conversation,
        with the error, up to ``decode_retries`` times. Every attempt's tokens and cost are counted.
        """
        from kanawa.loop.decoding import DecodeError

        key = self.cache_key(prompt, extra_instructions)
        cached = self.cache.get(key)
        if cached is not None:
            self.ledger.cache_hits += 1
            return self.verdict_type.model_validate(cached)
        async with self._lock:
            if self._agent is None:
                self._agent = self._build_agent()
        options = RunOptions(instructions=extra_instructions or None, output_schema=self._decoder.schema)
        history: tuple[Any, ...] = ()
        user_input = prompt
        for attempt in range(self.decode_retries + 1):
            result = await self._run(user_input, history, options)
            try:
                verdict = self._decoder.decode(result.text)
            except DecodeError as exc:
                if attempt == self.decode_retries:
                    raise JudgeError(
                        f"judge {self.name!r} gave no verdict: its answer did not decode after "
                        f"{attempt + 1} attempts ({exc.errors})"
                    ) from None
                history = tuple(result.messages)
                user_input = (
                    f"Your reply did not match the required JSON schema ({exc.errors}). "
                    f"Reply again with only a JSON object matching: {self._decoder.schema_json}"
                )
                continue
            self.cache.put(key, verdict.model_dump(mode="json"))
            return verdict
        raise AssertionError("unreachable: the loop returns or raises")  # pragma: no cover

    async def _run(self, user_input: str, history: tuple[Any, ...], options: RunOptions) -> Any:
        """One agent run, its usage and cost added to the ledger; loop errors become judge errors."""
        from kanawa.loop.errors import AgentError, BudgetExceeded

        try:
            result = await self._agent.arun(user_input, history=history, options=options)
        except BudgetExceeded as exc:
            raise JudgeBudgetExceededError(f"judge {self.name!r}: budget used up ({exc})") from None
        except AgentError as exc:
            raise JudgeError(f"judge {self.name!r} gave no verdict: {exc}") from None
        record_judge_cost(result.cost)  # into the running eval's EvalReport.judge_cost_usd
        self.ledger.calls += 1
        self.ledger.usage = self.ledger.usage + result.usage
        if result.cost is None:
            self.ledger.unpriced += 1
        else:
            self.ledger.cost_usd += result.cost
        return result


def judge_cost_usd(scorers: Iterable[object]) -> float:
    """USD spent so far by the judges among ``scorers`` (other scorers cost nothing)."""
    total = 0.0
    for scorer in scorers:
        ledger = getattr(scorer, "ledger", None)
        if isinstance(ledger, JudgeLedger):
            total += ledger.cost_usd
    return total


class JudgeBase:
    """What every judge shares: its scorer name and the :class:`JudgeRunner` it asks through."""

    _name: str
    runner: JudgeRunner[Any]

    @property
    def name(self) -> str:
        return self._name

    @property
    def ledger(self) -> JudgeLedger:
        """What this judge has spent (the eval report's ``judge_cost_usd`` adds these up)."""
        return self.runner.ledger
