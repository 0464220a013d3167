"""A :class:`~kanawa.apps.ace.learning.report.LearningReport` as Markdown, a rich table and an HTML page.

All three show the same things in the same order: the learning curve (epoch 0 is the baseline), the
cost per role, then each epoch's steps — the failed training case, its feedback, the insight the
Reflector drew and every operation the store applied — and the epoch's playbook diff. The HTML page is
one self-contained file with no script: every text from a case, a model or the playbook is escaped.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable

from rich.table import Table

from kanawa.apps.ace.learning.report import OPERATION_TYPES, EpochRecord, LearningReport, RoleCost


def _usd(value: float | None) -> str:
    return "–" if value is None else f"${value:.4f}"


def _pct(value: float) -> str:
    return f"{value:.0%}"


def curve_rows(report: LearningReport) -> list[list[str]]:
    """One row per epoch: epoch, train score, train pass, held-out score, held-out pass, bullets, ops."""
    rows = []
    for e in report.epochs:
        ops = " ".join(f"{kind}={e.operations[kind]}" for kind in OPERATION_TYPES if e.operations.get(kind))
        rows.append(
            [
                "0 (baseline)" if e.epoch == 0 else str(e.epoch),
                f"{e.train.mean:.3f}",
                _pct(e.train.pass_rate),
                f"{e.held_out.mean:.3f}",
                _pct(e.held_out.pass_rate),
                str(e.bullets),
                ops or "–",
            ]
        )
    return rows


CURVE_HEADERS = [
    "epoch",
    "train score",
    "train pass",
    "held-out score",
    "held-out pass",
    "bullets",
    "operations",
]
COST_HEADERS = ["role", "model", "requests", "input tokens", "output tokens", "USD"]


def cost_rows(costs: list[RoleCost]) -> list[list[str]]:
    return [
        [c.role, c.model, str(c.requests), str(c.input_tokens), str(c.output_tokens), _usd(c.cost_usd)]
        for c in costs
    ]


VERDICT_HEADERS = ["scorer", "cases", "before", "after", "change", "95% interval", "p (adjusted)", "verdict"]


def verdict_rows(report: LearningReport) -> list[list[str]]:
    """One row per scorer: is the held-out change from the baseline to the last epoch real?"""
    if report.held_out_verdict is None:
        return []
    rows = []
    for s in report.held_out_verdict.comparison.get("scorers", []):
        rows.append(
            [
                str(s["scorer"]),
                str(s["n_cases"]),
                f"{s['baseline_mean']:.3f}",
                f"{s['candidate_mean']:.3f}",
                f"{s['mean_diff']:+.3f}",
                f"[{s['ci_low']:+.3f}, {s['ci_high']:+.3f}]",
                f"{s['p_adjusted']:.3g}",
                str(s["verdict"]) + (f" ({s['note']})" if s.get("note") else ""),
            ]
        )
    return rows


def verdict_title(report: LearningReport) -> str:
    verdict = report.held_out_verdict
    if verdict is None:
        return "Is the held-out change real?"
    return f"Is the held-out change real? (epoch {verdict.baseline_epoch} → epoch {verdict.final_epoch})"


def rich_verdict_table(report: LearningReport) -> Table:
    table = Table(title=verdict_title(report), title_justify="left")
    for header in VERDICT_HEADERS:
        table.add_column(header, justify="left" if header in ("scorer", "verdict") else "right")
    for row in verdict_rows(report):
        table.add_row(*row)
    return table


def rich_table(report: LearningReport) -> Table:
    """The learning curve as a rich table (the terminal view of ``kanawa ace learn``)."""
    table = Table(title=f"ACE learning curve — {report.dataset}", title_justify="left")
    for header in CURVE_HEADERS:
        table.add_column(header, justify="left" if header in ("epoch", "operations") else "right")
    for row in curve_rows(report):
        table.add_row(*row)
    return table


def rich_cost_table(report: LearningReport) -> Table:
    table = Table(title="cost by role", title_justify="left")
    for header in COST_HEADERS:
        table.add_column(header, justify="left" if header in ("role", "model") else "right")
    for row in cost_rows(report.cost):
        table.add_row(*row)
    return table


def _md_cell(text: str) -> str:
    """One line of Markdown text: HTML escaped (a case's output must not become markup where the
    Markdown is rendered), table pipes escaped, whitespace collapsed."""
    return html.escape(" ".join(text.split()), quote=False).replace("|", "\\|").replace("`", "&#96;")


def _md_table(headers: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in rows]
    return lines


def _fence(text: str, lang: str = "") -> list[str]:
    """A fenced block longer than any backtick run inside ``text``, so nothing in it can close it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence + lang, text.rstrip("\n"), fence]


def _plain(text: str) -> str:
    return " ".join(text.split())


