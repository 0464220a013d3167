"""Streaming-safe separation of ``<think>…</think>`` thoughts from visible text (seed 000 §5, 001 §4.6).

Models that narrate their reasoning inline wrap it in ``<think>`` tags. The strategy shows or hides
those thoughts depending on ``emit_intermediate_thoughts``, and it has to decide chunk by chunk while
the response streams, so a tag may arrive split anywhere (``"<th"`` + ``"ink>"``).

Rules (shared by :class:`ThinkTagFilter` and :func:`split_think`):

- Only the exact tags ``<think>`` and ``</think>`` are markup; tag names match case-insensitively
  (``<THINK>`` works), but no whitespace or attributes are allowed inside them. Anything else that
  starts with ``<`` is ordinary text.
- Tags never appear in either output. ``<think>`` switches to thought, ``</think>`` back to visible.
  Blocks do not nest: a ``<think>`` inside a thought is dropped, and the first ``</think>`` ends it.
- A stray ``</think>`` with no open block is dropped; the text around it stays visible.
- A block left open stays thought: everything after ``<think>`` is thought, also at :meth:`flush`.
- At :meth:`flush`, a held-back partial tag (``"<thi"``) is ordinary text of the current side.

Cost: each chunk is scanned once with ``str.find``; at most ``len("</think>") - 1`` characters are held
back between chunks, so buffering never grows with the stream.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass
from typing import Final

from kanawa.prompts.library import DEFAULT_PROMPTS, list_separator

__all__ = ["ThinkOutput", "ThinkTagFilter", "fallback_thought", "split_think"]

_OPEN: Final = "<think>"
_CLOSE: Final = "</think>"
_LONGEST: Final = len(_CLOSE)


@dataclass(frozen=True, slots=True)
class ThinkOutput:
    """What one :meth:`ThinkTagFilter.feed` (or :meth:`~ThinkTagFilter.flush`) released."""

    _: KW_ONLY
    visible: str = ""
    thought: str = ""


_EMPTY: Final = ThinkOutput()


def _is_tag_prefix(fragment: str) -> bool:
    """Whether ``fragment`` (lower-cased, shorter than a full tag) could still grow into a tag."""
    return _OPEN.startswith(fragment) or _CLOSE.startswith(fragment)


class ThinkTagFilter:
    """Splits a text stream into visible text and thought text, one chunk at a time.

    ``feed(chunk)`` returns the text this chunk made certain; a possible partial tag at the end of the
    chunk is held back until the next chunk decides it. ``flush()`` releases what is held back and
    resets the filter, so one instance can serve the next response.
    """

    __slots__ = ("_in_thought", "_pending")

    def __init__(self) -> None:
        self._in_thought = False
        self._pending = ""

    @property
    def in_thought(self) -> bool:
        """Whether the stream is currently inside a ``<think>`` block."""
        return self._in_thought

    def feed(self, chunk: str) -> ThinkOutput:
        """Consume ``chunk``; return the visible and thought text it released."""
        text = self._pending + chunk if self._pending else chunk
        self._pending = ""
        if not text:
            return _EMPTY
        visible: list[str] = []
        thought: list[str] = []
        out = thought if self._in_thought else visible
        start = 0
        end = len(text)
        while True:
            lt = text.find("<", start)
            if lt < 0:
                out.append(text[start:])
                break
            if lt > start:
                out.append(text[start:lt])
            head = text[lt : lt + _LONGEST].lower()
            if head.startswith(_OPEN):
                out = thought
                start = lt + len(_OPEN)
            elif head == _CLOSE:
                out = visible
                start = lt + _LONGEST
            elif lt + _LONGEST > end and _is_tag_prefix(head):
                self._pending = text[lt:]
                break
            else:
                out.append("<")
                start = lt + 1
        self._in_thought = out is thought
        return ThinkOutput(visible="".join(visible), thought="".join(thought))

    def flush(self) -> ThinkOutput:
        """Release a held-back partial tag as plain text of the current side, then reset."""
        pending = self._pending
        in_thought = self._in_thought
        self._pending = ""
        self._in_thought = False
        if not pending:
            return _EMPTY
        return ThinkOutput(thought=pending) if in_thought else ThinkOutput(visible=pending)


def split_think(text: str) -> tuple[str, str]:
    """``(visible, thought)`` of a whole text; equal to feeding it to a :class:`ThinkTagFilter`."""
    stream = ThinkTagFilter()
    body = stream.feed(text)
    tail = stream.flush()
    return body.visible + tail.visible, body.thought + tail.thought


def fallback_thought(tool_names: Sequence[str], *, lang: str = "en") -> str:
    """The thought shown for a round that called tools without writing a ``<think>`` block.

    Seed 001 §4.6: when ``<think>`` is missing, a thought is generated. Names are listed once each, in
    call order, joined the way ``lang`` writes lists (``ja``: ``、``). The text comes from the
    ``tool_fallback_thought`` template of :data:`~kanawa.prompts.library.DEFAULT_PROMPTS`.

    Raises:
        ValueError: ``tool_names`` is empty (a fallback thought describes tool calls).
    """
    if not tool_names:
        raise ValueError("fallback_thought needs at least one tool name")
    names = list_separator(lang).join(dict.fromkeys(tool_names))
    text = DEFAULT_PROMPTS.get("tool_fallback_thought", lang=lang, tools=names)
    return f"{_OPEN}{text}{_CLOSE}"
