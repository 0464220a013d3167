"""Every table the CLI prints keeps its key column whole at 80 columns (issue 31 part 7).

Each table is printed through the real command (``COLUMNS`` set the way a terminal sets it) at 80 and
at 120 columns: no line is wider than the terminal, every key cell is in its row whole, and what gave
way is named under the table. :func:`kanawa.cli.tables.fitted_table` is tested on its own too.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from pydantic import BaseModel
from rich.console import Console
from typer.testing import CliRunner

from kanawa.cli.app import app
from kanawa.cli.render import render_output
from kanawa.cli.tables import Column, fitted_table
from kanawa.llm.catalogue import catalogue

ROOT = Path(__file__).resolve().parents[2]
WIDTHS = (80, 120)


def _runner(width: int) -> CliRunner:
    return CliRunner(env={"COLUMNS": str(width), "NO_COLOR": "1", "TERM": "dumb", "KANAWA_PRICES": None})


def _rows(output: str) -> list[list[str]]:
    """The cells of every table row (``│`` separates cells; headers use ``┃``; edges dropped)."""
    rows = []
    for line in output.splitlines():
        if "│" not in line:
            continue
        cells = [cell.strip() for cell in line.strip().split("│")]
        rows.append(cells[1:-1] if line.strip().startswith("│") else cells)
    return rows


def _headers(output: str) -> list[str]:
    return [
        cell.strip()
        for line in output.splitlines()
        if "┃" in line
        for cell in line.split("┃")
        if cell.strip()
    ]


def _fits(output: str, width: int) -> None:
    wide = [line for line in output.splitlines() if len(line) > width]
    assert not wide, f"{len(wide)} lines wider than {width}: {wide[:2]}"


def _column(output: str, header: str, headers: list[str]) -> list[str]:
    """One column's cells, by header position."""
    return [row[headers.index(header)] for row in _rows(output) if len(row) == len(headers)]


@pytest.mark.parametrize("width", WIDTHS)
def test_models_keeps_every_model_name_whole(width: int) -> None:
    result = _runner(width).invoke(app, ["models"])
    assert result.exit_code == 0, result.output
    _fits(result.output, width)
    names = {f"{card.provider}:{name}" for name, card in catalogue().cards.items()}
    first_cells = {row[0] for row in _rows(result.output)}
    assert names <= first_cells, sorted(names - first_cells)[:5]
    headers = _headers(result.output)
    assert headers[:1] == ["model"]
    assert {"input", "output"} <= set(headers)
    if width == 80:
        assert "price from" not in headers
        assert "not shown at 80 columns: max out, cache write, price from" in result.output
    else:
        assert headers == [
            "model",
            "window",
            "max out",
            "input",
            "cache read",
            "cache write",
            "output",
            "price from",
        ]
        assert "not shown" not in result.output


@pytest.fixture(scope="module")
def demo_trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One trace of the offline demo (tool calls, model calls, three steps)."""
    directory = tmp_path_factory.mktemp("trace")
    env = {"KANAWA_TRACE_DIR": str(directory), "COLUMNS": "200", "NO_COLOR": "1"}
    result = CliRunner(env=env).invoke(app, ["demo"])
    assert result.exit_code == 0, result.output
    (trace,) = directory.glob("*.jsonl")
    return trace


@pytest.mark.parametrize("width", WIDTHS)
def test_trace_show_keeps_events_agents_and_tools_whole(width: int, demo_trace: Path) -> None:
    result = _runner(width).invoke(app, ["trace", "show", str(demo_trace)])
    assert result.exit_code == 0, result.output
    _fits(result.output, width)
    timeline = result.output.split("Steps")[0]
    headers = _headers(timeline)
    events = _column(timeline, "event", headers)
    assert {"agent_start", "llm_start", "llm_end", "tool_start", "tool_end", "agent_end"} <= set(events)
    assert {"calculator", "current_time", "read_file", "test"} <= set(
        _column(timeline, "tool / model", headers)
    )
    assert set(_column(timeline, "agent", headers)) == {"demo"}
    steps = result.output.split("Steps")[1]
    step_headers = _headers(steps)
    assert step_headers[:3] == ["run", "agent", "step"]
    assert all(len(run) == 12 for run in _column(steps, "run", step_headers))  # the run id's 12 characters
    if width == 80:
        # which columns give way depends on how wide the run's timings print (a loaded machine's
        # durations are longer); only droppable ones do, and the caption names them
        (note,) = [line for line in timeline.splitlines() if "not shown at 80 columns:" in line]
        dropped = {name.strip() for name in note.split("columns:")[1].split(",")}
        assert dropped
        assert dropped <= {"+time", "step", "duration", "tokens p/c", "status"}
        assert not dropped & set(headers)
    else:
        assert "tokens p/c" in headers
        assert "not shown" not in result.output


def _import_sample(store: Path) -> None:
    env = {"KANAWA_ACE_STORE": str(store), "COLUMNS": "200", "NO_COLOR": "1"}
    sample = str(ROOT / "examples" / "ace" / "playbook.txt")
    result = CliRunner(env=env).invoke(app, ["ace", "import", sample, "--dataset", "appworld", "--no-dense"])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("width", WIDTHS)
def test_ace_search_keeps_ranks_and_bullet_ids_whole_and_wraps_the_text(width: int, tmp_path: Path) -> None:
    _import_sample(tmp_path / "playbooks")
    runner = CliRunner(
        env={"KANAWA_ACE_STORE": str(tmp_path / "playbooks"), "COLUMNS": str(width), "NO_COLOR": "1"}
    )
    result = runner.invoke(
        app, ["ace", "search", "API rate limit Retry-After", "-d", "appworld", "--no-dense"]
    )
    assert result.exit_code == 0, result.output
    _fits(result.output, width)
    headers = _headers(result.output)
    ids = [cell for cell in _column(result.output, "id", headers) if cell]
    assert ids
    assert all(len(cell) == len("api-00005") and cell[3] == "-" for cell in ids)
    assert "api-00005" in ids
    text = "".join(_column(result.output, "bullet", headers))
    assert "Retry-After" in text  # the bullet's text wraps onto more lines, nothing cut
    assert headers == ["#", "id", "score", "why it matched", "bullet"]


@pytest.mark.parametrize("width", WIDTHS)
def test_ace_adapt_table_fits(width: int) -> None:
    """The adaptation report's table, from the same builder ``kanawa ace adapt`` and ``demo`` use."""
    from kanawa.cli.ace_actions import ADAPT_COLUMNS

    console = Console(width=width, file=io.StringIO(), color_system=None)
    rows = [
        ["1", "3/6 (50%)", "3", "4", "0", "0", "0", "5"],
        ["2", "6/6 (100%)", "0", "6", "0", "0", "0", "5"],
    ]
    console.print(fitted_table(console, ADAPT_COLUMNS, rows, title="offline adaptation of demo"))
    output = console.file.getvalue()  # type: ignore[attr-defined]
    _fits(output, width)
    assert _headers(output) == [
        "epoch",
        "accuracy",
        "ADD",
        "TAG",
        "UPDATE",
        "REMOVE",
        "MERGE",
        "bullets after",
    ]
    assert "6/6 (100%)" in output