def _step_lines(epoch: EpochRecord, cell: Callable[[str], str] = _md_cell) -> list[str]:
    """Each step as list lines; ``cell`` makes a text safe for the output (Markdown, or plain text
    that the HTML view escapes)."""
    lines: list[str] = []
    for step in epoch.steps:
        lines.append(f"- case {cell(step.case)} scored {step.score:.2f}; feedback: {cell(step.feedback)}")
        if step.key_insight:
            lines.append(f"  - insight: {cell(step.key_insight)}")
        for entry in step.audit:
            what = entry.after or entry.before or entry.detail
            lines.append(
                f"  - {entry.type} {entry.status} {cell(entry.bullet_id or '–')}"
                + (f": {cell(what)}" if what else "")
                + (f" ({cell(entry.detail)})" if entry.detail and what != entry.detail else "")
            )
        if step.error:
            lines.append(f"  - error: {cell(step.error)}")
    return lines


def to_markdown(report: LearningReport) -> str:
    total = report.total_cost_usd
    lines = [
        f"# ACE learning — {_md_cell(report.dataset)}",
        "",
        f"Playbook {_md_cell(report.playbook)}; {len(report.train_cases)} training and "
        f"{len(report.held_out_cases)} held-out cases; {len(report.epochs) - 1} epochs; "
        f"total cost {_usd(total)}.",
        "",
        "## Learning curve",
        "",
        *_md_table(CURVE_HEADERS, curve_rows(report)),
        "",
        f"## {verdict_title(report)}",
        "",
        *_md_table(VERDICT_HEADERS, verdict_rows(report)),
        "",
        "## Cost by role",
        "",
        *_md_table(COST_HEADERS, cost_rows(report.cost)),
        "",
        "## What each epoch changed",
    ]
    for epoch in report.epochs[1:]:
        lines += ["", f"### Epoch {epoch.epoch}", ""]
        lines += _step_lines(epoch) or ["- every training case passed; nothing to learn"]
        if epoch.playbook_diff:
            lines += ["", *_fence(epoch.playbook_diff, "diff")]
    lines += ["", "## Final playbook", "", *_fence(report.final_playbook or "(empty)\n")]
    return "\n".join(lines) + "\n"


_CSP = "default-src 'none'; style-src 'unsafe-inline'"
"""The page runs no script at all, whatever a case's text says."""
_CSS = (
    "body{font-family:system-ui,sans-serif;margin:2rem;max-width:70rem}"
    "table{border-collapse:collapse;margin:1rem 0}td,th{border:1px solid #ccc;padding:.3rem .6rem}"
    "td.n{text-align:right}pre{background:#f6f6f6;padding:.8rem;overflow-x:auto}"
    ".add{color:#0a6b2d}.del{color:#a3121f}"
)


def _html_table(headers: list[str], rows: list[list[str]], numeric: set[int]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="n">{html.escape(c)}</td>' if i in numeric else f"<td>{html.escape(c)}</td>"
            for i, c in enumerate(row)
        )
        + "</tr>"
        for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _html_diff(diff: str) -> str:
    out = []
    for line in diff.splitlines():
        css = "add" if line.startswith("+") else "del" if line.startswith("-") else ""
        text = html.escape(line)
        out.append(f'<span class="{css}">{text}</span>' if css else text)
    return "<pre>" + "\n".join(out) + "</pre>"


def to_html(report: LearningReport) -> str:
    """A self-contained page (inline CSS, no script, every text escaped)."""
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',
        f"<title>ACE learning — {html.escape(report.dataset)}</title><style>{_CSS}</style></head><body>",
        f"<h1>ACE learning — {html.escape(report.dataset)}</h1>",
        f"<p>Playbook <code>{html.escape(report.playbook)}</code>; {len(report.train_cases)} training and "
        f"{len(report.held_out_cases)} held-out cases; "
        f"total cost {html.escape(_usd(report.total_cost_usd))}.</p>",
        "<h2>Learning curve</h2>",
        _html_table(CURVE_HEADERS, curve_rows(report), {1, 2, 3, 4, 5}),
        f"<h2>{html.escape(verdict_title(report))}</h2>",
        _html_table(VERDICT_HEADERS, verdict_rows(report), {1, 2, 3, 4, 6}),
        "<h2>Cost by role</h2>",
        _html_table(COST_HEADERS, cost_rows(report.cost), {2, 3, 4, 5}),
        "<h2>What each epoch changed</h2>",
    ]
    for epoch in report.epochs[1:]:
        items = "".join(
            f"<li>{html.escape(line.strip().removeprefix('- '))}</li>" for line in _step_lines(epoch, _plain)
        )
        parts.append(
            f"<details open><summary>Epoch {epoch.epoch}: {len(epoch.steps)} failed training cases, "
            f"{epoch.bullets} bullets after</summary><ul>{items or '<li>nothing to learn</li>'}</ul>"
            f"{_html_diff(epoch.playbook_diff) if epoch.playbook_diff else ''}</details>"
        )
    parts += [
        "<h2>Final playbook</h2>",
        f"<pre>{html.escape(report.final_playbook or '(empty)')}</pre>",
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


__all__ = [
    "cost_rows",
    "curve_rows",
    "rich_cost_table",
    "rich_table",
    "rich_verdict_table",
    "to_html",
    "to_markdown",
    "verdict_rows",
    "verdict_title",
]
