"""``Compaction``: when a run's history is compacted, to what size, and how (the strategy).

One frozen object per agent (``Agent(..., compaction=Compaction())``), validated where it is written.
The sizes are fractions of the model's context window, which comes from the model catalogue
(:func:`kanawa.llm.catalogue.card_for`) unless ``context_window`` gives it: a model the catalogue does
not know (a local server, a test model) needs it, and the run refuses to start without it rather than
guess.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass, field

from kanawa.loop.compaction.strategies import CompactionStrategy, DropOldest


@dataclass(frozen=True, slots=True)
class Compaction:
    """Compact a run's history before a request that would pass ``trigger`` of the context window.

    Attributes:
        strategy: how older turns are made smaller: :class:`DropOldest` (the default),
            :class:`Summarize` (a model of your choice writes a summary) or :class:`NativeCompaction`
            (the provider's own compaction where it has one).
        trigger: the fraction of the context window (0 < trigger <= 1) an estimated request may reach
            before the history is compacted (default 0.8: room is left for the answer).
        target: the fraction of the window the compacted history aims at (0 < target <= trigger;
            default 0.5), so compaction does not run again on the very next request.
        context_window: the model's window in tokens; ``None`` reads it from the model catalogue.

    Whatever the strategy, the instructions, the newest turn and the latest user message are kept, and
    a tool call never loses its result. A provider's context-length error compacts once more (to
    ``target``) and retries the request once.
    """

    _: KW_ONLY
    strategy: CompactionStrategy = field(default_factory=DropOldest)
    trigger: float = 0.8
    target: float = 0.5
    context_window: int | None = None

    def __post_init__(self) -> None:
        for name in ("trigger", "target"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 1:
                raise ValueError(
                    f"Compaction.{name} must be a fraction of the window in (0, 1], not {value!r}"
                )
        if self.target > self.trigger:
            raise ValueError(
                f"Compaction.target ({self.target}) must not be above Compaction.trigger ({self.trigger})"
            )
        window = self.context_window
        if window is not None and (isinstance(window, bool) or not isinstance(window, int) or window < 1):
            raise ValueError(f"Compaction.context_window must be a positive number of tokens, not {window!r}")
        if not callable(getattr(self.strategy, "compact", None)):
            raise TypeError(
                "Compaction.strategy must be DropOldest(), Summarize(...), NativeCompaction() "
                f"or another CompactionStrategy, not {type(self.strategy).__name__}"
            )

    def window_for(self, model: str) -> int:
        """The context window of ``model``: ``context_window`` when set, else the catalogue's.

        Raises ``ValueError`` naming the model when neither knows it."""
        if self.context_window is not None:
            return self.context_window
        from kanawa.llm.catalogue import card_for  # the catalogue's data is read only when needed

        card = card_for(model)
        if card is None:
            raise ValueError(
                f"compaction needs the context window of model {model!r}, which the model catalogue "
                "does not know: pass Compaction(context_window=<tokens>)"
            )
        return card.context_window


__all__ = ["Compaction"]
