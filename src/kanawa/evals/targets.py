"""Resolving ``module:attr`` references (the CLI's ``--agent``, a dataset's ``python`` scorer).

Errors are one line that names what was asked for, never a traceback: a user typed the reference.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any


class TargetError(ValueError):
    """A ``module:attr`` reference that does not resolve."""


def import_object(reference: str) -> Any:
    """Import ``module:attr`` (``attr`` may be dotted); the working directory is importable, as for
    ``python -m``, so ``myapp:agent`` finds ``./myapp.py``."""
    module_name, sep, attr = reference.partition(":")
    if not sep or not module_name or not attr:
        raise TargetError(f"{reference!r} is not 'module:attribute' (e.g. myapp:agent)")
    cwd = str(Path.cwd())
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise TargetError(f"cannot import {module_name!r}: {exc}") from None
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise TargetError(f"{module_name!r} has no attribute {attr!r}") from None
    return obj


__all__ = ["TargetError", "import_object"]
