"""``RunContext``: what a tool or a dynamic instruction may know about the run it serves.

A run's dependencies (a database pool, the user's id, a corpus) reach tools through the context, never
through globals (DESIGN "Decisions"). ``Agent(..., deps_type=Deps)`` fixes the type,
``agent.run(..., deps=Deps(...))`` supplies the value, and a tool whose *first* parameter is annotated
``RunContext[Deps]`` (or bare ``RunContext``) receives the context when the model calls it; the
parameter never appears in the JSON schema the model sees or in the tool's arguments model.

The module sits beside :mod:`kanawa.types`, below ``tools/`` and ``loop/``, so tools can name the type
without importing the loop (DESIGN principle 2).

Cost: one context per run, made when the run starts. ``step``, ``usage`` and ``messages`` are read
through to the run as it goes (the runner is the :class:`RunProgress`), so nothing is copied or
updated per step; ``messages`` is a read-only view of the run's one message list.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from dataclasses import KW_ONLY, dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Protocol, overload

from typing_extensions import TypeVar

from kanawa.types import Message, Usage

if TYPE_CHECKING:
    from kanawa.loop.options import RunOptions
    from kanawa.trace.events import Tracer

__all__ = ["CURRENT_TOOL_CALL_ID", "DepsT", "MessagesView", "RunContext", "RunProgress"]

CURRENT_TOOL_CALL_ID: ContextVar[str | None] = ContextVar("kanawa_tool_call_id", default=None)
"""The id of the tool call a context-taking tool is running for; set by the invoker around the call
(each concurrent call runs in its own task, so each sees its own id)."""

DepsT = TypeVar("DepsT", default=None)
"""The type of a run's dependencies; ``None`` when an agent declares no ``deps_type``."""


class RunProgress(Protocol):
    """Where a context reads the live state of its run (:class:`~kanawa.loop.runner.AgentLoopRunner`)."""

    @property
    def step(self) -> int:
        """The current step: 1 during the first model request and the tools it asked for."""
        ...

    @property
    def usage(self) -> Usage:
        """Usage summed over the model requests made so far."""
        ...

    @property
    def messages(self) -> Sequence[Message]:
        """The conversation so far."""
        ...

    def emit(self, event: object) -> None:
        """Put an event into the run's stream while a tool runs (a handed-off agent's events)."""
        ...


class _NotRunning:
    """The progress of a context made by hand (tests, a tool called in plain code): nothing yet."""

    __slots__ = ()

    @property
    def step(self) -> int:
        return 0

    @property
    def usage(self) -> Usage:
        return Usage()

    @property
    def messages(self) -> Sequence[Message]:
        return ()

    def emit(self, event: object) -> None:
        """Nothing is listening: the event is dropped."""


_NOT_RUNNING = _NotRunning()


class _Ended:
    """The progress of a run that has ended: its last step, usage and conversation, which its context
    keeps in place of the runner (:func:`end_run`)."""

    __slots__ = ("messages", "step", "usage")

    def __init__(self, progress: RunProgress) -> None:
        self.step = progress.step
        self.usage = progress.usage
        self.messages: Sequence[Message] = tuple(progress.messages)

    def emit(self, event: object) -> None:
        """The run has ended: nothing is listening, the event is dropped."""


def end_run(context: RunContext[Any]) -> None:
    """The run ``context`` belongs to has ended (the loop calls this; it is not exported): the context
    answers from the run's last state from now on and lets go of the runner. A runner and its context
    refer to each other while the run goes (tools read the live state through the context); without
    this a finished run — its messages, trace and result — would wait for the garbage collector's next
    full pass instead of being freed when the last reference to the runner goes (about 6 KiB a served
    run, held by thousands of runs between passes on a busy server)."""
    ended = _Ended(context.progress)
    object.__setattr__(context, "progress", ended)
    object.__setattr__(context, "_messages", MessagesView(ended))


