"""The documentation site's structure (mkdocs.yml, docs/) and its two build extensions.

The strict build itself (every link, anchor and docstring) runs as ``make docs-check``; these tests
catch in milliseconds what a newcomer to the site would trip on first — a page that exists but is not
in the navigation, a navigation entry whose page is gone, a Japanese page that is not Japanese — and
pin what the link hook and the docstring extension do.
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import griffe
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
sys.path.insert(0, str(ROOT / "tools"))

import griffe_roles  # noqa: E402
import mkdocs_hooks  # noqa: E402

# The pages README.ja.md covers, plus the home page and the quickstart: each has a Japanese version.
JAPANESE_PAGES = ["index", "quickstart", "budgets", "server", "ace", "smartao", "dify-plugins"]
_KANA = re.compile(r"[\u3040-\u30ff]")


def mkdocs_config() -> dict[str, object]:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    assert isinstance(config, dict)
    return config


def nav_entries(nav: object) -> Iterator[tuple[str | None, object]]:
    """(title, value) for every entry of a nav tree, sections included."""
    if isinstance(nav, list):
        for item in nav:
            yield from nav_entries(item)
    elif isinstance(nav, dict):
        for title, value in nav.items():
            yield title, value
            if not isinstance(value, str):
                yield from nav_entries(value)
    else:
        yield None, nav


def nav_pages() -> list[str]:
    return [value for _, value in nav_entries(mkdocs_config()["nav"]) if isinstance(value, str)]


def english_pages() -> set[str]:
    """Every page of the site: docs/**/*.md except the Japanese ``*.ja.md`` beside an English page."""
    return {
        path.relative_to(DOCS).as_posix() for path in DOCS.rglob("*.md") if not path.name.endswith(".ja.md")
    }


def test_nav_lists_every_page() -> None:
    missing = sorted(english_pages() - set(nav_pages()))
    assert not missing, f"add these pages to `nav` in mkdocs.yml: {missing}"


def test_nav_names_only_pages_that_exist() -> None:
    gone = sorted(page for page in nav_pages() if not (DOCS / page).is_file())
    assert not gone, f"mkdocs.yml nav names pages that are not in docs/: {gone}"
    assert len(nav_pages()) == len(set(nav_pages())), "a page is listed twice in nav"


def test_every_nav_section_has_a_japanese_title() -> None:
    (ja,) = [
        language
        for plugin in mkdocs_config()["plugins"]  # type: ignore[attr-defined]
        if isinstance(plugin, dict) and "i18n" in plugin
        for language in plugin["i18n"]["languages"]
        if language["locale"] == "ja"
    ]
    sections = {title for title, value in nav_entries(mkdocs_config()["nav"]) if isinstance(value, list)}
    untranslated = sorted(sections - set(ja["nav_translations"]))
    assert not untranslated, f"add Japanese nav_translations in mkdocs.yml for {untranslated}"


def test_japanese_pages_exist_beside_english_ones_and_are_japanese() -> None:
    assert not (DOCS / "ja").exists(), "a Japanese page is docs/<page>.ja.md beside docs/<page>.md"
    for name in JAPANESE_PAGES:
        assert (DOCS / f"{name}.ja.md").is_file(), f"docs/{name}.ja.md is missing"
    for path in DOCS.rglob("*.ja.md"):
        english = path.with_name(path.name.removesuffix(".ja.md") + ".md")
        assert english.is_file(), f"{path.name} has no English page {english.name} (the default language)"
        prose = re.sub(r"```.*?```|`[^`]*`", "", path.read_text(encoding="utf-8"), flags=re.DOTALL)
        assert len(_KANA.findall(prose)) > 200, f"{path.name} is not written in Japanese"


def test_every_reference_page_documents_a_module_of_the_package() -> None:
    for page in sorted((DOCS / "reference").glob("*.md")):
        for module in re.findall(r"^::: (\S+)$", page.read_text(encoding="utf-8"), flags=re.MULTILINE):
            path = ROOT / "src" / module.replace(".", "/")
            assert (path / "__init__.py").is_file() or path.with_suffix(".py").is_file(), (page.name, module)


def test_the_build_stays_offline() -> None:
    config = mkdocs_config()
    assert config["theme"]["font"] is False  # type: ignore[index]  # no Google Fonts request
    names = {next(iter(p)) if isinstance(p, dict) else p for p in config["plugins"]}  # type: ignore[attr-defined]
    assert not names & {"social", "privacy", "offline-downloads"}, "a plugin that downloads at build time"


# ------------------------------------------------------------------------------ the link hook


def test_a_link_out_of_docs_becomes_the_repository_path_without_repo_url() -> None:
    text = "See [examples/budgets.py](../examples/budgets.py) and [the tour](../README.md#install).\n"
    assert mkdocs_hooks.rewrite(text, "budgets.md", ROOT, None) == (
        "See `examples/budgets.py` and the tour (`README.md`).\n"
    )


def test_a_link_out_of_docs_points_at_the_code_host_with_repo_url() -> None:
    text = "[readme](../README.md#install)\n"
    assert mkdocs_hooks.rewrite(text, "guide/tour.md", ROOT, "https://example.org/kanawa/") == (
        "[readme](../README.md#install)\n"  # guide/../README.md is docs/README.md: inside docs/, untouched
    )
    assert mkdocs_hooks.rewrite(text, "budgets.md", ROOT, "https://example.org/kanawa/") == (
        "[readme](https://example.org/kanawa/blob/HEAD/README.md#install)\n"
    )


def test_links_inside_docs_elsewhere_and_in_code_blocks_are_left_alone() -> None:
    text = (
        "[server](server.md#load) [web](https://example.org/x) [top](#top)\n"
        "```\n[not a link](../examples/budgets.py)\n```\n"
    )
    assert mkdocs_hooks.rewrite(text, "budgets.md", ROOT, None) == text


def test_a_link_to_a_missing_repository_file_is_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    text = "[gone](../examples/no_such_example.py)\n"
    with caplog.at_level(logging.WARNING, logger="mkdocs.plugins.repo_links"):
        assert mkdocs_hooks.rewrite(text, "budgets.md", ROOT, None) == text
    assert "examples/no_such_example.py" in caplog.text


# ---------------------------------------------------------------------- the docstring extension


def test_sphinx_roles_become_optional_links_resolved_in_scope(tmp_path: Path) -> None:
    package = tmp_path / "demo_pkg"
    package.mkdir()
    (package / "__init__.py").write_text(
        '"""Uses :class:`Thing`, :func:`~demo_pkg.things.make`, :mod:`.things` and :class:`Unknown`."""\n'
        "from demo_pkg.things import Thing, make\n"
        '__all__ = ["Thing", "make"]\n'
    )
    (package / "things.py").write_text(
        "class Thing:\n"
        '    """See :meth:`Thing.use`."""\n'
        "    def use(self) -> None:\n"
        '        """Nothing."""\n'
        "def make() -> Thing:\n"
        '    """Make one."""\n'
        "    return Thing()\n"
    )
    loaded = griffe.load(
        "demo_pkg",
        search_paths=[str(tmp_path)],
        extensions=griffe.load_extensions(griffe_roles.SphinxRoles()),
    )
    assert loaded.docstring is not None
    assert loaded.docstring.value == (
        'Uses <autoref identifier="demo_pkg.things.Thing" optional>`Thing`</autoref>, '
        '<autoref identifier="demo_pkg.things.make" optional>`make`</autoref>, '
        '<autoref identifier="demo_pkg.things" optional>`.things`</autoref> and '
        '<autoref identifier="Unknown" optional>`Unknown`</autoref>.'
    )
    thing = loaded["things.Thing"]
    assert thing.docstring is not None
    assert thing.docstring.value == (
        'See <autoref identifier="demo_pkg.things.Thing.use" optional>`Thing.use`</autoref>.'
    )
