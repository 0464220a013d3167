"""Every documented block runs as written (issue 19, part 4).

The blocks come from README.md, README.ja.md and every ``*.md`` under ``docs/`` (new pages are picked
up without touching this file); :mod:`tests.docs.blocks` says how they are read. Conventions:

- A ```` ```python ```` block without a marker is a **complete program**. It is written to a file in
  an empty temporary directory and run there with this interpreter, in its own process, as written.
  A block that names a provider (``openai:gpt-5``, ``anthropic:…``, ``gemini:…``) reaches a local
  server speaking that provider's wire protocol (:mod:`tests.docs.fake_providers`), chosen only with
  the variables a user sets (``OPENAI_BASE_URL``/``OPENAI_API_KEY``, ``ANTHROPIC_BASE_URL``/
  ``ANTHROPIC_API_KEY``, ``GOOGLE_GEMINI_BASE_URL``/``GEMINI_API_KEY``).
- ``<!-- fragment: examples/x.py -->`` before a block marks a **fragment**: the named file must exist
  and contain every code line of the fragment (comments aside). Only a fragment may use names it
  does not define.
- Shown output is written as ``# prints: <line>`` comments: what the block prints must be those lines,
  in order; ``...`` in a line stands for any text. A block without them may print anything.
- Every python block is clean under pyflakes (unused imports, redefinitions, undefined names …).
- Every fence names its language, shell blocks hold commands only (no ``$`` prompts), so they can be
  copied, and relative links in the pages point to files (and headings) that exist.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyflakes import api as pyflakes_api
from pyflakes import messages as pyflakes_messages
from pyflakes.reporter import Reporter

from tests.docs.blocks import (
    ROOT,
    Block,
    all_blocks,
    blocks_in,
    code_lines,
    documented_files,
    expected_prints,
    prints_match,
    python_blocks,
)
from tests.docs.fake_providers import FakeProviders, provider_env

BLOCKS = python_blocks()
COMPLETE = [b for b in BLOCKS if b.marker is None]
FRAGMENTS = [b for b in BLOCKS if b.fragment_of is not None]

_CLEARED = ("KANAWA_", "OPENAI_", "ANTHROPIC_", "GEMINI_", "GOOGLE_", "TRACE_OTLP")


@pytest.fixture(scope="module")
def providers() -> Iterator[FakeProviders]:
    with FakeProviders() as server:
        yield server


def _env(server: FakeProviders) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(_CLEARED)}
    env.update(provider_env(server))
    env["PYTHONPATH"] = ""
    return env


def test_the_collector_finds_blocks_in_every_documented_file() -> None:
    files = {b.path for b in BLOCKS}
    assert ROOT / "README.md" in files
    assert ROOT / "README.ja.md" in files
    assert any(p.parent == ROOT / "docs" for p in files)
    assert len(BLOCKS) >= 20


@pytest.mark.parametrize("block", BLOCKS, ids=lambda b: b.id)
def test_block_is_complete_or_names_its_example(block: Block) -> None:
    assert block.marker is None or block.fragment_of is not None, (
        f"{block.id}: unknown marker <!-- {block.marker} --> (a block is complete, or a "
        "<!-- fragment: examples/x.py -->)"
    )


@pytest.mark.parametrize("block", COMPLETE, ids=lambda b: b.id)
def test_complete_block_runs_and_prints_what_the_docs_show(
    block: Block, providers: FakeProviders, tmp_path: Path
) -> None:
    script = tmp_path / "block.py"
    script.write_text(block.code, encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, script.name],
        cwd=tmp_path,
        env=_env(providers),
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    assert proc.returncode == 0, f"{block.id} failed:\n{proc.stderr[-3000:]}"
    expected = expected_prints(block.code)
    if expected:
        actual = proc.stdout.rstrip("\n").splitlines()
        shown = "\n".join(expected)
        assert len(actual) == len(expected), f"{block.id} printed\n{proc.stdout}\nthe docs show\n{shown}"
        for want, got in zip(expected, actual, strict=True):
            assert prints_match(want, got), f"{block.id}: the docs show {want!r}, it printed {got!r}"


def test_every_fragment_is_part_of_the_example_it_names() -> None:
    problems = []
    for block in FRAGMENTS:
        assert block.fragment_of is not None
        if not (ROOT / block.fragment_of).is_file():
            problems.append(f"{block.id}: {block.fragment_of} does not exist")
        elif expected_prints(block.code):
            problems.append(f"{block.id}: a fragment cannot show output it never prints")
        elif missing := _missing_from_example(block):
            problems.append(f"{block.id}: lines not in {block.fragment_of}: {missing}")
    assert not problems, "\n".join(problems)


class _Collect(Reporter):
    def __init__(self) -> None:
        super().__init__(sys.stdout, sys.stderr)
        self.found: list[pyflakes_messages.Message] = []
        self.errors: list[str] = []

    def flake(self, message: pyflakes_messages.Message) -> None:
        self.found.append(message)

    def syntaxError(self, filename: str, msg: str, lineno: int, offset: int, text: str) -> None:  # noqa: N802
        self.errors.append(f"{filename}:{lineno}: {msg}")

    def unexpectedError(self, filename: str, msg: str) -> None:  # noqa: N802
        self.errors.append(f"{filename}: {msg}")


@pytest.mark.parametrize("block", BLOCKS, ids=lambda b: b.id)
def test_block_is_clean_under_pyflakes(block: Block) -> None:
    reporter = _Collect()
    pyflakes_api.check(block.code, block.id, reporter)
    allowed: tuple[type, ...] = (pyflakes_messages.UndefinedName,) if block.fragment_of else ()
    problems = [str(m) for m in reporter.found if not isinstance(m, allowed)]
    assert not reporter.errors, "\n".join(reporter.errors)
    assert not problems, "\n".join(problems)


def _bare_values(code: str) -> list[int]:
    """Lines of statements that are only a value (``result.output``, ``x[0]``): in a script they
    print nothing, so a comment beside one shows output the block never prints."""
    values = (ast.Name, ast.Attribute, ast.Subscript, ast.Compare, ast.BinOp)
    return [
        node.lineno
        for node in ast.walk(ast.parse(code))
        if isinstance(node, ast.Expr) and isinstance(node.value, values)
    ]


@pytest.mark.parametrize("block", BLOCKS, ids=lambda b: b.id)
def test_block_shows_output_only_through_print(block: Block) -> None:
    lines = _bare_values(block.code)
    assert not lines, f"{block.id}: value-only statements print nothing in a script (block lines {lines})"


def _missing_from_example(block: Block) -> list[str]:
    assert block.fragment_of is not None
    have = set(code_lines((ROOT / block.fragment_of).read_text(encoding="utf-8")))
    return [line for line in code_lines(block.code) if line not in have]


def test_a_fragment_is_checked_line_by_line_against_its_example() -> None:
    """A fragment whose lines are in the example passes (comments may differ); one line off fails."""
    page = ROOT / "README.md"
    good = "model = ScriptedLLM(  # the model\n    [\n"
    bad = "model = ScriptedLLM(\n    [\nagent.run('not in the file')\n"
    assert not _missing_from_example(Block(page, 1, "python", good, "fragment: examples/quickstart.py"))
    missing = _missing_from_example(Block(page, 1, "python", bad, "fragment: examples/quickstart.py"))
    assert missing == ["agent.run('not in the file')"]


def test_a_wrong_example_fails_the_checks() -> None:
    """The checks can fail: a shown output that differs, a value shown as if printed."""
    assert _bare_values("result = f()\nresult.output  # Answer(value=5)\nprint(result)\n") == [2]
    assert not prints_match("value=5 explanation=...", "value=49 explanation='x'")
    assert prints_match("value=5 explanation=...", "value=5 explanation='add(a=2, b=3) returned 5'")
    assert "x = undefined_name()" in code_lines("x = undefined_name()  # prints: 1\n")
    assert expected_prints("print(1)  # prints: 1\n# prints: two\n") == ["1", "two"]


@pytest.mark.parametrize("block", [b for b in all_blocks() if not b.is_python], ids=lambda b: b.id)
def test_other_blocks_name_their_language_and_shell_blocks_can_be_copied(block: Block) -> None:
    assert block.lang, f"{block.id}: a fence without a language (bash, text, json …)"
    if block.lang in ("bash", "sh", "shell", "console"):
        prompts = [line for line in block.code.splitlines() if line.lstrip().startswith("$ ")]
        assert not prompts, f"{block.id}: prompts make the block uncopyable: {prompts}"


_LINK = re.compile(r"(?<!!)\[[^\]]*\]\((?P<target>[^)\s]+)\)")


def _anchors(path: Path) -> set[str]:
    """GitHub-style heading anchors of a Markdown file."""
    out: set[str] = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            slug = re.sub(r"[^\w\- ]", "", title).replace(" ", "-")
            out.add(slug)
    return out


@pytest.mark.parametrize("page", documented_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_point_to_files_and_headings_that_exist(page: Path) -> None:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.DOTALL)
    broken = []
    for match in _LINK.finditer(text):
        target = match["target"]
        if re.match(r"^[a-z]+:", target):
            continue
        file_part, _, anchor = target.partition("#")
        dest = (page.parent / file_part).resolve() if file_part else page
        missing_anchor = bool(anchor) and dest.suffix == ".md" and anchor not in _anchors(dest)
        if not dest.exists() or missing_anchor:
            broken.append(target)
    assert not broken, f"{page.relative_to(ROOT)}: broken links {broken}"


def _section(text: str, heading: str) -> str:
    start = text.index(f"\n{heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else None]


@pytest.mark.parametrize("name", ["README.md", "README.ja.md"])
def test_the_readme_is_the_short_entry(name: str) -> None:
    """The two commands first, then install, a quickstart of at most 30 lines, and a map of the docs."""
    text = (ROOT / name).read_text(encoding="utf-8")
    lines = text.splitlines()
    assert lines[2] == "```bash"
    assert lines[3].startswith("make demo    # ")
    assert lines[4].startswith("make test    # ")
    install, quick, docs = (
        ("## Install", "## Quickstart", "## The documentation")
        if name == "README.md"
        else ("## インストール", "## クイックスタート", "## ドキュメント")
    )
    assert "pip install" in _section(text, install)
    quickstart = [b for b in blocks_in(ROOT / name) if b.is_python and f"\n{b.code}" in _section(text, quick)]
    assert len(quickstart) == 1
    assert len(quickstart[0].code.splitlines()) <= 30
    linked = set(re.findall(r"\]\(docs/([\w.-]+\.md)\)", _section(text, docs)))
    pages = {p.name for p in (ROOT / "docs").glob("*.md") if not p.name.endswith(".ja.md")}
    assert {"guide.md", "providers.md", "benchmarks.md"} <= linked
    assert ("server.md" if name == "README.md" else "server.ja.md") in linked
    assert linked <= pages | {p.name for p in (ROOT / "docs").glob("*.ja.md")}
    assert len(lines) <= 120, "the README is the short entry; long content goes to docs/"