class MessagesView(Sequence[Message]):
    """A read-only, live view of a run's conversation: it has no methods that change the list, reads
    the run's current list on every access (so it follows a list replaced by pre-processing) and copies
    nothing. A slice is a tuple."""

    __slots__ = ("_progress",)

    def __init__(self, progress: RunProgress) -> None:
        self._progress = progress

    @overload
    def __getitem__(self, index: int) -> Message: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[Message, ...]: ...

    def __getitem__(self, index: int | slice) -> Message | tuple[Message, ...]:
        messages = self._progress.messages
        if isinstance(index, slice):
            return tuple(messages[index])
        return messages[index]

    def __len__(self) -> int:
        return len(self._progress.messages)

    def __iter__(self) -> Iterator[Message]:
        return iter(self._progress.messages)

    def __repr__(self) -> str:
        return f"MessagesView({len(self)} messages)"


@dataclass(frozen=True, slots=True)
class RunContext(Generic[DepsT]):
    """The context of one run, handed to tools and dynamic instructions.

    Fields are fixed for the run: ``deps`` (what ``run(..., deps=...)`` was given, ``None`` when
    nothing was), ``agent_name``, ``run_id`` and ``model_name`` (the model the run was started with).
    ``step``, ``usage`` and ``messages`` are live: they read the run's state at the moment they are
    read. A context made by hand — ``RunContext(Deps(...))`` to call a context-taking tool in plain
    code or in a test — reads step 0, empty usage and no messages.

    The context itself is immutable; ``deps`` is the caller's object and is shared as it is (runs that
    share a ``deps`` object share its state).

    Multi-agent fields (seed 002 §3-1 "ハンドオフ"): ``handoff_path`` names the agents that handed
    off, from the run a caller started down to this run's parent, so :attr:`handoff_depth` (its
    length) is how many handoffs deep this run is (0 for a run a caller started); :attr:`tool_call_id`
    is the id of the call the reading tool runs for (``None`` outside one); ``streaming`` says whether
    the run streams the model's deltas; ``tracer`` is the run's tracer, which a nested run inherits
    when its agent has none; ``options`` are what the run's starter added to it
    (:class:`~kanawa.loop.options.RunOptions`), whose :meth:`~kanawa.loop.options.RunOptions.for_nested`
    part a nested run inherits.
    """

    deps: DepsT
    _: KW_ONLY
    agent_name: str = ""
    run_id: str = ""
    model_name: str = ""
    progress: RunProgress = field(default=_NOT_RUNNING, repr=False, compare=False)
    handoff_path: tuple[str, ...] = field(default=(), repr=False)
    streaming: bool = field(default=False, repr=False)
    tracer: Tracer | None = field(default=None, repr=False, compare=False)
    options: RunOptions | None = field(default=None, repr=False, compare=False)
    _messages: MessagesView = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_messages", MessagesView(self.progress))

    @property
    def step(self) -> int:
        """The current step (1-based): the model request being answered, or whose tool calls run."""
        return self.progress.step

    @property
    def usage(self) -> Usage:
        """Usage summed over the run's model requests so far (the one that asked for a tool included)."""
        return self.progress.usage

    @property
    def messages(self) -> Sequence[Message]:
        """The conversation so far, as a read-only live view (no copy is made)."""
        return self._messages

    def emit(self, event: object) -> None:
        """Yield ``event`` from the run's stream while the current tool runs (how a handed-off agent's
        events reach the caller, :mod:`kanawa.agents.handoffs`); dropped for a context made by hand."""
        self.progress.emit(event)

    @property
    def handoff_depth(self) -> int:
        """How many handoffs deep this run is: 0 for a run a caller started, 1 for its handoff target …"""
        return len(self.handoff_path)

    @property
    def tool_call_id(self) -> str | None:
        """The id of the tool call being executed when a tool reads it (``None`` outside one)."""
        return CURRENT_TOOL_CALL_ID.get()
