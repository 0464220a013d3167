"""The CLI ends every run with its usage and cost (issue 8 part 4: "RunResult.cost and the CLI show
it"), and ``kanawa run --max-tokens/--max-cost`` put a TokenGuard on the run."""

from __future__ import annotations

import json
from pathlib import Path

import genai_prices
from typer.testing import CliRunner

from kanawa.cli import app
from kanawa.cli.render import render_cost
from tests.wire.server import WireServer, json_reply


def test_run_prints_usage_and_that_the_test_models_cost_is_unknown(runner: CliRunner, workdir: Path) -> None:
    result = runner.invoke(app, ["run", "-m", "test", "--no-trace", "hi"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[-2].startswith("tokens: ")
    assert lines[-1] == "cost unknown for test (no price in the table)"


def test_run_prints_the_cost_from_the_price_table(runner: CliRunner, workdir: Path) -> None:
    prices = workdir / "prices.json"
    prices.write_text(
        json.dumps({"as_of": "2030-01-01", "models": {"test": {"input": 1000.0, "output": 2000.0}}}),
        encoding="utf-8",
    )
    result = runner.invoke(
        app, ["run", "-m", "test", "--no-trace", "hi"], env={"KANAWA_PRICES": str(prices), "COLUMNS": "200"}
    )
    assert result.exit_code == 0, result.output
    usage_line, cost_line = result.output.splitlines()[-2:]
    prompt, completion = (int(usage_line.split()[i]) for i in (1, 4))
    expected = (prompt * 1000.0 + completion * 2000.0) / 1_000_000
    assert cost_line == f"cost: ${expected:.6f} · prices: override, as of 2030-01-01"


def test_demo_prints_usage_and_cost(runner: CliRunner, workdir: Path) -> None:
    result = runner.invoke(app, ["demo", "--no-trace"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    at = lines.index("cost unknown for test (no price in the table)")
    assert lines[at - 1].startswith("tokens: ")
    assert lines[at - 1].endswith("model requests")


def test_run_with_a_token_budget_stops_and_still_prints_what_was_spent(
    runner: CliRunner, workdir: Path
) -> None:
    result = runner.invoke(app, ["run", "-m", "test", "--no-trace", "--max-tokens", "20", "hi"])
    assert result.exit_code == 2
    assert (
        "guardrail 'token_guard' blocked the tool call: the session's token budget is spent" in result.stderr
    )
    assert "⚠ token_guard (tool_call, block)" in result.stdout
    assert "· 1 model request" in result.stdout
    assert "cost unknown for test" in result.stdout
    assert "→" not in result.stdout  # the tools the spending response asked for did not run


def test_run_with_a_money_budget_refuses_a_model_without_a_price(runner: CliRunner, workdir: Path) -> None:
    result = runner.invoke(app, ["run", "-m", "test", "--no-trace", "--max-cost", "0.01", "hi"])
    assert result.exit_code == 2
    assert "model 'test' has no price, so the money budget cannot be kept" in result.stderr


def test_render_cost() -> None:
    assert (
        render_cost(0.0012345, "gpt-5", source="genai-prices 0.2.3").plain
        == "cost: $0.001234 · prices: genai-prices 0.2.3"
    )
    assert render_cost(None, "my-model").plain == "cost unknown for my-model (no price in the table)"


def test_a_failed_run_on_a_model_without_a_price_prints_its_cost_as_unknown_never_zero(
    runner: CliRunner, workdir: Path, wire_server: WireServer
) -> None:
    """The provider refuses the one request: no tokens were counted, but what the request to a model
    without a price cost is not known, so the CLI does not print ``$0.000000``."""
    wire_server.enqueue(json_reply({"error": {"message": "no such model", "type": "invalid_request"}}, 400))
    env = {"OPENAI_BASE_URL": f"{wire_server.base_url}/v1", "OPENAI_API_KEY": "sk-test", "COLUMNS": "200"}
    result = runner.invoke(app, ["run", "-m", "openai:my-local-model", "--no-trace", "hi"], env=env)
    assert result.exit_code == 2
    assert len(wire_server.requests) == 1
    assert "· 1 model request" in result.stdout
    assert "cost unknown for my-local-model (no price in the table)" in result.stdout
    assert "$0" not in result.stdout


def test_a_failed_run_on_a_priced_model_costs_nothing(
    runner: CliRunner, workdir: Path, wire_server: WireServer
) -> None:
    wire_server.enqueue(json_reply({"error": {"message": "bad request", "type": "invalid_request"}}, 400))
    env = {"OPENAI_BASE_URL": f"{wire_server.base_url}/v1", "OPENAI_API_KEY": "sk-test", "COLUMNS": "200"}
    result = runner.invoke(app, ["run", "-m", "openai:gpt-5-mini", "--no-trace", "hi"], env=env)
    assert result.exit_code == 2
    assert (
        f"cost: $0.000000 · prices: genai-prices {genai_prices.__version__}" in result.stdout
    )  # a refused request is not billed


def test_a_money_budget_runs_gpt_5_2_and_the_cost_line_names_genai_prices(
    runner: CliRunner, workdir: Path, wire_server: WireServer
) -> None:
    from tests.llm.openai_responses.wire import USAGE, text_response

    wire_server.enqueue(text_response("hello", model="gpt-5.2-2025-12-11").sse())
    env = {"OPENAI_BASE_URL": f"{wire_server.base_url}/v1", "OPENAI_API_KEY": "sk-test", "COLUMNS": "200"}
    result = runner.invoke(
        app, ["run", "-m", "openai:gpt-5.2", "--no-trace", "--max-cost", "1", "hi"], env=env
    )
    assert result.exit_code == 0, result.output
    usage = genai_prices.Usage(
        input_tokens=USAGE["input_tokens"],
        cache_read_tokens=USAGE["input_tokens_details"]["cached_tokens"],
        output_tokens=USAGE["output_tokens"],
        output_reasoning_tokens=USAGE["output_tokens_details"]["reasoning_tokens"],
    )
    expected = float(genai_prices.calc_price(usage, "gpt-5.2", provider_id="openai").total_price)
    cost_line = result.stdout.splitlines()[-1]
    assert cost_line == f"cost: ${expected:.6f} · prices: genai-prices {genai_prices.__version__}"
