"""The offline demo model: a :class:`~kanawa.llm.testing.FunctionLLM` per agent that builds its answer
from the real tool results (textlint issues, plagiarism scores, retrieved references, rubric
heuristics) — used when no model is configured. Every text it writes starts with :data:`DEMO_LABEL`,
so a page can show that the prose is demo output; the structured findings are the tools' own.

Each answer is: first turn, call the agent's tool(s); once the results are in, answer — JSON when the
loop asks for a structured output, text otherwise.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from kanawa.llm.testing import FunctionLLM, ModelRequest, Script
from kanawa.types import AssistantMessage, ToolCall, UserMessage

DEMO_LABEL = "［デモ出力］"
"""Starts every text the demo model writes."""


def _results(request: ModelRequest) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for message in request.tool_results:
        try:
            found[message.name] = json.loads(message.text)
        except ValueError:
            found[message.name] = message.text
    return found


def _call(name: str, arguments: dict[str, Any], index: int = 0) -> ToolCall:
    return ToolCall(id=f"demo_{name}_{index}", name=name, arguments=json.dumps(arguments, ensure_ascii=False))


def _style(request: ModelRequest) -> Script:
    results = _results(request)
    if "grammar_check" not in results:
        return AssistantMessage(tool_calls=(_call("grammar_check", {}),))
    report = results["grammar_check"]
    issues = report.get("issues", [])
    lines = [
        f"{DEMO_LABEL}表記の指摘は{len(issues)}件（{report.get('engine')}）、"
        f"うち{report.get('fixable', 0)}件は修正案付きです。"
    ]
    lines += [f"- {i['message']}" for i in issues[:5]]
    return "\n".join(lines)


def _draft(request: ModelRequest) -> Script:
    results = _results(request)
    if "essay_outline" not in results:
        return AssistantMessage(tool_calls=(_call("essay_outline", {}),))
    outline = results["essay_outline"]
    thin = [p for p in outline["paragraphs"] if not p["has_number"]] or outline["paragraphs"]
    suggestions = [
        {
            "after": p["last_sentence"],
            "text": "（深掘り：この場面で自分が何をし、どんな結果になったかを、"
            "数字や具体的な場面を入れて一文で補いましょう。）",
        }
        for p in thin[: max(1, int(outline.get("depth", 2)))]
    ]
    if request.response_schema is not None:
        return json.dumps(
            {"suggestions": suggestions, "note": f"{DEMO_LABEL}見出しはそのまま残しています。"},
            ensure_ascii=False,
        )
    return f"{DEMO_LABEL}深掘りの提案が{len(suggestions)}件あります。"


def _ref(request: ModelRequest) -> Script:
    results = _results(request)
    if "vector_search" not in results:
        query = request.last_user_text[:200]
        return AssistantMessage(tool_calls=(_call("vector_search", {"query": query, "k": 3}),))
    refs = results["vector_search"].get("references", [])
    return "\n".join(
        [f"{DEMO_LABEL}関連する参考資料:"] + [f"- {r['title']}（類似度 {r['score']:.2f}）" for r in refs]
    )


def _guard(request: ModelRequest) -> Script:
    results = _results(request)
    if "plagiarism_check" not in results:
        return AssistantMessage(tool_calls=(_call("plagiarism_check", {}),))
    report = results["plagiarism_check"]
    verdict = {"pass": "問題なし", "warn": "注意", "block": "要修正"}[report["verdict"]]
    return f"{DEMO_LABEL}既存の文章との一致率 {report['score']:.0%}（{verdict}）。"


def _eval(request: ModelRequest) -> Script:
    results = _results(request)
    if "rubric_evidence" not in results:
        return AssistantMessage(tool_calls=(_call("rubric_evidence", {}),))
    rubric = results["rubric_evidence"]
    rubric["summary"] = DEMO_LABEL + rubric.get("summary", "")
    if request.response_schema is not None:
        return json.dumps(rubric, ensure_ascii=False)
    return str(rubric["summary"])


def _front(request: ModelRequest) -> Script:
    """The coordinator's own model: hand the findings to EvalAgent, then close the run."""
    if not request.tool_results:
        handed = next((m.text for m in reversed(request.messages) if isinstance(m, UserMessage)), "")
        return AssistantMessage(
            tool_calls=(
                _call(
                    "transfer_to_evalagent", {"message": "ルーブリックで評価してください。\n" + handed[:500]}
                ),
            )
        )
    return f"{DEMO_LABEL}評価が終わりました。"


_ROLES: dict[str, Callable[[ModelRequest], Script]] = {
    "style": _style,
    "draft": _draft,
    "ref": _ref,
    "guard": _guard,
    "eval": _eval,
    "coordinator": _front,
}


def demo_model(role: str) -> FunctionLLM:
    """The demo model for ``role`` (``style``, ``draft``, ``ref``, ``guard``, ``eval``, ``coordinator``)."""
    if role not in _ROLES:
        raise ValueError(f"no demo model for {role!r}; roles: {sorted(_ROLES)}")
    return FunctionLLM(_ROLES[role], model=f"smartao-demo-{role}")


__all__ = ["DEMO_LABEL", "demo_model"]
