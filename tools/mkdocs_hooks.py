"""MkDocs hook: links from a docs page to repository files outside ``docs/``.

The pages in ``docs/`` are read in two places: on the code host, where ``../examples/budgets.py`` is a
working link, and in the built site, which holds only ``docs/``. Rather than lose such links to
``validation.links.not_found`` (a strict build would fail) or silence that check for every link, this
hook handles exactly the links that leave ``docs/``:

* the target must exist in the repository, else a warning fails ``mkdocs build --strict`` — a renamed
  example or benchmark report is caught like any broken link;
* with ``repo_url`` set in ``mkdocs.yml`` the link points at the file on the code host;
* without it the link becomes its text followed by the file's repository path in code style, so the
  reader still knows which file is meant and the site never carries a dead link.

Links inside fenced code blocks are left alone.
"""

from __future__ import annotations

import logging
import posixpath
import re
from pathlib import Path
from typing import Any

log = logging.getLogger("mkdocs.plugins.repo_links")

_LINK = re.compile(r"(?P<bang>!?)\[(?P<text>[^\]\n]*)\]\((?P<target>[^)\s]+)(?P<title>\s+\"[^\"]*\")?\)")
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
_FENCE = re.compile(r"^\s*(```|~~~)")


def repo_path(target: str, page_src: str) -> str | None:
    """The repository-relative path a link target names when it leaves ``docs/``, else ``None``.

    ``page_src`` is the page's path inside ``docs/`` (``budgets.md``, ``guide/tour.md``).
    """
    if target.startswith(("#", "/")) or _SCHEME.match(target):
        return None
    path = target.split("#", 1)[0].split("?", 1)[0]
    if not path:
        return None
    inside_docs = posixpath.normpath(posixpath.join(posixpath.dirname(page_src), path))
    if not inside_docs.startswith("../"):
        return None
    return posixpath.normpath(posixpath.join("docs", inside_docs))


def rewrite(markdown: str, page_src: str, repo_root: Path, repo_url: str | None) -> str:
    """``markdown`` with every link that leaves ``docs/`` checked and rewritten (see the module doc)."""
    out: list[str] = []
    in_fence = False
    for line in markdown.splitlines(keepends=True):
        if _FENCE.match(line):
            in_fence = not in_fence
        if in_fence or "](" not in line:
            out.append(line)
            continue
        out.append(_LINK.sub(lambda m: _replace(m, page_src, repo_root, repo_url), line))
    return "".join(out)


def _replace(match: re.Match[str], page_src: str, repo_root: Path, repo_url: str | None) -> str:
    target = match["target"]
    path = repo_path(target, page_src)
    if path is None:
        return match[0]
    if path.startswith("../") or not (repo_root / path).exists():
        log.warning("Doc file '%s' links to '%s', which is not a file of the repository", page_src, target)
        return match[0]
    if repo_url:
        anchor = "#" + target.split("#", 1)[1] if "#" in target else ""
        return f"{match['bang']}[{match['text']}]({repo_url.rstrip('/')}/blob/HEAD/{path}{anchor})"
    text = match["text"]
    if path in text.strip("`"):
        return f"`{path}`"
    return f"{text} (`{path}`)"


def on_page_markdown(markdown: str, *, page: Any, config: Any, files: Any) -> str:
    """MkDocs event: rewrite the page's links to repository files before it is rendered."""
    repo_root = Path(config["config_file_path"]).resolve().parent
    return rewrite(markdown, page.file.src_uri, repo_root, config.get("repo_url"))
