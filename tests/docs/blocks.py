"""Collect the fenced code blocks of the README files and every page under ``docs/``.

A ```` ```python ```` block is one of two kinds:

- **complete** (no marker): a program that runs as it stands — imports included, ``asyncio.run(main())``
  where it is async;
- **fragment**: the line right before the fence (blank lines between are allowed) is
  ``<!-- fragment: examples/some_file.py -->``, naming the complete example that contains the
  fragment's code lines.

Any other HTML comment right before a python fence is an error, so a block cannot be switched off by
a marker the test does not know. Shown output is a ``# prints: <line>`` comment: the block's stdout,
line by line, must match the ``# prints:`` comments in order (``...`` in one stands for any text).
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_FENCE = re.compile(r"^(?P<indent> *)(?P<fence>```+)\s*(?P<lang>[\w+-]*)[^`]*$")
"""An opening fence; the language is the first word of the info string (``python title="x.py"``)."""
_MARKER = re.compile(r"^<!--\s*(?P<body>.*?)\s*-->$")
_FRAGMENT = re.compile(r"^fragment:\s*(?P<path>\S+)$")
_PRINTS = re.compile(r"^#\s*prints:\s?(?P<text>.*)$")

PYTHON = ("python", "python3", "py")


def documented_files() -> list[Path]:
    """README.md, README.ja.md and every Markdown page under docs/ (new pages are picked up)."""
    pages = sorted((ROOT / "docs").rglob("*.md"))
    return [ROOT / "README.md", ROOT / "README.ja.md", *pages]


@dataclass(frozen=True)
class Block:
    """One fenced block: where it is, its language, its code and the marker before it."""

    path: Path
    line: int
    lang: str
    code: str
    marker: str | None

    @property
    def id(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"

    @property
    def fragment_of(self) -> str | None:
        match = _FRAGMENT.match(self.marker or "")
        return match["path"] if match else None

    @property
    def is_python(self) -> bool:
        return self.lang in PYTHON


def blocks_in(path: Path) -> Iterator[Block]:
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        opened = _FENCE.match(lines[i])
        if opened is None:
            i += 1
            continue
        indent, fence = len(opened["indent"]), opened["fence"]
        start = i
        body: list[str] = []
        i += 1
        while i < len(lines) and lines[i].strip() != fence:
            body.append(lines[i][indent:] if lines[i][:indent].strip() == "" else lines[i])
            i += 1
        i += 1
        marker = _marker_before(lines, start)
        yield Block(path, start + 1, opened["lang"], "\n".join(body) + "\n", marker)


def _marker_before(lines: list[str], fence_index: int) -> str | None:
    j = fence_index - 1
    while j >= 0 and not lines[j].strip():
        j -= 1
    match = _MARKER.match(lines[j].strip()) if j >= 0 else None
    return match["body"] if match else None


def all_blocks() -> list[Block]:
    return [block for path in documented_files() for block in blocks_in(path)]


def python_blocks() -> list[Block]:
    return [block for block in all_blocks() if block.is_python]


def _comments(code: str) -> list[tuple[int, str]]:
    """Comment tokens (line, text); a fragment may end inside an open bracket, so the tokens read
    before such an end are kept."""
    found: list[tuple[int, str]] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(code).readline):
            if tok.type == tokenize.COMMENT:
                found.append((tok.start[0], tok.string))
    except tokenize.TokenError:
        return found
    return found


def expected_prints(code: str) -> list[str]:
    """The ``# prints:`` lines, in order."""
    found = (_PRINTS.match(text) for _, text in _comments(code))
    return [match["text"].rstrip() for match in found if match]


def prints_match(expected: str, actual: str) -> bool:
    """``expected`` with ``...`` standing for any text matches the whole of ``actual``."""
    pattern = ".*".join(re.escape(piece) for piece in expected.split("..."))
    return re.fullmatch(pattern, actual.rstrip()) is not None


def code_lines(code: str) -> list[str]:
    """The block's lines without comments or surrounding blanks (a fragment's lines, for lookup)."""
    lines = code.splitlines()
    for number, text in _comments(code):
        line = lines[number - 1]
        cut = line.rfind(text)
        lines[number - 1] = line[:cut] if cut >= 0 else line
    return [line.strip() for line in lines if line.strip()]
