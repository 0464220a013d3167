"""What a scorer sees and what it says: :class:`ScoreContext` in, :class:`Assertion` or :class:`Score` out.

Assertions (pass/fail) and scores (numbers, 0–1 when normalised) are different kinds on purpose: a
report counts pass rates for the one and averages for the other, and ``compare`` treats an assertion
as 1.0/0.0 only when it needs a number. Every outcome carries a ``reason`` so a failing case explains
itself without re-running it.

Scorers are registered by a type name (:func:`register_scorer`) so a YAML dataset can name them
(``{"type": "contains", "value": "Tokyo"}``); Python users may pass scorer objects directly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextvars import ContextVar
from dataclasses import KW_ONLY, dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, TypeVar, runtime_checkable

from kanawa.types import Usage

if TYPE_CHECKING:
    from kanawa.evals.cases import Case
    from kanawa.loop.events import RunEvent


@dataclass(frozen=True)
class ScoreContext:
    """Everything known about one run of one case: the case, the run's decoded ``output`` and raw
    ``text``, the loop events it yielded (tool calls for trajectory scorers), usage, cost and time.
    ``error`` is set when the run failed (then ``output`` is ``None``)."""

    case: Case[Any, Any]
    output: Any
    text: str
    _: KW_ONLY
    events: tuple[RunEvent[Any], ...] = ()
    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = None
    duration_ms: float = 0.0
    run_id: str | None = None
    error: str | None = None


@dataclass(frozen=True)
class Assertion:
    """A pass/fail check with the reason for the verdict."""

    name: str
    passed: bool
    reason: str


@dataclass(frozen=True)
class Score:
    """A numeric score (0–1 when the scorer normalises) with the reason for the value."""

    name: str
    value: float
    reason: str


Outcome: TypeAlias = Assertion | Score


@runtime_checkable
class Scorer(Protocol):
    """Anything with a ``name`` and an async ``ascore``; it may return one outcome or several."""

    @property
    def name(self) -> str: ...

    async def ascore(self, ctx: ScoreContext) -> Outcome | Sequence[Outcome]: ...


class NoVerdictError(RuntimeError):
    """A scorer could not reach a verdict for a reason that is not the run's (its judge model's
    provider failed, its answer never decoded, its budget ran out). The case is then *errored* for
    that scorer, not failed: the report lists it apart (``CaseResult.scorer_errors``) and ``compare``
    leaves it out of that scorer's paired test, so a flaky judge is not read as a regression."""


def as_outcomes(result: Outcome | Sequence[Outcome]) -> list[Outcome]:
    """One outcome or several, always as a list (scorers may return either)."""
    if isinstance(result, (Assertion, Score)):  # a tuple: the faster check, once per scorer per case
        return [result]
    return list(result)


def outcome_value(outcome: Outcome) -> float:
    """The number ``compare`` uses: a score's value, or 1.0/0.0 for a passed/failed assertion."""
    if isinstance(outcome, Assertion):
        return 1.0 if outcome.passed else 0.0
    return float(outcome.value)


ScorerFactory: TypeAlias = Callable[..., Scorer]
_F = TypeVar("_F", bound=Callable[..., Any])
_REGISTRY: dict[str, ScorerFactory] = {}


class UnknownScorerError(ValueError):
    """A dataset names a scorer type nobody registered (a typo in the YAML, or a missing import)."""


def register_scorer(type_name: str) -> Callable[[_F], _F]:
    """Register a scorer factory under ``type_name`` so datasets can name it in ``scorers:``.

    The factory is called with the spec's other keys as keyword arguments.
    """

    def decorate(factory: _F) -> _F:
        _REGISTRY[type_name] = factory
        return factory

    return decorate


def scorer_types() -> dict[str, ScorerFactory]:
    """The registered scorer types (built-ins included), by name."""
    _load_builtins()
    return dict(_REGISTRY)


def build_scorer(type_name: str, params: dict[str, Any]) -> Scorer:
    """Build a registered scorer; an unknown type or bad parameters raise a clear ``ValueError``."""
    _load_builtins()
    factory = _REGISTRY.get(type_name)
    if factory is None:
        known = ", ".join(sorted(_REGISTRY)) or "none"
        raise UnknownScorerError(f"unknown scorer type {type_name!r} (known: {known})")
    try:
        return factory(**params)
    except TypeError as exc:
        raise ValueError(f"bad parameters for scorer {type_name!r}: {exc}") from None


class _JudgeCosts:
    """What judges spent during one eval (the runner opens one per eval)."""

    def __init__(self) -> None:
        self.usd = 0.0
        self.unpriced = 0


_JUDGE_COSTS: ContextVar[_JudgeCosts | None] = ContextVar("kanawa_eval_judge_costs", default=None)


def record_judge_cost(usd: float | None) -> None:
    """Judges call this with what one verdict cost (``None``: a model with no price), so the eval's
    report shows judge cost apart from the runs'. Outside an eval it does nothing."""
    costs = _JUDGE_COSTS.get()
    if costs is None:
        return
    if usd is None:
        costs.unpriced += 1
    else:
        costs.usd += usd


def open_judge_costs() -> _JudgeCosts:
    """Start counting judge cost in this context (the runner does this once per eval)."""
    costs = _JudgeCosts()
    _JUDGE_COSTS.set(costs)
    return costs


SCORER_ENTRY_POINTS = "kanawa.evals.scorers"
"""The entry-point group of modules that register scorer types when imported. kanawa's own are
``builtin`` (:mod:`kanawa.evals.scorers`) and ``judges`` (:mod:`kanawa.evals.judges`, which sit above
the applications they judge for, so this module never imports them); a package adds its own here."""

_LOADED: list[bool] = []


def _load_builtins() -> None:
    """Import every module of the entry-point group once (each registers its scorers), so a dataset
    file can name any installed scorer type. One that fails to import is skipped with a warning."""
    if _LOADED:
        return
    _LOADED.append(True)
    import importlib
    from importlib.metadata import entry_points

    from kanawa._logging import get_logger

    for entry in entry_points(group=SCORER_ENTRY_POINTS):
        try:
            importlib.import_module(entry.value.partition(":")[0])
        except Exception as exc:  # one broken plugin must not take the others down
            get_logger(__name__).warning("scorer plugin %s could not be loaded: %s", entry.name, exc)
    import kanawa.evals.scorers  # noqa: F401  (the built-ins even without installed metadata)


__all__ = [
    "SCORER_ENTRY_POINTS",
    "Assertion",
    "NoVerdictError",
    "Outcome",
    "Score",
    "ScoreContext",
    "Scorer",
    "ScorerFactory",
    "UnknownScorerError",
    "as_outcomes",
    "build_scorer",
    "open_judge_costs",
    "outcome_value",
    "record_judge_cost",
    "register_scorer",
    "scorer_types",
]
