"""Both plugins chained as Dify chains them: the strategy's backwards ``llm`` invocations are relayed
to the model plugin's ``invoke_llm`` (as Dify's daemon relays them), which talks to a loopback server
speaking the Responses API. GPT-5 reasoning must survive from round 1 to round 2 (seed 001 §4.5)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.gpt5_agent_strategies.dify import metadata, run_strategy, text_tool, texts, tool_entity
from tests.llm.openai_responses.wire import ResponseScript
from tests.wire.dify_paths import plugin_dir, plugin_python
from tests.wire.dify_plugin import DifyPluginProcess
from tests.wire.server import WireServer


@pytest.fixture(scope="module")
def responses() -> Iterator[WireServer]:
    with WireServer() as server:
        yield server


@pytest.fixture(scope="module")
def model_plugin() -> Iterator[DifyPluginProcess]:
    with DifyPluginProcess(
        plugin_dir("openai_gpt5_responses"), python=plugin_python("openai_gpt5_responses")
    ) as process:
        yield process


class Relay:
    """Dify's daemon between the two plugins: ``llm`` → the model plugin, ``tool`` → a local answer."""

    def __init__(self, model_plugin: DifyPluginProcess, server: WireServer) -> None:
        self.model_plugin = model_plugin
        self.credentials = {"openai_api_key": "sk-e2e-key", "openai_api_base": server.base_url}

    def __call__(self, invoke: dict[str, Any]) -> Iterator[dict[str, Any]]:
        request = invoke["request"]
        if invoke["type"] == "tool":
            yield text_tool(f"weather in {request['tool_parameters']['q']}: sunny")
            return
        result = self.model_plugin.request(
            {
                "type": "model",
                "action": "invoke_llm",
                "user_id": "u",
                "provider": "openai_gpt5",
                "model_type": "llm",
                "model": request["model"],
                "credentials": self.credentials,
                "prompt_messages": request["prompt_messages"],
                "model_parameters": request["completion_params"],
                "stop": request["stop"],
                "tools": request["tools"],
                "stream": request["stream"],
            }
        )
        if result.error is not None:
            raise RuntimeError(result.error["message"])
        yield from result.stream


def test_reasoning_of_round_one_is_replayed_in_round_two(
    agent_plugin: DifyPluginProcess, model_plugin: DifyPluginProcess, responses: WireServer
) -> None:
    round_one = ResponseScript(response_id="resp_1").reasoning("Need the weather.", encrypted="gAAAA-round-1")
    round_one.function_call("weather", '{"q": "Tokyo"}', call_id="call_w")
    round_two = ResponseScript(response_id="resp_2").message("It is sunny in Tokyo.")
    responses.enqueue(round_one.completed().sse(), round_two.completed().sse())

    result = run_strategy(
        agent_plugin,
        Relay(model_plugin, responses),
        tools=[tool_entity("weather")],
        query="Weather in Tokyo?",
    )
    assert result.error is None, result.error
    assert texts(result).endswith("It is sunny in Tokyo.")
    assert "<think>\nNeed the weather.\n</think>" in texts(result)

    first, second = (r.json() for r in responses.requests)
    assert first["tools"][0]["name"] == "weather"
    assert first["reasoning"]["effort"] == "low"  # the strategy's model parameters reach the API
    assert "stop" not in first
    replayed = [item for item in second["input"] if item.get("type") == "reasoning"]
    assert [item["encrypted_content"] for item in replayed] == ["gAAAA-round-1"]
    kinds = [item.get("type") or item.get("role") for item in second["input"]]
    assert kinds == ["user", "reasoning", "function_call", "function_call_output"]
    assert second["input"][-1]["output"] == "weather in Tokyo: sunny"
    meta = metadata(result)
    assert meta["opaque_body_relayed"] is True
    assert meta["prompt_tokens"] == 240
