"""Tables that stay readable in the terminal they are printed to (80 columns by default).

rich shrinks every column of a table wider than the terminal, the one a reader looks rows up by too,
so ``openai:gpt-5-mini`` became ``openai:…``. A :class:`Column` says how much a column matters: the
*key* columns are never cut (their longest cell decides their width); a *wrapping* column folds its
text onto more lines; the others join in order of importance (lowest ``drop`` first) while they fit,
so at 80 columns the least important ones are left out. A caption names what was left out, so a
reader knows to widen the terminal.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from rich import box as boxes
from rich.console import Console, RenderableType
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

WRAP_FLOOR = 12
"""The fewest characters a wrapping column is squeezed to before a column is dropped instead."""


@dataclass(frozen=True, slots=True)
class Column:
    """One column. ``key``: never cut. ``wrap``: fold long text onto more lines. ``drop``: ``0`` keeps
    the column at any width; a higher number is dropped sooner when the table does not fit."""

    header: str
    justify: Literal["left", "right"] = "left"
    key: bool = False
    wrap: bool = False
    drop: int = 0
    style: str = ""


def fitted_table(
    console: Console,
    columns: Sequence[Column],
    rows: Sequence[Sequence[RenderableType]],
    **options: Any,
) -> Table:
    """A :class:`rich.table.Table` of ``rows`` (one cell per column) that fits ``console.width``,
    built with ``options`` (title, box, show_edge …). The columns that are never dropped come first;
    then each droppable one, the most important (lowest ``drop``) first, joins if it still fits. The
    key columns are kept whole even when nothing else fits."""
    natural = [_natural_width(console, column, [row[i] for row in rows]) for i, column in enumerate(columns)]
    kept = [i for i, column in enumerate(columns) if column.drop == 0]
    for i in sorted((i for i, c in enumerate(columns) if c.drop > 0), key=lambda i: (columns[i].drop, i)):
        if _needed(columns, natural, sorted([*kept, i]), options) <= console.width:
            kept = sorted([*kept, i])
    table = Table(**options)
    for i in kept:
        column = columns[i]
        table.add_column(
            column.header,
            justify=column.justify,
            style=column.style or None,
            no_wrap=not column.wrap,
            overflow="fold" if column.wrap else "ellipsis",
            min_width=natural[i] if column.key else None,
        )
    for row in rows:
        table.add_row(*(row[i] for i in kept))
    dropped = [columns[i].header for i in range(len(columns)) if i not in kept]
    if dropped:
        note = f"not shown at {console.width} columns: {', '.join(dropped)}"
        table.caption = f"{table.caption}\n{note}" if table.caption else note
        table.caption_style = "dim"
    return table


def _natural_width(console: Console, column: Column, cells: Sequence[RenderableType]) -> int:
    """The widest line among the header and the cells."""
    widths = [Text(column.header).cell_len]
    for cell in cells:
        if isinstance(cell, str):
            widths.extend(Text(line).cell_len for line in cell.splitlines() or [""])
        else:
            widths.append(Measurement.get(console, console.options, cell).maximum)
    return max(widths)


def _needed(
    columns: Sequence[Column], natural: Sequence[int], kept: Sequence[int], options: dict[str, Any]
) -> int:
    """The width the kept columns need: key and unwrapped columns whole, wrapping ones at least
    :data:`WRAP_FLOOR`, plus padding and rules."""
    content = sum(natural[i] if not columns[i].wrap else min(natural[i], WRAP_FLOOR) for i in kept)
    count = len(kept)
    padding = 2 * count - (0 if options.get("pad_edge", True) else 2)
    has_box = options.get("box", boxes.HEAVY_HEAD) is not None
    rules = (count - 1 + (2 if options.get("show_edge", True) else 0)) if has_box else 0
    return content + padding + rules


__all__ = ["WRAP_FLOOR", "Column", "fitted_table"]
