"""Every command's ``--help``, rendered by the real CLI: flags are flags (no ``<bool>`` value column),
every option and argument says what it is for, and stated defaults are the real ones."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
import typer
import typer.main
from typer.core import TyperCommand, TyperGroup, TyperOption
from typer.testing import CliRunner

from kanawa.cli.app import app

runner = CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1", "TERM": "dumb"})


Command = TyperCommand | TyperGroup


def _commands(command: Command, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Command]]:
    yield path, command
    if isinstance(command, TyperGroup):
        for name, sub in sorted(command.commands.items()):
            yield from _commands(sub, (*path, name))


ROOT = typer.main.get_command(app)
assert isinstance(ROOT, TyperGroup)
COMMANDS = list(_commands(ROOT))
IDS = [" ".join(path) or "kanawa" for path, _ in COMMANDS]


def _help(path: tuple[str, ...]) -> str:
    result = runner.invoke(app, [*path, "--help"])
    assert result.exit_code == 0, result.output
    return result.output


def test_the_walk_covers_every_command() -> None:
    leaves = {" ".join(path) for path, command in COMMANDS if not isinstance(command, TyperGroup)}
    assert {"demo", "run", "serve", "worker", "trace show", "trace view", "smartao coach"} <= leaves
    assert {f"ace {name}" for name in ("import", "search", "generate", "adapt", "export", "demo")} <= leaves


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=IDS)
def test_no_help_line_shows_a_bool_metavar(path: tuple[str, ...], command: Command) -> None:
    text = _help(path)
    assert "<bool>" not in text
    flags = [
        p for p in command.get_params(typer.Context(command)) if isinstance(p, TyperOption) and p.is_flag
    ]
    assert flags, "every command has at least --help"
    for flag in flags:
        line = next(line for line in text.splitlines() if flag.opts[0] in line.split())
        assert "<" not in line, line  # no value column for a flag


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=IDS)
def test_every_option_and_argument_has_help(path: tuple[str, ...], command: Command) -> None:
    params = command.get_params(typer.Context(command))
    missing = [p.name for p in params if not (getattr(p, "help", None) or "").strip()]
    assert not missing, f"kanawa {' '.join(path)}: no help for {missing}"
    text = _help(path)
    for param in params:
        assert " ".join(str(param.help).split()[:3]) in " ".join(text.split())


def test_boolean_options_that_default_on_can_be_turned_off() -> None:
    for path, command in COMMANDS:
        for param in command.get_params(typer.Context(command)):
            if isinstance(param, TyperOption) and param.is_flag and param.default is True:
                assert param.secondary_opts, f"kanawa {' '.join(path)} {param.opts[0]} cannot be turned off"


def _default_shown(text: str, option: str) -> str:
    block = " ".join(text.split())
    found = re.search(re.escape(option) + r" .*?\[default: ([^\]]+)\]", block)
    assert found, block
    return found.group(1)


def test_ace_demo_help_states_its_real_default_no_dense() -> None:
    text = _help(("ace", "demo"))
    assert _default_shown(text, "--dense --no-dense") == "no-dense"
    assert "on by default" not in text
    ace = ROOT.commands["ace"]
    assert isinstance(ace, TyperGroup)
    dense = next(p for p in ace.commands["demo"].params if p.name == "dense")
    assert dense.default is False


@pytest.mark.parametrize("command", ["import", "search", "generate", "adapt"])
def test_ace_commands_state_their_real_default_dense(command: str) -> None:
    text = _help(("ace", command))
    assert _default_shown(text, "--dense --no-dense") == "dense"
    assert "off by default" not in text
