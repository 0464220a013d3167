"""The playbook: bullets of advice grouped into sections (ACE, seed 004 "Bullet", "Playbook").

A :class:`Bullet` is one piece of advice with an id such as ``shr-00001``: a section prefix and a
five-digit counter shared by every section of the playbook, so ids never collide across sections. The
Reflector's verdicts live on the bullet as ``helpful`` / ``harmful`` / ``neutral`` counters, and
:attr:`Bullet.confidence` (helpful / (helpful + harmful)) is what search filters on.

Sections have a display title (``STRATEGIES AND HARD RULES``, the text format's ``## `` header) and a
prefix. The prefixes of the published AppWorld playbook are fixed (:data:`APPWORLD_PREFIXES`); any
other section is a user section whose prefix comes from its bullets' ids when it has some, else from
the initials of its title (``API USAGE PATTERNS`` → ``aup``).

A :class:`Playbook` is a value: operations (:mod:`kanawa.apps.ace.operations`) build a new one, so a
search index or a prompt built from one playbook never sees half of a change.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from typing import Final, Self

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

BULLET_ID: Final = re.compile(r"^([a-z][a-z0-9]*)-(\d{5,})$")
"""A bullet id: a lowercase prefix, ``-``, and a counter of at least five digits."""

_STRUCTURAL: Final = re.compile(r"^(##(?!#)|\[[a-z][a-z0-9]*-\d{5,}\])")
"""A line the text format would read as a header or a new bullet (so it cannot continue a bullet)."""

APPWORLD_PREFIXES: Final[dict[str, str]] = {
    "STRATEGIES AND HARD RULES": "shr",
    "APIS TO USE FOR SPECIFIC INFORMATION": "api",
    "USEFUL CODE SNIPPETS AND TEMPLATES": "code",
    "COMMON MISTAKES AND CORRECT STRATEGIES": "cms",
    "PROBLEM-SOLVING WORKFLOW": "psw",
    "VERIFICATION CHECKLIST": "vc",
    "TROUBLESHOOTING AND PITFALLS": "ts",
    "OTHERS": "misc",
}
"""The sections of the published AppWorld playbook and their id prefixes."""

_PREFIX_TITLES: Final = {prefix: title for title, prefix in APPWORLD_PREFIXES.items()}


def now() -> datetime:
    """Timestamps are timezone-aware UTC, so they compare and serialise the same everywhere."""
    return datetime.now(UTC)


def normalise_section(title: str) -> str:
    """A section title as the text format writes it: single spaces, no leading ``#`` (case is kept)."""
    cleaned = " ".join(title.lstrip("#").split())
    if not cleaned:
        raise ValueError("a section title must not be empty")
    return cleaned


def section_key(title: str) -> str:
    """The snake_case key of a section (``STRATEGIES AND HARD RULES`` → ``strategies_and_hard_rules``)."""
    return re.sub(r"[^0-9a-z]+", "_", title.lower()).strip("_")


def default_prefix(title: str) -> str:
    """The prefix of a section nobody named: the AppWorld one, else the initials of its words."""
    title = normalise_section(title)
    known = APPWORLD_PREFIXES.get(title.upper())
    if known is not None:
        return known
    words = re.findall(r"[A-Za-z]+", title)
    initials = "".join(word[0] for word in words).lower()[:4]
    return initials or "sec"


