"""Telling messages apart by identity in property tests.

Messages are frozen dataclasses that compare by value: two users who both wrote ``""`` are equal. A
property about *which* message a cut kept (the newest turn, the anchor, a contiguous suffix) must ask
about that message object, never about one that merely looks like it — an oracle that used ``in`` once
took an older, equal user message for part of the newest turn and failed a correct cut.
"""

from __future__ import annotations

from collections.abc import Sequence

from kanawa.types import Message


def same(part: Sequence[Message], whole: Sequence[Message]) -> bool:
    """The same message objects, in the same order."""
    return len(part) == len(whole) and all(a is b for a, b in zip(part, whole, strict=True))


def contains(messages: Sequence[Message], message: Message) -> bool:
    """``message`` itself (not an equal one) is among ``messages``."""
    return any(m is message for m in messages)


__all__ = ["contains", "same"]
