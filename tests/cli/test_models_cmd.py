"""``kanawa models``: every catalogue model with its window and prices, and where the prices come from."""

from __future__ import annotations

import json
from pathlib import Path

import genai_prices
import pytest
from typer.testing import CliRunner

from kanawa.cli.app import app
from kanawa.llm.catalogue import catalogue
from kanawa.llm.pricing import LIBRARY_TABLE
from kanawa.types import Usage

runner = CliRunner(env={"COLUMNS": "250", "NO_COLOR": "1", "TERM": "dumb"})


@pytest.fixture(autouse=True)
def _library_prices_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KANAWA_PRICES", raising=False)


def _row(output: str, model: str) -> list[str]:
    line = next(line for line in output.splitlines() if line.split("│")[0].strip() == model)
    return [cell.strip() for cell in line.split("│")]


def test_lists_every_catalogue_model_with_its_prices_and_their_source() -> None:
    result = runner.invoke(app, ["models"])
    assert result.exit_code == 0, result.output
    assert f"prices: genai-prices {genai_prices.__version__} (bundled data, read offline)" in result.output
    assert f"catalogue: as of {catalogue().as_of}" in result.output
    for name, card in catalogue().cards.items():
        row = _row(result.output, f"{card.provider}:{name}")
        assert row[1] == f"{card.context_window:,}"
        assert row[-1] == f"genai-prices {genai_prices.__version__}"
    # the figures are the price table's: GPT-5.2 per million input, cached input and output tokens
    model = "openai:gpt-5.2"
    million = 1_000_000
    fresh = LIBRARY_TABLE.cost(model, Usage(input_tokens=million))
    cached = LIBRARY_TABLE.cost(model, Usage(input_tokens=million, cached_tokens=million))
    output = LIBRARY_TABLE.cost(model, Usage(output_tokens=million))
    assert _row(result.output, model)[3:7] == [
        f"${fresh:,.4g}",
        f"${cached:,.4g}",
        f"${fresh:,.4g}",
        f"${output:,.4g}",
    ]


def test_a_cache_write_costs_more_than_input_on_claude_and_an_unknown_model_has_no_price() -> None:
    result = runner.invoke(app, ["models", "anthropic:claude-opus-4-7", "my-local-llama"])
    assert result.exit_code == 0, result.output
    claude = _row(result.output, "anthropic:claude-opus-4-7")
    assert float(claude[5].lstrip("$")) > float(claude[3].lstrip("$"))  # write above input
    assert float(claude[4].lstrip("$")) < float(claude[3].lstrip("$"))  # read below input
    assert _row(result.output, "my-local-llama")[3:] == ["–", "–", "–", "–", "no price"]


def test_names_the_override_file_and_its_date(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(
        json.dumps({"as_of": "2030-01-01", "models": {"my-finetune": {"input": 2, "output": 8}}})
    )
    monkeypatch.setenv("KANAWA_PRICES", str(prices))
    result = runner.invoke(app, ["models", "my-finetune"])
    assert result.exit_code == 0, result.output
    assert "overrides from $KANAWA_PRICES, as of 2030-01-01; then genai-prices" in result.output
    assert _row(result.output, "my-finetune")[3:] == ["$2", "$2", "$2", "$8", "override, as of 2030-01-01"]
