"""ACE learns from an eval, offline: the built-in format dataset, scripted roles, three epochs.

Run: ``python examples/ace_learning.py [report-dir]`` — prints the learning curve, what epoch 1
changed, and writes learning.{json,md,html} to ``report-dir`` (default: a temporary directory).
Needs ``pip install 'kanawa[ace]'``; no API key.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from rich.console import Console

from kanawa.apps.ace.learning import learn
from kanawa.apps.ace.learning.demo import demo_dataset, demo_models
from kanawa.apps.ace.learning.render import rich_cost_table, rich_table


def main(out: Path) -> None:
    generator, reflector, curator = demo_models()
    report = learn(
        demo_dataset(),
        generator_model=generator,
        reflector_model=reflector,
        curator_model=curator,
        epochs=3,
    )
    console = Console(width=120)
    console.print(rich_table(report))
    console.print(rich_cost_table(report))
    for step in report.epochs[1].steps:
        print(f"epoch 1 learned from {step.case}: {step.feedback}")
        for entry in step.audit:
            print(f"  {entry.type} {entry.status} {entry.bullet_id}: {entry.after}")
    out.mkdir(parents=True, exist_ok=True)
    for name in ("learning.json", "learning.md", "learning.html"):
        report.save(out / name)
    print(f"held-out: {report.curve[0].held_out:.2f} -> {report.curve[-1].held_out:.2f}")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        main(Path(sys.argv[1]))
    else:
        with tempfile.TemporaryDirectory() as directory:
            main(Path(directory))
