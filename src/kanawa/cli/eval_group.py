"""The ``kanawa eval …`` command group; each command registers itself from its own module.

``eval_compare`` adds ``compare``; the runner's module adds ``run``. Keeping the group here, with no
commands of its own, lets the commands live in small modules that do not import each other.
"""

from __future__ import annotations

import typer

from kanawa._cli_help import KanawaGroup

eval_app = typer.Typer(
    cls=KanawaGroup,
    help="Evals: run a dataset against an agent, compare two runs.",
    no_args_is_help=True,
)
