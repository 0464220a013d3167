"""``PromptBuilder``: the Generator's prompt from a template, the retrieved bullets and the query
(seed 004 "PromptBuilder", "プロンプトテンプレート形式", "テンプレートファイル不在").

Which template: ``<prompts_dir>/<dataset>.txt`` if it exists, else ``<prompts_dir>/default.txt``, else
the same two names among the templates shipped with kanawa (package data under
``kanawa/apps/ace/prompts/generator/``), else :data:`FALLBACK_TEMPLATE`. So a user directory overrides
the shipped templates file by file, and a missing file never stops a run.

Templates use ``str.format`` placeholders ``{context}`` and ``{query}`` (literal braces are doubled).
Only the template is formatted: the bullets and the query are substituted as values, so braces inside
them (code snippets, JSON) are kept verbatim and cannot break formatting (Property 3).
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Final

from kanawa.apps.ace.playbook import Bullet

FALLBACK_TEMPLATE: Final = (
    "Use the knowledge base below to answer the task.\n\n"
    "## Knowledge base\n{context}\n\n## Task\n{query}\n\n"
    'Answer with JSON: {{"reasoning": [...], "bullet_ids": [...], "final_answer": "..."}}\n'
)
"""The built-in template used when neither the dataset's nor the default template file exists."""

_ALLOWED: Final = frozenset({"context", "query"})


class TemplateError(ValueError):
    """A template uses a placeholder other than ``{context}`` / ``{query}`` or has unbalanced braces."""


class PromptBuilder:
    """Loads templates (cached per dataset) and fills them.

    Args:
        prompts_dir: the user directory searched first (the seed's ``prompts/generator``); ``None``
            uses only the shipped templates.
    """

    def __init__(self, prompts_dir: str | Path | None = "prompts/generator") -> None:
        self.prompts_dir = Path(prompts_dir) if prompts_dir is not None else None
        self._cache: dict[str, str] = {}

    def build(self, query: str, bullets: Sequence[Bullet], dataset: str) -> str:
        """The prompt for ``query`` with ``bullets`` as the context, in ``dataset``'s template."""
        return render(self._load_template(dataset), context=format_context(bullets), query=query)

    def _load_template(self, dataset: str) -> str:
        """The dataset's template, else the default one, else :data:`FALLBACK_TEMPLATE` (cached)."""
        cached = self._cache.get(dataset)
        if cached is not None:
            return cached
        template = self._find(dataset)
        check_template(template)
        self._cache[dataset] = template
        return template

    def template_source(self, dataset: str) -> str:
        """Where ``dataset``'s template comes from: a path, ``package:<name>`` or ``fallback``."""
        for name in _names(dataset):
            if self.prompts_dir is not None and (self.prompts_dir / name).is_file():
                return str(self.prompts_dir / name)
        for name in _names(dataset):
            if _shipped(name) is not None:
                return f"package:{name}"
        return "fallback"

    def _find(self, dataset: str) -> str:
        for name in _names(dataset):
            if self.prompts_dir is not None:
                path = self.prompts_dir / name
                if path.is_file():
                    return path.read_text(encoding="utf-8")
        for name in _names(dataset):
            shipped = _shipped(name)
            if shipped is not None:
                return shipped
        return FALLBACK_TEMPLATE


def _names(dataset: str) -> list[str]:
    names = []
    if dataset and "/" not in dataset and "\\" not in dataset and not dataset.startswith("."):
        names.append(f"{dataset}.txt")
    names.append("default.txt")
    return names


def _shipped(name: str) -> str | None:
    resource = resources.files("kanawa.apps.ace").joinpath("prompts", "generator", name)
    return resource.read_text(encoding="utf-8") if resource.is_file() else None


def format_context(bullets: Sequence[Bullet]) -> str:
    """The seed's ``{context}``: one bullet per line, ``[id] content``, in retrieval order."""
    return "\n".join(f"[{bullet.id}] {bullet.content}" for bullet in bullets)


def check_template(template: str) -> None:
    """Raise :class:`TemplateError` unless ``template`` formats with exactly ``context`` and ``query``."""
    try:
        fields = {
            name for _text, name, _spec, _conv in string.Formatter().parse(template) if name is not None
        }
    except ValueError as exc:
        raise TemplateError(f"prompt template does not parse: {exc}") from None
    unknown = fields - _ALLOWED
    if unknown:
        raise TemplateError(
            f"prompt template uses unknown placeholders: {sorted(unknown)}; use {{context}}, {{query}}"
        )


def render(template: str, *, context: str, query: str) -> str:
    """``template.format(context=…, query=…)``; values are inserted as they are (braces included)."""
    return template.format(context=context, query=query)


__all__ = [
    "FALLBACK_TEMPLATE",
    "PromptBuilder",
    "TemplateError",
    "check_template",
    "format_context",
    "render",
]
