"""Provider servers for long conversations: they check a request the way each real API does before
answering it, and drive a tool loop of any length.

Each :class:`LongConversation` is a :class:`~tests.wire.server.WireServer` handler for one API
(``"responses"``, ``"chat"``, ``"anthropic"``, ``"gemini"``). On every request it

1. checks tool pairing as that API does, answering 400 with the API's own error body and wording:
   a tool result whose call is not right before it, a call without its result, and (Responses) a
   reasoning item without the item it led to — the errors compaction must never cause;
2. measures the prompt (four characters of its text per token) and answers the API's context-length
   error when it is over ``window`` (after clearing old tool results itself when an Anthropic
   request asks for it with ``context_management`` and its beta header, as Anthropic does);
3. checks that the result of the call it last asked for is in the request (the newest turn is never
   lost), then asks for the next page with ``fetch_page`` — until ``pages`` have been read — and
   then answers with text.

``POST /responses/compact`` is OpenAI's compaction: the user messages and one ``compaction`` item.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Literal

from tests.wire.server import RecordedRequest, Reply, json_reply

Api = Literal["responses", "chat", "anthropic", "gemini"]
CHARS_PER_TOKEN = 4
COMPACTION_TOKENS = 40
"""What a compaction item the server issued counts for (its encrypted content is the server's)."""


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            if key not in ("encrypted_content", "thoughtSignature", "signature"):
                yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def text_tokens(value: Any) -> int:
    return sum(len(s) for s in _strings(value)) // CHARS_PER_TOKEN


class LongConversation:
    """A handler that validates each request like ``api`` and pages through ``pages`` tool calls."""

    def __init__(
        self, api: Api, *, window: int, pages: int, page: Callable[[int], str] | None = None
    ) -> None:
        self.api = api
        self.window = window
        self.pages = pages
        self.page = page or (lambda n: f"page {n}")
        self.asked = 0
        self.sizes: list[int] = []
        self.refusals: list[str] = []
        self.compactions = 0
        self.cleared = 0

    # ------------------------------------------------------------------------------- handler
    def __call__(self, request: RecordedRequest) -> Reply:
        body = request.json()
        if request.path.endswith("/responses/compact"):
            return self._compact(body)
        history = self._history(body)
        problem = PAIRING[self.api](history)
        if problem is not None:
            self.refusals.append(problem)
            return self._bad_request(problem)
        if self.api == "anthropic":
            history = self._clear_tool_uses(request, body, history)
        size = self._size(body, history)
        self.sizes.append(size)
        if size > self.window:
            self.refusals.append(f"context length {size} > {self.window}")
            return self._too_long(size)
        if self.asked and f"fetch_page:{self.asked - 1}" not in self._results(history):
            message = f"the result of page {self.asked - 1} is missing from the request"
            self.refusals.append(message)
            return self._bad_request(message)
        if self.asked >= self.pages:
            return REPLY[self.api].text(f"read {self.asked} pages")
        self.asked += 1
        return REPLY[self.api].call(f"call_{self.asked - 1}", self.asked - 1)

    # ------------------------------------------------------------------------------ helpers
    def _history(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        key = {"responses": "input", "chat": "messages", "anthropic": "messages", "gemini": "contents"}[
            self.api
        ]
        history: list[dict[str, Any]] = body.get(key) or []
        return history

    def _size(self, body: dict[str, Any], history: list[dict[str, Any]]) -> int:
        system = body.get("instructions") or body.get("system") or body.get("systemInstruction") or ""
        compactions = sum(1 for item in history if item.get("type") == "compaction")
        return text_tokens(history) + text_tokens(system) + compactions * COMPACTION_TOKENS

    def _results(self, history: list[dict[str, Any]]) -> set[str]:
        """``fetch_page:<n>`` for every page whose text is in the history."""
        found: set[str] = set()
        for text in _strings(history):
            if text.startswith("page ") and text[5:].split(":", 1)[0].isdigit():
                found.add(f"fetch_page:{text[5:].split(':', 1)[0]}")
        return found

    def _clear_tool_uses(
        self, request: RecordedRequest, body: dict[str, Any], history: list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        """Anthropic's ``clear_tool_uses_20250919`` edit: past the trigger, the results of all but the
        newest ``keep`` tool uses are replaced by a placeholder before the prompt is measured."""
        management = body.get("context_management")
        if management is None:
            return history
        if "context-management-2025-06-27" not in request.headers.get("anthropic-beta", ""):
            raise AssertionError("context_management sent without its beta header")
        (edit,) = management["edits"]
        assert edit["type"] == "clear_tool_uses_20250919"
        if text_tokens(history) <= edit["trigger"]["value"]:
            return history
        keep = edit["keep"]["value"]
        results = [
            block
            for message in history
            if isinstance(message.get("content"), list)
            for block in message["content"]
            if block.get("type") == "tool_result"
        ]
        cleared = results[: max(len(results) - keep, 0)]
        for block in cleared:
            block["content"] = "[cleared]"
        self.cleared += len(cleared)
        return history

    def _compact(self, body: dict[str, Any]) -> Reply:
        assert self.api == "responses"
        self.compactions += 1
        items = body.get("input") or []
        users = [
            {"type": "message", "id": f"msg_u{i}", "status": "completed", **item}
            for i, item in enumerate(items)
            if item.get("role") == "user"
        ]
        compaction = {"type": "compaction", "id": f"cmp_{self.compactions}", "encrypted_content": "enc"}
        return json_reply(
            {
                "id": f"resp_cmp_{self.compactions}",
                "object": "response.compaction",
                "created_at": 1_760_000_000,
                "output": [*users, compaction],
                "usage": {
                    "input_tokens": text_tokens(items),
                    "input_tokens_details": {"cached_tokens": 0},
                    "output_tokens": COMPACTION_TOKENS,
                    "output_tokens_details": {"reasoning_tokens": 0},
                    "total_tokens": text_tokens(items) + COMPACTION_TOKENS,
                },
            }
        )

    def _bad_request(self, message: str) -> Reply:
        if self.api == "anthropic":
            error = {"type": "invalid_request_error", "message": message}
            return json_reply({"type": "error", "error": error, "request_id": "req_x"}, 400)
        if self.api == "gemini":
            return json_reply({"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}}, 400)
        error = {"message": message, "type": "invalid_request_error", "param": "input", "code": None}
        return json_reply({"error": error}, 400)

    def _too_long(self, size: int) -> Reply:
        if self.api == "anthropic":
            return self._bad_request(f"prompt is too long: {size} tokens > {self.window} maximum")
        if self.api == "gemini":
            return self._bad_request(
                f"The input token count ({size}) exceeds the maximum number of tokens allowed "
                f"({self.window})."
            )
        text = (
            "Your input exceeds the context window of this model. Please adjust your input and try again."
            if self.api == "responses"
            else f"This model's maximum context length is {self.window} tokens. However, your messages "
            f"resulted in {size} tokens. Please reduce the length of the messages."
        )
        error = {
            "message": text,
            "type": "invalid_request_error",
            "param": "input",
            "code": "context_length_exceeded",
        }
        return json_reply({"error": error}, 400)


# ------------------------------------------------------------------------------------- pairing


def _responses_pairing(items: list[dict[str, Any]]) -> str | None:
    called: set[str] = set()
    answered: set[str] = set()
    for index, item in enumerate(items):
        kind = item.get("type", "message")
        if kind == "function_call":
            called.add(item["call_id"])
        elif kind == "function_call_output":
            if item["call_id"] not in called:
                return f"No tool call found for function call output with call_id {item['call_id']}."
            answered.add(item["call_id"])
        elif kind == "reasoning":
            following = items[index + 1] if index + 1 < len(items) else None
            kind_after = None if following is None else following.get("type", "message")
            if kind_after not in ("function_call", "message") or (
                kind_after == "message" and following is not None and following.get("role") != "assistant"
            ):
                return (
                    f"Item '{item.get('id')}' of type 'reasoning' was provided without its required "
                    "following item."
                )
    missing = called - answered
    if missing:
        return f"No tool output found for function call {sorted(missing)[0]}."
    return None


def _chat_pairing(messages: list[dict[str, Any]]) -> str | None:
    open_calls: set[str] = set()
    for index, message in enumerate(messages):
        if message["role"] == "tool":
            if message.get("tool_call_id") not in open_calls:
                return (
                    "Invalid parameter: messages with role 'tool' must be a response to a preceeding "
                    "message with 'tool_calls'."
                )
            open_calls.discard(message["tool_call_id"])
            continue
        if open_calls:
            return (
                "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
                f"'tool_call_id'. The following tool_call_ids did not have response messages: "
                f"{', '.join(sorted(open_calls))} (messages.[{index}])"
            )
        open_calls = {call["id"] for call in message.get("tool_calls") or []}
    if open_calls:
        return f"The following tool_call_ids did not have response messages: {', '.join(sorted(open_calls))}"
    return None


def _blocks(message: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    content = message.get("content")
    return [b for b in content if b.get("type") == kind] if isinstance(content, list) else []


def _anthropic_pairing(messages: list[dict[str, Any]]) -> str | None:
    for index, message in enumerate(messages):
        uses = {b["id"] for b in _blocks(message, "tool_use")}
        results = {b["tool_use_id"] for b in _blocks(message, "tool_result")}
        before = {b["id"] for b in _blocks(messages[index - 1], "tool_use")} if index else set()
        orphans = results - before
        if orphans:
            return (
                f"messages.{index}.content.0: unexpected `tool_use_id` found in `tool_result` blocks: "
                f"{sorted(orphans)[0]}. Each `tool_result` block must have a corresponding `tool_use` block "
                "in the previous message."
            )
        if uses:
            after = (
                {b["tool_use_id"] for b in _blocks(messages[index + 1], "tool_result")}
                if index + 1 < len(messages)
                else set()
            )
            if uses - after:
                return (
                    f"messages.{index}: `tool_use` ids were found without `tool_result` blocks immediately "
                    f"after: {sorted(uses - after)[0]}. Each `tool_use` block must have a corresponding "
                    "`tool_result` block in the next message."
                )
    return None


def _parts(content: dict[str, Any], key: str) -> list[dict[str, Any]]:
    return [p[key] for p in content.get("parts") or [] if key in p]


def _gemini_pairing(contents: list[dict[str, Any]]) -> str | None:
    for index, content in enumerate(contents):
        responses = _parts(content, "functionResponse")
        if not responses:
            continue
        calls = _parts(contents[index - 1], "functionCall") if index else []
        if not calls:
            return "Please ensure that function response turn comes immediately after a function call turn."
        if len(calls) != len(responses):
            return (
                "Please ensure that the number of function response parts is equal to the number of "
                "function call parts of the function call turn."
            )
    for index, content in enumerate(contents):
        if _parts(content, "functionCall") and (index == 0 or contents[index - 1].get("role") != "user"):
            return (
                "Please ensure that function call turn comes immediately after a user turn or after a "
                "function response turn."
            )
    return None


PAIRING: dict[Api, Callable[[list[dict[str, Any]]], str | None]] = {
    "responses": _responses_pairing,
    "chat": _chat_pairing,
    "anthropic": _anthropic_pairing,
    "gemini": _gemini_pairing,
}

# --------------------------------------------------------------------------------------- replies


class _Replies:
    def call(self, call_id: str, page: int) -> Reply:
        raise NotImplementedError

    def text(self, text: str) -> Reply:
        raise NotImplementedError


_ARGS = '{{"n": {page}}}'


class _ResponsesReplies(_Replies):
    def _response(self, output: list[dict[str, Any]]) -> Reply:
        return json_reply(
            {
                "id": "resp_long",
                "object": "response",
                "created_at": 1_760_000_000,
                "status": "completed",
                "error": None,
                "incomplete_details": None,
                "model": "gpt-5.2",
                "output": output,
                "parallel_tool_calls": True,
                "tool_choice": "auto",
                "tools": [],
                "usage": {
                    "input_tokens": 100,
                    "input_tokens_details": {"cached_tokens": 0},
                    "output_tokens": 20,
                    "output_tokens_details": {"reasoning_tokens": 10},
                    "total_tokens": 120,
                },
            }
        )

    def call(self, call_id: str, page: int) -> Reply:
        reasoning = {
            "type": "reasoning",
            "id": f"rs_{page}",
            "summary": [],
            "encrypted_content": f"enc-{page}",
        }
        call = {
            "type": "function_call",
            "id": f"fc_{page}",
            "call_id": call_id,
            "name": "fetch_page",
            "arguments": _ARGS.format(page=page),
            "status": "completed",
        }
        return self._response([reasoning, call])

    def text(self, text: str) -> Reply:
        content = [{"type": "output_text", "text": text, "annotations": []}]
        message = {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "status": "completed",
            "content": content,
        }
        return self._response([message])


class _ChatReplies(_Replies):
    def _completion(self, message: dict[str, Any], finish: str) -> Reply:
        return json_reply(
            {
                "id": "chatcmpl-long",
                "object": "chat.completion",
                "created": 1_700_000_000,
                "model": "local-model",
                "choices": [
                    {"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}
                ],
                "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
            }
        )

    def call(self, call_id: str, page: int) -> Reply:
        call = {
            "id": call_id,
            "type": "function",
            "function": {"name": "fetch_page", "arguments": _ARGS.format(page=page)},
        }
        return self._completion({"content": None, "tool_calls": [call]}, "tool_calls")

    def text(self, text: str) -> Reply:
        return self._completion({"content": text}, "stop")


class _AnthropicReplies(_Replies):
    def _message(self, content: list[dict[str, Any]], stop: str) -> Reply:
        return json_reply(
            {
                "id": "msg_long",
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": content,
                "stop_reason": stop,
                "stop_sequence": None,
                "usage": {"input_tokens": 100, "output_tokens": 20},
            }
        )

    def call(self, call_id: str, page: int) -> Reply:
        return self._message(
            [{"type": "tool_use", "id": call_id, "name": "fetch_page", "input": {"n": page}}], "tool_use"
        )

    def text(self, text: str) -> Reply:
        return self._message([{"type": "text", "text": text}], "end_turn")


class _GeminiReplies(_Replies):
    def _body(self, parts: list[dict[str, Any]]) -> Reply:
        return json_reply(
            {
                "candidates": [
                    {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
                ],
                "usageMetadata": {
                    "promptTokenCount": 100,
                    "candidatesTokenCount": 20,
                    "totalTokenCount": 120,
                },
                "modelVersion": "gemini-2.5-flash",
                "responseId": "resp-long",
            }
        )

    def call(self, call_id: str, page: int) -> Reply:
        return self._body([{"functionCall": {"name": "fetch_page", "args": {"n": page}, "id": call_id}}])

    def text(self, text: str) -> Reply:
        return self._body([{"text": text}])


REPLY: dict[Api, _Replies] = {
    "responses": _ResponsesReplies(),
    "chat": _ChatReplies(),
    "anthropic": _AnthropicReplies(),
    "gemini": _GeminiReplies(),
}
