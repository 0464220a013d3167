"""The offline ACE demo: a small bundled task set and scripted roles, so the whole loop runs with no
API key (``kanawa ace demo``) and the tests can watch a playbook learn.

The three roles are :class:`~kanawa.FunctionLLM` models that read the prompts they are sent, the way
a real model would, and answer in the requested JSON:

- the **Generator** model solves three kinds of task (a unit conversion, Japanese consumption tax, the
  number of calls a paginated API needs) *correctly only when the playbook bullets in its prompt
  contain the rule*; otherwise it makes the classic mistake, citing the misleading bullet the seed
  playbook starts with when it sees it;
- the **Reflector** model compares the answer with the ground truth, tags the cited bullets helpful or
  harmful, and states the missing rule as its key insight;
- the **Curator** model turns a key insight into one ``ADD`` in the right section.

So epoch 1 fails once per kind of task and the playbook grows three rules; epoch 2 gets everything
right using them, and the misleading bullet collects harmful votes.
"""

from __future__ import annotations

import json
import math
import re
from typing import Final

from kanawa.apps.ace.playbook import Bullet, Playbook
from kanawa.apps.ace.workflow import Sample
from kanawa.llm.testing.models import FunctionLLM, ModelRequest

DEMO_DATASET: Final = "demo"

RULES: Final[dict[str, tuple[str, str, str]]] = {
    # topic: (section, rule text, marker the generator looks for)
    "distance": (
        "STRATEGIES AND HARD RULES",
        "Distance conversion: 1 km = 1000 meters, so multiply kilometres by 1000 to get meters.",
        "1 km = 1000 meters",
    ),
    "tax": (
        "計算ルール",
        "消費税10%の税込価格は「税抜価格 × 1.1」で計算する（税額だけの × 0.1 ではない）。",
        "× 1.1",
    ),
    "paging": (
        "APIS TO USE FOR SPECIFIC INFORMATION",
        "Paginated list APIs: API calls needed = ceil(total / page_size) + 1, because the loop stops only "
        "when an empty page comes back.",
        "+ 1",
    ),
}

TASKS: Final[list[Sample]] = [
    Sample(id="d1", question="How many meters are in 3 km?", answer="3000"),
    Sample(id="t1", question="税抜2000円の商品の税込価格は何円？（消費税10%）", answer="2200"),
    Sample(id="p1", question="How many API calls are needed to list 45 songs with page_size 20?", answer="4"),
    Sample(id="d2", question="How many meters are in 12 km?", answer="12000"),
    Sample(id="t2", question="税抜500円の商品の税込価格は何円？（消費税10%）", answer="550"),
    Sample(
        id="p2", question="How many API calls are needed to list 100 songs with page_size 20?", answer="6"
    ),
]


def seed_playbook() -> Playbook:
    """Where the demo starts: one sound bullet and one misleading one."""
    return Playbook(
        bullets=[
            Bullet(
                id="shr-00001",
                section="STRATEGIES AND HARD RULES",
                content="Convert kilometres to meters by multiplying by 100.",
            ),
            Bullet(
                id="shr-00002",
                section="STRATEGIES AND HARD RULES",
                content="Answer with the number only, without units.",
            ),
        ]
    )


def _section(prompt: str, title: str) -> str:
    """The first paragraph under ``## title`` (instructions that follow a blank line are not part of it)."""
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", prompt, re.DOTALL | re.MULTILINE)
    return match.group(1).strip().split("\n\n", 1)[0] if match else ""


def _bullets(text: str) -> list[tuple[str, str]]:
    return re.findall(r"^\[([a-z][a-z0-9]*-\d{5,})\] (.*)$", text, re.MULTILINE)


def topic_of(task: str) -> str | None:
    if "km" in task:
        return "distance"
    if "税込" in task:
        return "tax"
    if "page_size" in task:
        return "paging"
    return None


def solve(task: str, bullets: list[tuple[str, str]]) -> tuple[str, list[str], list[str]]:
    """The Generator model's skill: (answer, cited ids, reasoning)."""
    topic = topic_of(task)
    numbers = [int(n) for n in re.findall(r"\d+", task)]
    if topic is None or not numbers:
        return "I do not know.", [], ["No rule in the playbook covers this task"]
    marker = RULES[topic][2]
    rule = next((bullet_id for bullet_id, text in bullets if marker in text), None)
    if topic == "distance":
        if rule:
            return str(numbers[0] * 1000), [rule], [f"{rule}: 1 km is 1000 meters"]
        wrong = next((i for i, text in bullets if "multiplying by 100." in text), None)
        return str(numbers[0] * 100), [wrong] if wrong else [], ["Multiply by 100"]
    if topic == "tax":
        price = numbers[0]
        if rule:
            return str(round(price * 1.1)), [rule], [f"{rule}: 税込 = 税抜 × 1.1"]
        return str(round(price * 0.1)), [], ["税額は価格の10%"]
    total, size = numbers[0], numbers[-1]
    if rule:
        return str(math.ceil(total / size) + 1), [rule], [f"{rule}: one more call sees the empty page"]
    return str(math.ceil(total / size)), [], ["One call per page"]


def _generator(request: ModelRequest) -> str:
    prompt = request.last_user_text
    task = _section(prompt, "Task")
    answer, cited, reasoning = solve(task, _bullets(_section(prompt, "Playbook")))
    return json.dumps(
        {"reasoning": reasoning, "bullet_ids": cited, "final_answer": answer}, ensure_ascii=False
    )


def _reflector(request: ModelRequest) -> str:
    prompt = request.last_user_text
    task = _section(prompt, "Task")
    answer = prompt.split("\nAnswer:\n", 1)[-1].split("\n\nStatus:", 1)[0].strip()
    truth = _section(prompt, "Ground truth")
    correct = bool(truth) and truth in answer
    used = [bullet_id for bullet_id, _text in _bullets(_section(prompt, "Playbook bullets used"))]
    topic = topic_of(task)
    insight = "" if correct or topic is None else RULES[topic][1]
    return json.dumps(
        {
            "reasoning": "The answer matches the ground truth."
            if correct
            else f"Expected {truth}, got {answer}.",
            "error_identification": "" if correct else "The calculation rule applied was wrong or missing.",
            "root_cause_analysis": ""
            if correct
            else "The playbook had no correct rule for this kind of task.",
            "correct_approach": insight,
            "key_insight": insight,
            "bullet_tags": [{"id": i, "tag": "helpful" if correct else "harmful"} for i in used],
        },
        ensure_ascii=False,
    )


def _curator(request: ModelRequest) -> str:
    prompt = request.last_user_text
    reflection, _end = json.JSONDecoder().raw_decode(_section(prompt, "Reflection") or "{}")
    insight = reflection.get("key_insight", "")
    topic = next((t for t, (_s, rule, _m) in RULES.items() if rule == insight), None)
    operations = [{"type": "ADD", "section": RULES[topic][0], "content": insight}] if topic else []
    return json.dumps({"reasoning": "new rule" if operations else "nothing new", "operations": operations})


def demo_models() -> tuple[FunctionLLM, FunctionLLM, FunctionLLM]:
    """The (generator, reflector, curator) models of the demo."""
    return (
        FunctionLLM(_generator, model="demo-generator"),
        FunctionLLM(_reflector, model="demo-reflector"),
        FunctionLLM(_curator, model="demo-curator"),
    )


__all__ = ["DEMO_DATASET", "RULES", "TASKS", "demo_models", "seed_playbook", "solve"]
