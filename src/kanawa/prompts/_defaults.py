"""Texts of the templates the agent loop needs, in English and Japanese (seed 002 §9-1).

Placeholders use :class:`string.Template` syntax (``$name``); write ``$$`` for a literal dollar sign.
Kept as Python constants so loading them costs no file I/O.
"""

from __future__ import annotations

from typing import Final

DEFAULT_TEMPLATES: Final[dict[str, dict[str, str]]] = {
    "final_output_request": {
        "en": (
            "Now give your final answer. Reply with one JSON value that matches the JSON schema below, "
            "and nothing else: no explanation, no Markdown code fence.\n"
            "JSON schema:\n$schema"
        ),
        "ja": (
            "ここで最終回答を出してください。以下の JSON スキーマに合う JSON だけを返し、"
            "説明文や Markdown のコードブロックなど、ほかのものは一切含めないでください。\n"
            "JSON スキーマ:\n$schema"
        ),
    },
    "final_output_retry": {
        "en": (
            "Your previous answer could not be parsed or did not match the schema: $error\n"
            "Reply again with one JSON value that matches the JSON schema below, and nothing else.\n"
            "JSON schema:\n$schema"
        ),
        "ja": (
            "前回の回答は解析できなかったか、スキーマに合っていませんでした: $error\n"
            "もう一度、以下の JSON スキーマに合う JSON だけを返してください。"
            "ほかのものは含めないでください。\n"
            "JSON スキーマ:\n$schema"
        ),
    },
    "max_steps_finalize": {
        "en": (
            "You have used up the tool budget for this task, so no more tools can be called. "
            "Answer now with the information you already have, and say plainly what is still missing "
            "or uncertain."
        ),
        "ja": (
            "このタスクで使えるツール呼び出しの上限に達したため、これ以上ツールは呼び出せません。"
            "ここまでに得た情報をもとに今すぐ回答し、まだ足りない点や不確かな点があればはっきり書いてください。"
        ),
    },
    "tool_fallback_thought": {
        "en": "Calling tools: $tools",
        "ja": "ツールを呼び出します：$tools",
    },
}

LIST_SEPARATORS: Final[dict[str, str]] = {"en": ", ", "ja": "、"}
