"""A built-in eval with a learnable rule, and scripted ACE roles, so ``learn()`` runs offline.

The dataset asks for totals and dates. The scripted Generator always *computes* right, but writes a
total as ``1350 yen`` and a date as ``March 15, 2024`` — unless a playbook bullet in its prompt states
the house format (``¥1,350``, ``2024-03-15``). The dataset's scorer is the built-in
``equals_expected``, so the baseline fails every case, and the scorer's reason (``expected '¥1,350',
got '1350 yen'``) is the only clue to what is wrong. The dataset is plain data (``to_file`` writes it as
YAML), so ``kanawa ace learn --dataset`` can read it back.

- the **Reflector** model reads the ground truth and the feedback — never the task's own numbers —
  and when they show a format it recognises, states that format as its key insight;
- with ``learn_from_passes``, a passing case's Reflector tags the format bullet it used helpful;
- the **Curator** model turns a recognised insight into one ``ADD`` in ``ANSWER FORMAT``.

So a real round of learning is needed: the rules exist only after failures were reflected on, and
the held-out cases (other totals, other dates, with labels the roles never see) pass only once the
playbook holds them. ``demo_models()`` returns fresh :class:`~kanawa.FunctionLLM` roles, whose
``.requests`` record every prompt (the leak test reads them).
"""

from __future__ import annotations

import json
import re
from datetime import date, timedelta
from typing import Any, Final

from kanawa.apps.ace.learning.examine import PASSED
from kanawa.evals.cases import Case, Dataset, ScorerSpec
from kanawa.llm.testing.models import FunctionLLM, ModelRequest

SECTION: Final = "ANSWER FORMAT"
AMOUNT_RULE: Final = (
    "Amount answers: write the total as ¥ followed by the digits with comma thousands separators "
    "(¥1,350), never as a bare number or with the word yen."
)
DATE_RULE: Final = (
    "Date answers: write the date as YYYY-MM-DD (ISO 8601, 2024-03-15), never with the month's name."
)
RULES: Final = (AMOUNT_RULE, DATE_RULE)

_MONTHS: Final = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip


def _amount_case(name: str, count: int, item: str, price: int, split: str) -> Case[Any, Any]:
    return Case(
        name=name,
        inputs=f"What is the total amount for {count} {item} at {price} yen each?",
        expected_output=f"¥{count * price:,}",
        metadata={"split": split},
    )


def _date_case(name: str, start: date, days: int, split: str) -> Case[Any, Any]:
    return Case(
        name=name,
        inputs=f"What date is {days} days after {start.isoformat()}?",
        expected_output=(start + timedelta(days=days)).isoformat(),
        metadata={"split": split},
    )


def demo_dataset() -> Dataset[Any, Any]:
    """Six training and six held-out cases; every held-out expected output is unique to its case."""
    cases = [
        _amount_case("amount-train-1", 3, "notebooks", 450, "train"),
        _date_case("date-train-1", date(2024, 3, 5), 10, "train"),
        _amount_case("amount-train-2", 12, "pens", 120, "train"),
        _date_case("date-train-2", date(2023, 12, 20), 15, "train"),
        _amount_case("amount-train-3", 7, "chairs", 3200, "train"),
        _date_case("date-train-3", date(2025, 1, 28), 3, "train"),
        _amount_case("amount-held-1", 9, "lamps", 2750, "held_out"),
        _date_case("date-held-1", date(2024, 6, 1), 44, "held_out"),
        _amount_case("amount-held-2", 4, "desks", 18500, "held_out"),
        _date_case("date-held-2", date(2022, 2, 27), 5, "held_out"),
        _amount_case("amount-held-3", 25, "cups", 330, "held_out"),
        _date_case("date-held-3", date(2026, 10, 30), 62, "held_out"),
    ]
    return Dataset(name="ace-format-demo", cases=cases, scorers=[ScorerSpec(type="equals_expected")])


def _section(prompt: str, title: str) -> str:
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", prompt, re.DOTALL | re.MULTILINE)
    return match.group(1).strip() if match else ""


