"""What the Dify plugin protocol adds: one ``invoke_llm`` through the model plugin vs the same call
made directly with kanawa's blocking Responses client, and a two-round agent strategy run.

A loopback server (tests/wire/server.py) answers every Responses request with the same short streamed
reply. The plugin runs as Dify's daemon runs it (``python -m main``, INSTALL_METHOD=local, JSON lines on
stdin/stdout); the strategy's backwards invocations are answered by a scripted host. Requests alternate
between the systems in one run so machine noise hits both alike.

Usage: ``python bench/dify_plugin_overhead.py`` (writes bench/results/dify_plugin_overhead.{json,md}).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from _common import machine, summary_ms, write_results  # noqa: E402
from tests.gpt5_agent_strategies.dify import FakeDify, Round, run_strategy, text_tool, tool_entity  # noqa: E402
from tests.llm.openai_responses.wire import text_response  # noqa: E402
from tests.wire.dify_paths import plugin_dir  # noqa: E402
from tests.wire.dify_plugin import DifyPluginProcess  # noqa: E402
from tests.wire.server import WireServer  # noqa: E402

from kanawa.llm.openai.credentials import OpenAICredentials  # noqa: E402
from kanawa.llm.openai.responses_sync import OpenAIResponsesSyncClient  # noqa: E402
from kanawa.types import UserMessage  # noqa: E402

REQUESTS = 60
AGENT_RUNS = 20
TEXT = "kanawa answers through the Dify plugin protocol. " * 4


def main() -> None:
    with WireServer() as server:
        server.default = lambda _request: text_response(TEXT, chunk=16).sse()
        credentials = {"openai_api_key": "sk-bench", "openai_api_base": server.base_url}
        request = {
            "type": "model",
            "action": "invoke_llm",
            "user_id": "bench",
            "provider": "openai_gpt5",
            "model_type": "llm",
            "model": "gpt-5",
            "credentials": credentials,
            "prompt_messages": [{"role": "user", "content": "hi"}],
            "model_parameters": {},
            "stop": None,
            "tools": None,
            "stream": True,
        }
        plugin_times: list[float] = []
        direct_times: list[float] = []
        agent_times: list[float] = []
        with (
            DifyPluginProcess(plugin_dir("openai_gpt5_responses")) as model_plugin,
            DifyPluginProcess(plugin_dir("gpt5_agent_strategies")) as agent_plugin,
            OpenAIResponsesSyncClient(OpenAICredentials.from_dict(credentials)) as client,
        ):
            model_plugin.request(request)  # warm-up: imports, first connection
            list(client.stream("gpt-5", [UserMessage("hi")]))
            for _ in range(REQUESTS):
                started = time.perf_counter()
                result = model_plugin.request(request)
                plugin_times.append(time.perf_counter() - started)
                assert result.error is None, result.error
                started = time.perf_counter()
                list(client.stream("gpt-5", [UserMessage("hi")]))
                direct_times.append(time.perf_counter() - started)
            for _ in range(AGENT_RUNS + 1):
                dify = FakeDify(
                    [Round("Checking.", calls=[("c1", "lookup", '{"q": "x"}')]), Round("Done.")],
                    tools={"lookup": lambda p: text_tool("fact")},
                )
                started = time.perf_counter()
                outcome = run_strategy(agent_plugin, dify, tools=[tool_entity("lookup")])
                agent_times.append(time.perf_counter() - started)
                assert outcome.error is None, outcome.error
            agent_times = agent_times[1:]  # the first run pays the imports
    data = {
        "machine": machine(),
        "kanawa_plugin_invoke_llm": summary_ms(plugin_times),
        "kanawa_sync_client_direct": summary_ms(direct_times),
        "kanawa_agent_strategy_two_rounds": summary_ms(agent_times),
    }
    p, d, a = (
        data[k]
        for k in ("kanawa_plugin_invoke_llm", "kanawa_sync_client_direct", "kanawa_agent_strategy_two_rounds")
    )
    table = (
        "| Dify plugin protocol (loopback Responses server, one streamed reply) | median | p90 | n |\n"
        "|---|---:|---:|---:|\n"
        f"| `invoke_llm` through `openai_gpt5_responses` (stdio JSON lines) | {p['median_ms']:.2f} ms | {p['p90_ms']:.2f} ms | {p['n']} |\n"
        f"| the same call with kanawa's blocking client directly | {d['median_ms']:.2f} ms | {d['p90_ms']:.2f} ms | {d['n']} |\n"
        f"| `gpt5_function_calling`, 2 rounds + 1 tool call, host answered on stdin | {a['median_ms']:.2f} ms | {a['p90_ms']:.2f} ms | {a['n']} |\n"
    )
    write_results("dify_plugin_overhead", data, table)


if __name__ == "__main__":
    main()
