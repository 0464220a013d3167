"""The public ACE playbook text format, read and written exactly.

::

    ## STRATEGIES AND HARD RULES
    [shr-00001] helpful=3 harmful=0 :: Always paginate through every page of results.
    [shr-00002] Never guess an access token.          (the counter-less form: counters are 0)

    ## API USAGE PATTERNS
    [aup-00003] helpful=1 harmful=0 :: ...

Rules: a ``## `` line starts a section (its text is the title); a ``[id]`` line is a bullet; a non-blank
line that is neither continues the previous bullet's content (multi-line code snippets); blank lines
separate. A bullet before any header goes to the section its prefix names. Written text always carries
the counters, sections in playbook order, one blank line between sections, and a final newline, so
``render(parse(render(p)))`` is ``render(p)`` and ``parse(render(p))`` keeps every id, section, content
and counter of ``p`` (neutral counts and timestamps live only in the JSON form).
"""

from __future__ import annotations

import re
from typing import Final

from pydantic import ValidationError

from kanawa.apps.ace.playbook import BULLET_ID, Bullet, Playbook, id_prefix, normalise_section

_HEADER: Final = re.compile(r"^##(?!#)\s*(\S.*?)\s*$")
_BULLET: Final = re.compile(
    r"^\[(?P<id>[^\]\s]+)\]\s*(?:helpful=(?P<helpful>\d+)\s+harmful=(?P<harmful>\d+)\s*::\s?)?(?P<content>.*)$"
)


class PlaybookFormatError(ValueError):
    """The text is not a playbook; the message names the line."""


def is_structural_line(line: str) -> bool:
    """Whether ``line`` would start a section or a bullet (such a line cannot continue a bullet)."""
    stripped = line.strip()
    if _HEADER.match(stripped):
        return True
    match = _BULLET.match(stripped)
    return bool(match and BULLET_ID.match(match.group("id")))


def parse_playbook(text: str) -> Playbook:
    """Read the text format. Raises :class:`PlaybookFormatError` for a malformed id or an empty bullet."""
    sections: list[str] = []
    rows: list[dict[str, object]] = []
    current: str | None = None
    for number, raw in enumerate(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"), start=1):
        line = raw.strip()
        if not line:
            continue
        header = _HEADER.match(line)
        if header:
            current = normalise_section(header.group(1))
            if current not in sections:
                sections.append(current)
            continue
        bullet = _BULLET.match(line)
        if bullet and not BULLET_ID.match(bullet.group("id")) and not rows:
            raise PlaybookFormatError(
                f"line {number}: {bullet.group('id')!r} is not a bullet id like 'shr-00001'"
            )
        if bullet and BULLET_ID.match(bullet.group("id")):
            bullet_id = bullet.group("id")
            rows.append(
                {
                    "id": bullet_id,
                    "section": current,
                    "content": bullet.group("content"),
                    "helpful": int(bullet.group("helpful") or 0),
                    "harmful": int(bullet.group("harmful") or 0),
                    "line": number,
                }
            )
            continue
        if rows:
            rows[-1]["content"] = f"{rows[-1]['content']}\n{raw.rstrip()}"
        # text before the first bullet that is not a header (a title, a comment) is not playbook content
    playbook = Playbook(sections=sections)
    bullets: list[Bullet] = []
    for row in rows:
        section = row["section"]
        if section is None:
            section = playbook.section_for_prefix(id_prefix(str(row["id"])))
        content = str(row["content"]).strip()
        if not content:
            raise PlaybookFormatError(f"line {row['line']}: bullet {row['id']} has no content")
        bullets.append(
            Bullet(
                id=str(row["id"]),
                section=str(section),
                content=content,
                helpful=int(str(row["helpful"])),
                harmful=int(str(row["harmful"])),
            )
        )
    try:
        return Playbook(bullets=bullets, sections=sections)
    except ValidationError as exc:
        raise PlaybookFormatError("; ".join(str(error["msg"]) for error in exc.errors())) from None


def render_bullet(bullet: Bullet) -> str:
    """One bullet line (plus continuation lines for multi-line content)."""
    return f"[{bullet.id}] helpful={bullet.helpful} harmful={bullet.harmful} :: {bullet.content}"


def render_playbook(playbook: Playbook) -> str:
    """Write the text format (see the module docstring for the layout)."""
    blocks: list[str] = []
    for title in playbook.sections:
        lines = [f"## {title}"]
        lines.extend(render_bullet(bullet) for bullet in playbook.in_section(title))
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n" if blocks else ""


__all__ = ["PlaybookFormatError", "is_structural_line", "parse_playbook", "render_bullet", "render_playbook"]
