"""Griffe extension for the API reference: Sphinx roles in kanawa's docstrings become links.

kanawa's docstrings are Google style, but name other objects the Sphinx way —
``:class:`~kanawa.tools.Tool```, ``:func:`mask```, ``:mod:`.limits``` — which the code host and
``help()`` show readably and Markdown would show as a stray ``:class:`` before the name. Before
mkdocstrings renders a docstring, each role becomes a code span that links to the object's entry in
the reference:

* the name is resolved in the scope of the object whose docstring it is (``Tool`` in ``kanawa.tools``
  is ``kanawa.tools.base.Tool``; ``.auth`` in ``kanawa.server.http`` is ``kanawa.server.http.auth``);
* ``~`` shows the last component only, as in Sphinx;
* the link is optional: a name the reference does not document (a private helper, a module without a
  page) is shown as code without a link instead of failing the strict build.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(
    r":(?:py:)?(?:class|func|meth|mod|data|attr|exc|obj|const|type):`(?P<tilde>~?)(?P<name>[\w.]+)`"
)


def qualify(name: str, obj: griffe.Object) -> str:
    """The full dotted path ``name`` means in ``obj``'s docstring (``name`` itself when unknown)."""
    if name.startswith("."):
        package = obj.module if obj.module.is_init_module else obj.module.parent
        return f"{package.path if package else obj.module.path}{name}"
    head, _, rest = name.partition(".")
    try:
        resolved = obj.resolve(head)
    except (griffe.NameResolutionError, LookupError):
        return name
    return f"{resolved}.{rest}" if rest else resolved


def link_roles(text: str, obj: griffe.Object) -> str:
    """``text`` with each Sphinx role replaced by an optional cross-reference (see the module doc)."""

    def replace(match: re.Match[str]) -> str:
        name = match["name"]
        title = name.lstrip(".").rsplit(".", 1)[-1] if match["tilde"] else name
        return f'<autoref identifier="{qualify(name, obj)}" optional>`{title}`</autoref>'

    return _ROLE.sub(replace, text)


class SphinxRoles(griffe.Extension):
    """Rewrites the roles of every docstring of a package once it is loaded."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        """Griffe event: the whole package is loaded, so every name can be resolved."""
        _rewrite(pkg, set())


def _rewrite(obj: griffe.Object, seen: set[str]) -> None:
    if obj.path in seen:
        return
    seen.add(obj.path)
    if obj.docstring is not None and ":" in obj.docstring.value:
        obj.docstring.value = link_roles(obj.docstring.value, obj)
    for member in obj.members.values():
        if not member.is_alias:
            _rewrite(member, seen)  # type: ignore[arg-type]
