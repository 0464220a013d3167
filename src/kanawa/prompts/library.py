"""The prompt library: template id → text per language, with safe variable substitution (seed 002 §9-1).

Why :class:`string.Template` (``$name`` / ``${name}``) and not ``str.format``: prompts often show JSON
with braces, which ``str.format`` would misread, and ``str.format`` lets a template reach attributes
(``{x.__class__}``), which a template loaded from a user's file must not. ``$$`` is a literal ``$``.

Language lookup: ``lang`` is normalised (``"ja-JP"`` → ``"ja-jp"``); the library tries that tag, then its
primary subtag (``"ja"``), then English. A template id with no text in any of these is an error, as is
an id never registered.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from string import Template
from typing import Final

from kanawa.prompts._defaults import DEFAULT_TEMPLATES, LIST_SEPARATORS

__all__ = ["DEFAULT_PROMPTS", "FALLBACK_LANG", "PromptLibrary", "PromptTemplateError", "list_separator"]

FALLBACK_LANG: Final = "en"


class PromptTemplateError(KeyError):
    """An unknown template id, a missing variable, a malformed template or a write to a read-only library.

    A :class:`KeyError` so ``except KeyError`` keeps working; ``str()`` is the plain message (never the
    template text or variable values). ``variable`` names the missing variable when that is the cause.
    """

    def __init__(
        self, message: str, *, template_id: str, lang: str | None = None, variable: str | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.template_id = template_id
        self.lang = lang
        self.variable = variable

    def __str__(self) -> str:
        return self.message


def _normalise(lang: str) -> str:
    return lang.strip().lower().replace("_", "-")


def _candidates(lang: str) -> Iterator[str]:
    tag = _normalise(lang)
    yield tag
    primary = tag.partition("-")[0]
    if primary != tag:
        yield primary
    if FALLBACK_LANG not in (tag, primary):
        yield FALLBACK_LANG


def list_separator(lang: str) -> str:
    """How ``lang`` joins the items of a short list (``", "`` in English, ``"、"`` in Japanese)."""
    for candidate in _candidates(lang):
        separator = LIST_SEPARATORS.get(candidate)
        if separator is not None:
            return separator
    return LIST_SEPARATORS[FALLBACK_LANG]


class PromptLibrary:
    """Template id → language → :class:`string.Template`.

    Templates are checked and parsed once, at :meth:`register`, so :meth:`get` only substitutes.
    A read-only library (like :data:`DEFAULT_PROMPTS`) refuses :meth:`register`; :meth:`copy` gives a
    writable one to extend or override.
    """

    __slots__ = ("_read_only", "_templates")

    def __init__(
        self, *, templates: Mapping[str, Mapping[str, str]] | None = None, read_only: bool = False
    ) -> None:
        self._templates: dict[str, dict[str, Template]] = {}
        self._read_only = False
        for template_id, texts in (templates or {}).items():
            for lang, text in texts.items():
                self.register(template_id, text, lang=lang)
        self._read_only = read_only

    def register(self, template_id: str, text: str, *, lang: str = FALLBACK_LANG) -> None:
        """Add or replace the ``lang`` text of ``template_id``.

        Raises:
            PromptTemplateError: the library is read-only, the id or language is empty, or ``text`` has
                a ``$`` that starts no valid placeholder (write ``$$`` for a literal ``$``).
        """
        if self._read_only:
            raise PromptTemplateError(
                "this prompt library is read-only; register into its copy() instead",
                template_id=template_id,
                lang=lang,
            )
        tag = _normalise(lang)
        if not template_id or not tag:
            raise PromptTemplateError(
                "template id and language must be non-empty", template_id=template_id, lang=lang
            )
        template = Template(text)
        if not template.is_valid():
            raise PromptTemplateError(
                f"prompt template {template_id!r} ({tag}) has an invalid placeholder; "
                "write $$ for a literal dollar sign",
                template_id=template_id,
                lang=tag,
            )
        self._templates.setdefault(template_id, {})[tag] = template

    def _template(self, template_id: str, lang: str) -> tuple[str, Template]:
        texts = self._templates.get(template_id)
        if texts is None:
            raise PromptTemplateError(f"unknown prompt template {template_id!r}", template_id=template_id)
        for candidate in _candidates(lang):
            template = texts.get(candidate)
            if template is not None:
                return candidate, template
        raise PromptTemplateError(
            f"prompt template {template_id!r} has no text for {lang!r} or {FALLBACK_LANG!r} "
            f"(available: {', '.join(sorted(texts))})",
            template_id=template_id,
            lang=lang,
        )

    def get(self, template_id: str, /, *, lang: str = FALLBACK_LANG, **variables: object) -> str:
        """The text of ``template_id`` in ``lang`` (falling back to English) with variables filled in.

        Values are converted with ``str()`` and inserted verbatim (a ``$`` in a value is not expanded).
        Extra variables the template does not use are ignored.

        Raises:
            PromptTemplateError: unknown id, no text in ``lang`` nor English, or a variable the
                template uses was not given (``variable`` names it).
        """
        found_lang, template = self._template(template_id, lang)
        try:
            return template.substitute(variables)
        except KeyError as exc:
            name = str(exc.args[0]) if exc.args else ""
            raise PromptTemplateError(
                f"prompt template {template_id!r} ({found_lang}) needs the variable {name!r}",
                template_id=template_id,
                lang=found_lang,
                variable=name,
            ) from None

    def text(self, template_id: str, *, lang: str = FALLBACK_LANG) -> str:
        """The raw template text (placeholders unfilled), with the same language fallback as :meth:`get`."""
        return self._template(template_id, lang)[1].template

    def variables(self, template_id: str, *, lang: str = FALLBACK_LANG) -> tuple[str, ...]:
        """The variable names the template uses, in order of first appearance."""
        return tuple(self._template(template_id, lang)[1].get_identifiers())

    def ids(self) -> tuple[str, ...]:
        """Every registered template id, sorted."""
        return tuple(sorted(self._templates))

    def languages(self, template_id: str) -> tuple[str, ...]:
        """The languages ``template_id`` has its own text in, sorted (empty for an unknown id)."""
        return tuple(sorted(self._templates.get(template_id, {})))

    def copy(self) -> PromptLibrary:
        """A writable copy; changing it leaves this library untouched."""
        clone = PromptLibrary()
        clone._templates = {template_id: dict(texts) for template_id, texts in self._templates.items()}
        return clone

    def __contains__(self, template_id: object) -> bool:
        return template_id in self._templates

    def __len__(self) -> int:
        return len(self._templates)


DEFAULT_PROMPTS: Final = PromptLibrary(templates=DEFAULT_TEMPLATES, read_only=True)
"""The templates the agent loop uses, in ``en`` and ``ja``; read-only (use ``DEFAULT_PROMPTS.copy()``)."""