class Bullet(BaseModel):
    """One piece of advice. ``content`` is the text the Generator sees; counters are verdicts."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    section: str
    content: str
    helpful: int = Field(default=0, ge=0)
    harmful: int = Field(default=0, ge=0)
    neutral: int = Field(default=0, ge=0)
    created_at: datetime = Field(default_factory=now)
    updated_at: datetime = Field(default_factory=now)

    @field_validator("id")
    @classmethod
    def _check_id(cls, value: str) -> str:
        if not BULLET_ID.match(value):
            raise ValueError(f"bullet id {value!r} is not '<prefix>-<5 digits>' (e.g. 'shr-00001')")
        return value

    @field_validator("section")
    @classmethod
    def _check_section(cls, value: str) -> str:
        return normalise_section(value)

    @field_validator("content")
    @classmethod
    def _check_content(cls, value: str) -> str:
        lines = [line.rstrip() for line in value.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
        value = "\n".join(line for line in lines if line.strip()).strip()
        if not value:
            raise ValueError("a bullet's content must not be empty")
        for line in value.split("\n")[1:]:
            if _STRUCTURAL.match(line.strip()):
                raise ValueError(f"a content line cannot look like a section header or a bullet: {line!r}")
        return value

    @property
    def prefix(self) -> str:
        return id_prefix(self.id)

    @property
    def counter(self) -> int:
        return id_counter(self.id)

    @property
    def confidence(self) -> float | None:
        """helpful / (helpful + harmful), or ``None`` before any verdict."""
        total = self.helpful + self.harmful
        return None if total == 0 else self.helpful / total


def id_prefix(bullet_id: str) -> str:
    match = BULLET_ID.match(bullet_id)
    if match is None:
        raise ValueError(f"bullet id {bullet_id!r} is not '<prefix>-<5 digits>'")
    return match.group(1)


def id_counter(bullet_id: str) -> int:
    match = BULLET_ID.match(bullet_id)
    if match is None:
        raise ValueError(f"bullet id {bullet_id!r} is not '<prefix>-<5 digits>'")
    return int(match.group(2))


def format_id(prefix: str, counter: int) -> str:
    return f"{prefix}-{counter:05d}"


class Playbook(BaseModel):
    """Bullets grouped by section, the sections in order (including empty ones), and the next id counter.

    ``Playbook(bullets=[...])`` builds one in memory; sections are taken from the bullets when not given.
    Bullet ids must be unique. The text form is :meth:`to_text` / :meth:`from_text`; the JSON form is
    pydantic's (``model_dump_json`` / ``model_validate_json``), which also keeps the neutral counters
    and timestamps the text format has no place for.
    """

    model_config = ConfigDict(extra="forbid")

    bullets: list[Bullet] = Field(default_factory=list)
    sections: list[str] = Field(default_factory=list)
    prefixes: dict[str, str] = Field(default_factory=dict)
    next_counter: int = Field(default=1, ge=1)

    _by_id: dict[str, Bullet] = PrivateAttr(default_factory=dict)

    @model_validator(mode="after")
    def _index(self) -> Self:
        self.sections = _unique(normalise_section(title) for title in self.sections)
        self.prefixes = {normalise_section(title): prefix for title, prefix in self.prefixes.items()}
        by_id: dict[str, Bullet] = {}
        for bullet in self.bullets:
            if bullet.id in by_id:
                raise ValueError(f"duplicate bullet id {bullet.id!r}")
            by_id[bullet.id] = bullet
            if bullet.section not in self.sections:
                self.sections.append(bullet.section)
            self.prefixes.setdefault(bullet.section, bullet.prefix)
            self.next_counter = max(self.next_counter, bullet.counter + 1)
        for title in self.sections:
            self.prefixes.setdefault(title, default_prefix(title))
        # bullets are kept grouped by section (stable), the order the text format writes them in
        place = {title: position for position, title in enumerate(self.sections)}
        self.bullets = sorted(self.bullets, key=lambda bullet: place[bullet.section])
        self._by_id = by_id
        return self

    def __len__(self) -> int:
        return len(self.bullets)

    def __iter__(self) -> Iterator[Bullet]:  # type: ignore[override]  # iterate bullets, not fields
        return iter(self.bullets)

    def __contains__(self, bullet_id: object) -> bool:
        return bullet_id in self._by_id

    def get(self, bullet_id: str) -> Bullet | None:
        return self._by_id.get(bullet_id)

    def in_section(self, title: str) -> list[Bullet]:
        title = normalise_section(title)
        return [bullet for bullet in self.bullets if bullet.section == title]

    def prefix_for(self, title: str) -> str:
        title = normalise_section(title)
        return self.prefixes.get(title) or default_prefix(title)

    def section_for_prefix(self, prefix: str) -> str:
        """The section whose bullets carry ``prefix`` (the AppWorld title for a known prefix)."""
        for title, known in self.prefixes.items():
            if known == prefix:
                return title
        return _PREFIX_TITLES.get(prefix, "OTHERS")

    def to_text(self) -> str:
        from kanawa.apps.ace.text_format import render_playbook

        return render_playbook(self)

    @classmethod
    def from_text(cls, text: str) -> Playbook:
        from kanawa.apps.ace.text_format import parse_playbook

        return parse_playbook(text)


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


__all__ = [
    "APPWORLD_PREFIXES",
    "BULLET_ID",
    "Bullet",
    "Playbook",
    "default_prefix",
    "format_id",
    "id_counter",
    "id_prefix",
    "normalise_section",
    "now",
    "section_key",
]
