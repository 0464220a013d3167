"""How ``kanawa --help`` shows on/off options: as flags, with no ``<bool>`` value column.

typer's rich help prints a type label (``<str>``, ``<int>``, ``<path>``) beside every option, flags
included, so ``--json``, ``--dense/--no-dense`` and ``--help`` read as if they took a ``<bool>`` value.
They take none. The group and command classes here blank that label for flags only (an empty
metavar: click never shows a flag's metavar anywhere else), so options that take a value keep theirs.

Every ``typer.Typer`` of the CLI uses ``cls=KanawaGroup`` and every command ``cls=KanawaCommand``;
a test renders every command's help and holds them to it. This module lives outside
:mod:`kanawa.cli` so that the SmartAO command group can import it without importing the whole CLI.
"""

from __future__ import annotations

from typing import Any

from typer.core import TyperCommand, TyperGroup, TyperOption


def _flags_without_metavar(params: list[Any]) -> list[Any]:
    for param in params:
        if isinstance(param, TyperOption) and param.is_flag and param.metavar is None:
            param.metavar = ""
    return params


class KanawaCommand(TyperCommand):
    """A typer command whose flags show no value column in ``--help``."""

    def get_params(self, ctx: Any) -> list[Any]:
        return _flags_without_metavar(super().get_params(ctx))


class KanawaGroup(TyperGroup):
    """A typer group whose own flags (``--version``, ``--help``) show no value column in ``--help``."""

    def get_params(self, ctx: Any) -> list[Any]:
        return _flags_without_metavar(super().get_params(ctx))


__all__ = ["KanawaCommand", "KanawaGroup"]
