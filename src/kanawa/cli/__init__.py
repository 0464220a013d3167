"""The ``kanawa`` command-line interface; ``main`` is the console-script entry point."""

from kanawa.cli.app import app, main

__all__ = ["app", "main"]
