"""Short-term memory: the recent conversation of each session, trimmed to a token budget (seed 002 §2
"短期 (deque)").

The one rule every trim here keeps: an assistant message that asked for tools and the tool messages
answering it stay together or go together. Providers reject a tool result whose call is missing (and
OpenAI rejects a call whose result is missing), so the conversation is cut only between *units*:

- an :class:`~kanawa.types.AssistantMessage` with ``tool_calls`` together with the
  :class:`~kanawa.types.ToolMessage` s that answer those calls;
- any other message on its own.

A tool message whose call is not in view (already cut away before it reached us) is dropped, never
sent alone.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Iterable, Sequence

from kanawa.llm.tokens import REPLY_PRIMING_TOKENS, TextCounter, message_tokens, text_counter
from kanawa.types import AssistantMessage, Message, SystemMessage, ToolMessage, UserMessage


def group_units(messages: Sequence[Message]) -> list[list[Message]]:
    """Split ``messages`` into units that must never be separated (see the module docstring).

    Tool messages whose call id is not asked for by the assistant message before them are dropped.
    """
    units: list[list[Message]] = []
    open_calls: set[str] = set()
    for message in messages:
        if isinstance(message, ToolMessage):
            if message.tool_call_id in open_calls:
                open_calls.discard(message.tool_call_id)
                units[-1].append(message)
            continue
        open_calls = (
            {call.id for call in message.tool_calls} if isinstance(message, AssistantMessage) else set()
        )
        units.append([message])
    return units


def trim_messages(
    messages: Sequence[Message],
    *,
    max_tokens: int,
    count: TextCounter | None = None,
) -> list[Message]:
    """The newest part of ``messages`` that fits ``max_tokens`` (counted like
    :func:`kanawa.llm.tokens.count_message_tokens`).

    The leading system messages are pinned and the last unit (the current turn) is always kept; older
    units are dropped oldest first until the total fits, and the kept history then starts at a user
    message (providers such as Anthropic require it). If the pinned messages and the last unit alone
    exceed the budget they are returned as they are: dropping the current turn would leave nothing to
    answer. Order is preserved and the result is the pinned messages plus a contiguous suffix of the rest.
    """
    if max_tokens < 0:
        raise ValueError("max_tokens must be >= 0")
    counter = count if count is not None else text_counter()
    pinned_end = 0
    while pinned_end < len(messages) and isinstance(messages[pinned_end], SystemMessage):
        pinned_end += 1
    pinned = list(messages[:pinned_end])
    units = group_units(messages[pinned_end:])
    if not units:
        return pinned
    total = REPLY_PRIMING_TOKENS + sum(message_tokens(m, counter) for m in pinned)
    costs = [sum(message_tokens(m, counter) for m in unit) for unit in units]
    total += costs[-1]
    first = len(units) - 1
    while first > 0 and total + costs[first - 1] <= max_tokens:
        first -= 1
        total += costs[first]
    while first < len(units) - 1 and not isinstance(units[first][0], UserMessage):
        first += 1
    return pinned + [m for unit in units[first:] for m in unit]


class ShortTermMemory:
    """The recent messages of each session in a bounded deque (seed 002 §2 "短期 (deque)").

    ``history(session)`` gives what to pass as ``Agent.run(..., history=...)``; ``record(session,
    result.messages)`` stores a run's conversation. System messages are not stored: the agent owns the
    system slot, and memory blocks injected for one run must not become history.

    Bounds: at most ``max_messages`` per session (the oldest whole units are evicted, so a tool call is
    never kept without its result) and at most ``max_sessions`` sessions (the least recently used one
    is forgotten). ``max_tokens`` trims what :meth:`history` returns (see :func:`trim_messages`).
    Not shared across processes; one event loop, no locking needed (no awaits inside).
    """

    def __init__(
        self,
        *,
        max_messages: int = 200,
        max_tokens: int | None = None,
        max_sessions: int = 10_000,
        model: str | None = None,
    ) -> None:
        if max_messages < 1 or max_sessions < 1:
            raise ValueError("max_messages and max_sessions must be >= 1")
        self.max_messages = max_messages
        self.max_tokens = max_tokens
        self.max_sessions = max_sessions
        self._count = text_counter(model)
        self._sessions: OrderedDict[str, deque[Message]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._sessions)

    def __contains__(self, session: object) -> bool:
        return session in self._sessions

    def history(self, session: str, *, max_tokens: int | None = None) -> list[Message]:
        """The session's messages, oldest first, trimmed to ``max_tokens`` (default: the memory's)."""
        window = self._sessions.get(session)
        if window is None:
            return []
        self._sessions.move_to_end(session)
        budget = max_tokens if max_tokens is not None else self.max_tokens
        messages = list(window)
        if budget is None:
            return messages
        return trim_messages(messages, max_tokens=budget, count=self._count)

    def append(self, session: str, messages: Iterable[Message]) -> None:
        """Add messages to the end of the session's window."""
        window = self._window(session)
        window.extend(m for m in messages if not isinstance(m, SystemMessage))
        self._evict(window)

    def record(self, session: str, messages: Sequence[Message]) -> None:
        """Replace the session's window by a run's whole conversation (``result.messages`` already
        contains the history it was given), keeping the newest ``max_messages``."""
        window = self._window(session)
        window.clear()
        window.extend(m for m in messages if not isinstance(m, SystemMessage))
        self._evict(window)

    def clear(self, session: str) -> None:
        """Forget one session."""
        self._sessions.pop(session, None)

    def _window(self, session: str) -> deque[Message]:
        window = self._sessions.get(session)
        if window is None:
            window = self._sessions[session] = deque()
            while len(self._sessions) > self.max_sessions:
                self._sessions.popitem(last=False)
        else:
            self._sessions.move_to_end(session)
        return window

    def _evict(self, window: deque[Message]) -> None:
        """Drop whole units from the left until the bound holds; after evicting, the window starts at a
        user turn again (the oldest kept exchange is complete)."""
        if len(window) <= self.max_messages:
            return
        while window and (len(window) > self.max_messages or not isinstance(window[0], UserMessage)):
            window.popleft()
            while window and isinstance(window[0], ToolMessage):
                window.popleft()


__all__ = ["ShortTermMemory", "group_units", "trim_messages"]