class _Evaluation(BaseModel):
    admission_policy_alignment_reason: str
    score: int


@pytest.mark.parametrize("width", WIDTHS)
def test_a_structured_answer_keeps_its_field_names_whole(width: int) -> None:
    console = Console(width=width, file=io.StringIO(), color_system=None)
    reason = "The essay names the faculty's three policies and answers each with an episode. " * 3
    console.print(render_output(console, _Evaluation(admission_policy_alignment_reason=reason, score=4), ""))
    output = console.file.getvalue()  # type: ignore[attr-defined]
    _fits(output, width)
    rows = _rows(output)
    assert {"admission_policy_alignment_reason", "score"} <= {row[0] for row in rows}
    assert " ".join(" ".join(row[1] for row in rows).split()) == " ".join([*reason.split(), "4"])


@pytest.mark.parametrize("width", WIDTHS)
def test_the_help_keeps_command_names_whole(width: int) -> None:
    result = _runner(width).invoke(app, ["--help"])
    assert result.exit_code == 0, result.output
    _fits(result.output, width)
    listed = {
        row[0].split()[0]
        for row in (line.strip("│ ").split("  ") for line in result.output.splitlines())
        if row and row[0]
    }
    assert {"demo", "run", "serve", "models", "trace", "ace", "smartao"} <= listed


# --- fitted_table on its own -------------------------------------------------------------------


LONG = "anthropic:claude-sonnet-4-5-20250929@http://127.0.0.1:8080/v1"


def _render(width: int, columns: tuple[Column, ...], rows: list[list[str]]) -> str:
    console = Console(width=width, file=io.StringIO(), color_system=None)
    console.print(fitted_table(console, columns, rows))
    return console.file.getvalue()  # type: ignore[attr-defined]


def test_the_least_important_columns_go_first_and_a_smaller_one_still_joins_if_it_fits() -> None:
    columns = (
        Column("model", key=True),
        Column("input", "right", drop=1),
        Column("a very wide and unimportant column", drop=3),
        Column("out", "right", drop=2),
        Column("tiny", drop=4),
    )
    output = _render(90, columns, [[LONG, "$1.25", "x" * 34, "$10", "t"]])
    assert _headers(output) == ["model", "input", "out", "tiny"]
    assert LONG in output
    assert "not shown at 90 columns: a very wide and unimportant column" in output


def test_the_key_column_stays_whole_when_nothing_else_fits() -> None:
    columns = (Column("model", key=True), Column("input", "right", drop=1), Column("text", wrap=True))
    output = _render(len(LONG) + 4 + 16, columns, [[LONG, "$1.25", "some words that wrap " * 4]])
    assert LONG in output
    assert "input" not in _headers(output)
    assert "wrap" in output


def test_without_the_fitting_rich_would_cut_the_key() -> None:
    """The reason for all this: a plain rich table at 80 columns shortens the model name."""
    from rich.table import Table

    console = Console(width=80, file=io.StringIO(), color_system=None)
    table = Table()
    for header in (
        "model",
        "window",
        "max out",
        "input",
        "cache read",
        "cache write",
        "output",
        "price from",
    ):
        table.add_column(header)
    table.add_row(LONG, "400,000", "128,000", "$1.25", "$0.125", "$1.25", "$10", "genai-prices 0.2.3")
    console.print(table)
    assert LONG not in console.file.getvalue()  # type: ignore[attr-defined]
    assert LONG in _render(80, (Column("model", key=True), Column("window", drop=1)), [[LONG, "400,000"]])
