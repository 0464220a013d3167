"""Where a conversation may be cut: the units of a history, and dropping the oldest of them.

Every provider rejects a history in which a tool result has lost its call (OpenAI, Anthropic and Gemini
answer 400), and OpenAI and Anthropic reject a call whose result is missing. On the Responses API a
reasoning item must also stay in front of the call it led to. kanawa keeps those together by
construction: an :class:`~kanawa.types.AssistantMessage` carries its reasoning and its tool calls, and
one *unit* is that message together with the :class:`~kanawa.types.ToolMessage` s answering it. Any
other message is a unit on its own. A cut is only ever made between units.

:func:`split_history` also names what compaction must keep:

- the leading system messages (the instructions), pinned;
- the newest unit (the turn being answered), always;
- the *anchor*: the newest user message among the units that are cut away, so the task the model is
  working on survives a long tool loop in which it would otherwise be the first thing to go.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kanawa.types import Message, SystemMessage, ToolMessage, UserMessage

Unit = tuple[Message, ...]
"""Messages that are kept or dropped together."""


def history_units(messages: Sequence[Message]) -> list[Unit]:
    """``messages`` as units (module docstring), in order; nothing is dropped.

    A tool message always joins the unit before it. When its call is not there (a history that was
    already broken) it still goes with that unit rather than standing alone: compaction never creates
    an orphan, and never hides one that was there (the provider reports it as it would have)."""
    units: list[list[Message]] = []
    for message in messages:
        if isinstance(message, ToolMessage) and units:
            units[-1].append(message)
        else:
            units.append([message])
    return [tuple(unit) for unit in units]


@dataclass(frozen=True, slots=True)
class HistorySplit:
    """A history cut in four contiguous-in-order parts: ``pinned + older + recent`` is the history, and
    ``anchor`` (when set) is the newest user message inside ``older``, which compaction keeps."""

    pinned: tuple[Message, ...]
    older: tuple[Message, ...]
    recent: tuple[Message, ...]
    anchor: UserMessage | None

    @property
    def kept(self) -> list[Message]:
        """What dropping ``older`` leaves: the pinned messages, the anchor, the recent units."""
        anchor = () if self.anchor is None else (self.anchor,)
        return [*self.pinned, *anchor, *self.recent]


def pinned_count(messages: Sequence[Message]) -> int:
    """How many leading system messages the history has."""
    count = 0
    while count < len(messages) and isinstance(messages[count], SystemMessage):
        count += 1
    return count


def split_history(
    messages: Sequence[Message], *, budget: int, cost: Callable[[Message], int], fixed: int = 0
) -> HistorySplit:
    """Keep the newest units that fit ``budget`` tokens; the rest is ``older``.

    ``cost`` prices one message; ``fixed`` is what the request costs besides its messages (reply
    priming, tool definitions). The pinned messages, the newest unit and the anchor are kept whatever
    they cost; then older units are added back newest first while the total stays within ``budget``.
    The anchor is priced in before units are added back, so the result fits whenever the parts that
    must be kept fit."""
    start = pinned_count(messages)
    pinned = tuple(messages[:start])
    units = history_units(messages[start:])
    if not units:
        return HistorySplit(pinned, (), (), None)
    first = len(units) - 1
    total = fixed + sum(cost(m) for m in pinned) + sum(cost(m) for m in units[first])
    anchor_at = _newest_user(units, first)
    if anchor_at is not None:
        total += cost(units[anchor_at][0])
    while first > 0:
        index = first - 1
        if index == anchor_at:  # the anchor joins the recent part; the next user message anchors
            following = _newest_user(units, index)
            extra = 0 if following is None else cost(units[following][0])
            if total + extra > budget:
                break
            anchor_at = following
        else:
            extra = sum(cost(m) for m in units[index])
            if total + extra > budget:
                break
        total += extra
        first = index
    anchor = None if anchor_at is None else units[anchor_at][0]
    older = tuple(m for unit in units[:first] for m in unit)
    recent = tuple(m for unit in units[first:] for m in unit)
    return HistorySplit(pinned, older, recent, anchor if isinstance(anchor, UserMessage) else None)


def _newest_user(units: Sequence[Unit], before: int) -> int | None:
    """The index of the newest unit before ``before`` that starts with a user message."""
    for index in range(before - 1, -1, -1):
        if isinstance(units[index][0], UserMessage):
            return index
    return None


__all__ = ["HistorySplit", "Unit", "history_units", "pinned_count", "split_history"]
