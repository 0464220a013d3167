"""One loopback HTTP server that speaks the OpenAI Responses, Anthropic Messages and Gemini wire
protocols, for running documented blocks exactly as a user copies them.

A block names ``openai:gpt-5`` (or ``anthropic:…``, ``gemini:…``); the test points the provider SDKs
at this server only through the environment variables a user would set (:func:`provider_env`), so
the code that ran is the code in the docs. The transport is real (the official SDKs, real sockets,
JSON bodies or SSE streams as the request asks); only the model's *content* is made up, by one small
deterministic "model" (:func:`decide`) that every protocol shares:

1. asked for structured output → JSON that validates against the schema (numbers from the last tool
   result, strings naming what was called);
2. tools offered and none called since the user spoke → call the first offered tool, its numeric
   arguments taken from the numbers in the user's text, in order;
3. otherwise → text: ``The answer is <last tool result>.`` after a tool call, else
   ``You asked: <the user's text>``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from tests.llm.anthropic import wire as anthropic_wire
from tests.llm.gemini import wire as gemini_wire
from tests.llm.openai_responses.wire import ResponseScript
from tests.wire.server import RecordedRequest, Reply, WireServer, json_reply

SAMPLE_STRINGS = {"timezone": "Asia/Tokyo", "essay_id": "42"}
"""String arguments the made-up model cannot take from the user's words (a real model would infer them)."""


@dataclass
class Conversation:
    """What a request carries, in provider-neutral terms."""

    user_text: str = ""
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    results: list[str] = field(default_factory=list)
    tools: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    schema: dict[str, Any] | None = None
    all_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    all_results: list[str] = field(default_factory=list)

    def user_said(self, text: str) -> None:
        """A new user turn: ``calls`` and ``results`` restart (``all_*`` keep the whole conversation,
        for a structured answer asked for after the tool rounds)."""
        self.user_text = text
        self.all_calls.extend(self.calls)
        self.all_results.extend(self.results)
        self.calls = []
        self.results = []

    def everything(self) -> tuple[list[tuple[str, dict[str, Any]]], list[str]]:
        return self.all_calls + self.calls, self.all_results + self.results


@dataclass(frozen=True)
class Turn:
    """The model's answer: tool calls, or text."""

    calls: tuple[tuple[str, dict[str, Any]], ...] = ()
    text: str = ""


def _numbers(text: str) -> list[int]:
    return [int(n) for n in re.findall(r"-?\d+", text)]


def _number_from_results(conv: Conversation) -> int | None:
    for result in reversed(conv.everything()[1]):
        found = _numbers(result)
        if found:
            return found[-1]
    return None


def _arguments(schema: dict[str, Any], user_text: str) -> dict[str, Any]:
    numbers = iter(_numbers(user_text))
    properties: dict[str, Any] = schema.get("properties", {})
    args: dict[str, Any] = {}
    for name in schema.get("required", []):
        prop = properties.get(name, {})
        kind = prop.get("type")
        if "enum" in prop:
            args[name] = prop["enum"][0]
        elif kind in ("integer", "number"):
            args[name] = next(numbers, 1)
        elif kind == "boolean":
            args[name] = False
        elif kind == "array":
            args[name] = []
        elif kind == "object":
            args[name] = {}
        else:
            examples = prop.get("examples") or [SAMPLE_STRINGS.get(name, user_text)]
            args[name] = examples[0]
    return args


def _explanation(conv: Conversation) -> str:
    calls, results = conv.everything()
    if not calls:
        return f"answered without tools: {conv.user_text}"
    name, args = calls[-1]
    shown = ", ".join(f"{k}={v!r}" for k, v in args.items())
    return f"{name}({shown}) returned {results[-1] if results else 'nothing'}"


def _instance(schema: dict[str, Any], conv: Conversation, defs: dict[str, Any]) -> Any:
    if "$ref" in schema:
        return _instance(defs[schema["$ref"].rsplit("/", 1)[-1]], conv, defs)
    for key in ("anyOf", "oneOf"):
        if key in schema:
            options = [s for s in schema[key] if s.get("type") != "null"] or schema[key]
            return _instance(options[0], conv, defs)
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type", "object")
    if kind == "object":
        props: dict[str, Any] = schema.get("properties", {})
        return {name: _instance(sub, conv, defs) for name, sub in props.items()}
    if kind == "array":
        return []
    if kind == "integer":
        found = _number_from_results(conv)
        return found if found is not None else 0
    if kind == "number":
        found = _number_from_results(conv)
        return float(found) if found is not None else 0.5
    if kind == "boolean":
        return True
    return _explanation(conv)


def decide(conv: Conversation) -> Turn:
    """The made-up model's answer to one request (see the module docstring)."""
    if conv.schema is not None:
        return Turn(text=json.dumps(_instance(conv.schema, conv, conv.schema.get("$defs", {}))))
    if conv.tools and not conv.calls:
        name, parameters = conv.tools[0]
        return Turn(calls=((name, _arguments(parameters, conv.user_text)),))
    if conv.results:
        return Turn(text=f"The answer is {conv.results[-1]}.")
    return Turn(text=f"You asked: {conv.user_text}")


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(_text_of(part) for part in content)
    if isinstance(content, dict):
        for key in ("text", "content", "result", "error"):
            if key in content:
                return _text_of(content[key])
        return ""
    return str(content)


# ----------------------------------------------------------------------------------- OpenAI Responses