def _bullets(text: str) -> list[tuple[str, str]]:
    return re.findall(r"^\[([a-z][a-z0-9]*-\d{5,})\] (.*)$", text, re.MULTILINE)


def solve(task: str, bullets: list[tuple[str, str]]) -> tuple[str, list[str]]:
    """The Generator model's skill: (answer, cited bullet ids)."""
    amount = re.search(r"total amount for (\d+) .+ at (\d+) yen each", task)
    if amount:
        total = int(amount.group(1)) * int(amount.group(2))
        rule = next((i for i, text in bullets if "thousands separators" in text), None)
        return (f"¥{total:,}", [rule]) if rule else (f"{total} yen", [])
    when = re.search(r"What date is (\d+) days after (\d{4}-\d{2}-\d{2})", task)
    if when:
        day = date.fromisoformat(when.group(2)) + timedelta(days=int(when.group(1)))
        rule = next((i for i, text in bullets if "YYYY-MM-DD" in text), None)
        if rule:
            return day.isoformat(), [rule]
        return f"{_MONTHS[day.month - 1]} {day.day}, {day.year}", []
    return "I do not know.", []


def _generator(request: ModelRequest) -> str:
    prompt = request.last_user_text
    task = _section(prompt, "Task").split("\n\n", 1)[0]
    answer, cited = solve(task, _bullets(_section(prompt, "Playbook")))
    steps = ["computed the result", "formatted it as the playbook says" if cited else "no format rule"]
    return json.dumps({"reasoning": steps, "bullet_ids": cited, "final_answer": answer}, ensure_ascii=False)


def insight_from(evidence: str) -> str:
    """The format rule that ``evidence`` (ground truth and feedback) shows, or ``""``."""
    if re.search(r"¥\d{1,3}(,\d{3})+", evidence):
        return AMOUNT_RULE
    if re.search(r"\b\d{4}-\d{2}-\d{2}\b", evidence):
        return DATE_RULE
    return ""


def _reflector(request: ModelRequest) -> str:
    prompt = request.last_user_text
    feedback = _section(prompt, "Execution feedback").split("Reply with a JSON object", 1)[0]
    used = [bullet_id for bullet_id, _text in _bullets(_section(prompt, "Playbook bullets used"))]
    if PASSED in feedback:
        return json.dumps(
            {
                "reasoning": "The answer passed; the format rule it used was right.",
                "bullet_tags": [{"id": i, "tag": "helpful"} for i in used],
            }
        )
    insight = insight_from(_section(prompt, "Ground truth") + "\n" + feedback)
    return json.dumps(
        {
            "reasoning": "The value was right but its format was not the expected one.",
            "error_identification": "wrong answer format",
            "root_cause_analysis": "the playbook has no rule for the answer's format",
            "correct_approach": insight,
            "key_insight": insight,
            "bullet_tags": [{"id": i, "tag": "harmful"} for i in used],
        },
        ensure_ascii=False,
    )


def _curator(request: ModelRequest) -> str:
    prompt = request.last_user_text
    reflection, _end = json.JSONDecoder().raw_decode(_section(prompt, "Reflection") or "{}")
    insight = reflection.get("key_insight", "")
    operations = [{"type": "ADD", "section": SECTION, "content": insight}] if insight in RULES else []
    return json.dumps(
        {"reasoning": "a format rule" if operations else "nothing new", "operations": operations}
    )


def demo_models() -> tuple[FunctionLLM, FunctionLLM, FunctionLLM]:
    """Fresh (generator, reflector, curator) scripted models."""
    return (
        FunctionLLM(_generator, model="demo-generator"),
        FunctionLLM(_reflector, model="demo-reflector"),
        FunctionLLM(_curator, model="demo-curator"),
    )


def models() -> dict[str, FunctionLLM]:
    """The roles by name, for ``kanawa ace learn --agent kanawa.apps.ace.learning.demo:models``."""
    generator, reflector, curator = demo_models()
    return {"generator": generator, "reflector": reflector, "curator": curator}


__all__ = [
    "AMOUNT_RULE",
    "DATE_RULE",
    "demo_dataset",
    "demo_models",
    "insight_from",
    "models",
    "solve",
]
