"""Lazy re-exports for package ``__init__`` modules.

A package lists ``name -> defining module``; a name is imported the first time it is read and then
cached in the package namespace. This is what keeps ``import kanawa`` (and ``kanawa.loop``,
``kanawa.trace``) from importing pydantic, the loop or any provider SDK up front.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, namespace: dict[str, Any], exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """Return the ``__getattr__`` and ``__dir__`` for ``package`` (whose globals are ``namespace``)."""

    def module_getattr(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def module_dir() -> list[str]:
        return sorted({*namespace, *exports})

    return module_getattr, module_dir