def _responses(request: RecordedRequest) -> Reply:
    body = request.json()
    conv = Conversation()
    items = body.get("input", [])
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    for item in items:
        kind = item.get("type", "message")
        if kind == "message" and item.get("role") == "user":
            conv.user_said(_text_of(item.get("content", "")))
        elif kind == "function_call":
            conv.calls.append((item["name"], json.loads(item.get("arguments") or "{}")))
        elif kind == "function_call_output":
            conv.results.append(_text_of(item.get("output", "")))
    conv.tools = [(t["name"], t.get("parameters") or {}) for t in body.get("tools", []) if t.get("name")]
    fmt = body.get("text", {}).get("format", {})
    if fmt.get("type") == "json_schema":
        conv.schema = fmt["schema"]
    turn = decide(conv)
    script = ResponseScript(model=body.get("model", "gpt-5"))
    for index, (name, args) in enumerate(turn.calls):
        script.function_call(name, json.dumps(args), call_id=f"call_{index}")
    if not turn.calls:
        script.message(turn.text)
    script.completed()
    return script.sse() if body.get("stream") else script.json()


# ---------------------------------------------------------------------------------- Anthropic Messages


def _messages(request: RecordedRequest) -> Reply:
    body = request.json()
    conv = Conversation()
    for message in body.get("messages", []):
        content = message.get("content", "")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        results = [b for b in blocks if b.get("type") == "tool_result"]
        if message.get("role") == "user" and not results:
            conv.user_said(_text_of([b for b in blocks if b.get("type") == "text"]))
        for block in blocks:
            if block.get("type") == "tool_use":
                conv.calls.append((block["name"], block.get("input") or {}))
            elif block.get("type") == "tool_result":
                conv.results.append(_text_of(block.get("content", "")))
    conv.tools = [(t["name"], t.get("input_schema") or {}) for t in body.get("tools", [])]
    fmt = body.get("output_config", {}).get("format", {})
    if fmt.get("type") == "json_schema":
        conv.schema = fmt["schema"]
    turn = decide(conv)
    stop = "tool_use" if turn.calls else "end_turn"
    if not body.get("stream"):
        content: list[dict[str, Any]] = [
            {"type": "tool_use", "id": f"toolu_{i}", "name": name, "input": args}
            for i, (name, args) in enumerate(turn.calls)
        ] or [{"type": "text", "text": turn.text}]
        return anthropic_wire.message(content, stop_reason=stop)
    events: list[Any] = [anthropic_wire.message_start()]
    for i, (name, args) in enumerate(turn.calls):
        events.append(anthropic_wire.tool_block(i, f"toolu_{i}", name, json.dumps(args)))
    if not turn.calls:
        events.append(anthropic_wire.text_block(0, turn.text))
    events.append(anthropic_wire.message_end(stop))
    return anthropic_wire.stream(*events)


# ---------------------------------------------------------------------------------------- Gemini


def _either(obj: dict[str, Any], camel: str) -> Any:
    """A field the google-genai SDK may send in camelCase or snake_case (the API takes both)."""
    snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in camel)
    return obj.get(camel, obj.get(snake))


def _gemini(request: RecordedRequest) -> Reply:
    body = request.json()
    conv = Conversation()
    for content in body.get("contents", []):
        parts = content.get("parts", [])
        if content.get("role") == "user" and all("functionResponse" not in p for p in parts):
            conv.user_said("".join(str(p.get("text", "")) for p in parts))
        for part in parts:
            if "functionCall" in part:
                conv.calls.append((part["functionCall"]["name"], part["functionCall"].get("args") or {}))
            elif "functionResponse" in part:
                conv.results.append(_text_of(part["functionResponse"].get("response", {})))
    for tool in body.get("tools", []):
        for decl in _either(tool, "functionDeclarations") or []:
            params = _either(decl, "parametersJsonSchema") or decl.get("parameters") or {}
            conv.tools.append((decl["name"], params))
    config = _either(body, "generationConfig") or {}
    conv.schema = _either(config, "responseJsonSchema") or _either(config, "responseSchema")
    turn = decide(conv)
    parts = [gemini_wire.call(name, args) for name, args in turn.calls] or [gemini_wire.text(turn.text)]
    if ":streamGenerateContent" in request.path:
        return gemini_wire.stream_reply(gemini_wire.chunks(parts))
    return json_reply(gemini_wire.body(parts))


def _route(request: RecordedRequest) -> Reply:
    path = request.path.split("?", 1)[0]
    if path.endswith("/responses"):
        return _responses(request)
    if path.endswith("/messages"):
        return _messages(request)
    if ":generateContent" in path or ":streamGenerateContent" in path:
        return _gemini(request)
    return json_reply({"error": {"message": f"no fake for {request.method} {path}"}}, 404)


class FakeProviders(WireServer):
    """The wire server with :func:`decide` behind every provider's endpoint."""

    def __init__(self) -> None:
        super().__init__()
        self.default = _route


def provider_env(server: WireServer) -> dict[str, str]:
    """The variables a user sets to point each provider's SDK elsewhere, all at ``server``."""
    return {
        "OPENAI_BASE_URL": f"{server.base_url}/v1",
        "OPENAI_API_KEY": "sk-docs-0000000000000000",
        "ANTHROPIC_BASE_URL": server.base_url,
        "ANTHROPIC_API_KEY": "sk-ant-docs-0000000000",
        "GOOGLE_GEMINI_BASE_URL": server.base_url,
        "GEMINI_API_KEY": "AIza-docs-000000000000",
    }
