"""Dify's side of an agent strategy run: the request, and scripted answers to backwards invocations.

The model's *content* is scripted (a list of rounds: text, tool calls, an ``opaque_body``); everything
else is the real protocol — the plugin's backwards ``llm`` and ``tool`` invocations arrive on its stdout
and are answered on its stdin, chunk by chunk, as Dify's daemon does.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from tests.wire.dify_plugin import DifyPluginProcess, SessionResult

PROVIDER = "kanawa/openai_gpt5_responses/openai_gpt5"


@dataclass
class Round:
    """One scripted model answer."""

    text: str = ""
    calls: list[tuple[str, str, str]] = field(default_factory=list)  # (id, name, arguments)
    opaque: Any = None
    chunk: int = 5


def tool_entity(name: str, *, options: list[str] | None = None) -> dict[str, Any]:
    parameter: dict[str, Any] = {
        "name": "q",
        "label": {"en_US": "q"},
        "human_description": {"en_US": "query"},
        "type": "select" if options else "string",
        "form": "llm",
        "required": True,
        "llm_description": "what to look up",
    }
    if options:
        parameter["options"] = [{"value": o, "label": {"en_US": o}} for o in options]
    return {
        "identity": {"author": "t", "name": name, "label": {"en_US": name}, "provider": f"builtin_{name}"},
        "parameters": [parameter],
        "description": {"human": {"en_US": name}, "llm": f"The {name} tool"},
        "provider_type": "builtin",
        "runtime_parameters": {},
    }


class FakeDify:
    """Answers ``llm`` invocations from a script and ``tool`` invocations from handlers."""

    def __init__(
        self, rounds: list[Round], tools: dict[str, Callable[[dict[str, Any]], Any]] | None = None
    ) -> None:
        self.rounds = list(rounds)
        self.tools = tools or {}
        self.llm_requests: list[dict[str, Any]] = []
        self.tool_requests: list[dict[str, Any]] = []

    def __call__(self, invoke: dict[str, Any]) -> Iterator[dict[str, Any]]:
        request = invoke["request"]
        if invoke["type"] == "llm":
            self.llm_requests.append(request)
            yield from self._llm()
        elif invoke["type"] == "tool":
            self.tool_requests.append(request)
            handler = self.tools[request["tool"]]
            produced = handler(request["tool_parameters"])
            yield from produced if isinstance(produced, list) else [produced]
        else:
            raise ValueError(f"unexpected invocation {invoke['type']}")

    def _llm(self) -> Iterator[dict[str, Any]]:
        step = self.rounds.pop(0) if self.rounds else Round(text="(script exhausted)")
        pieces = [step.text[i : i + step.chunk] for i in range(0, len(step.text), step.chunk)]
        for piece in pieces:
            yield {
                "model": "gpt-5",
                "delta": {"index": 0, "message": {"role": "assistant", "content": piece}},
            }
        yield {"model": "gpt-5", "delta": {"index": 0, "message": None}}  # a chunk without message
        calls = [
            {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}
            for cid, name, args in step.calls
        ]
        final: dict[str, Any] = {"role": "assistant", "content": "", "tool_calls": calls}
        if step.opaque is not None:
            final["opaque_body"] = step.opaque
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        yield {"model": "gpt-5", "delta": {"index": 0, "message": final, "usage": usage}}


def text_tool(text: str) -> dict[str, Any]:
    return {"type": "text", "message": {"text": text}}


def run_strategy(
    plugin: DifyPluginProcess,
    dify: FakeDify,
    *,
    strategy: str = "gpt5_function_calling",
    tools: list[dict[str, Any]] | None = None,
    **params: Any,
) -> SessionResult:
    agent_params: dict[str, Any] = {
        "model": {
            "provider": PROVIDER,
            "model": "gpt-5",
            "model_type": "llm",
            "mode": "chat",
            "completion_params": {"reasoning_effort": "low"},
            "history_prompt_messages": [],
        },
        "tools": tools if tools is not None else [],
        "instruction": "You answer questions about kanawa.",
        "query": "What is kanawa?",
        "maximum_iterations": 6,
        "emit_intermediate_thoughts": True,
    }
    agent_params.update(params)
    return plugin.request(
        {
            "type": "agent_strategy",
            "action": "invoke_agent_strategy",
            "user_id": "user-1",
            "agent_strategy_provider": "gpt5_agent",
            "agent_strategy": strategy,
            "agent_strategy_params": agent_params,
        },
        on_invoke=dify,
    )


def texts(result: SessionResult) -> str:
    return "".join(m["message"]["text"] for m in result.stream if m["type"] == "text")


def logs(result: SessionResult) -> list[dict[str, Any]]:
    return [m["message"] for m in result.stream if m["type"] == "log"]


def metadata(result: SessionResult) -> dict[str, Any]:
    found = [m["message"]["json_object"] for m in result.stream if m["type"] == "json"]
    assert found, f"no execution_metadata; error={result.error}"
    assert result.stream[-1]["type"] == "json"
    return found[-1]["execution_metadata"]


def tool_outputs(request: dict[str, Any]) -> list[str]:
    return [m["content"] for m in request["prompt_messages"] if m["role"] == "tool"]


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
