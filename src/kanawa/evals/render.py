"""An eval report for people: a rich terminal table, Markdown (CI summaries, PR comments) and one HTML page.

All three start from :func:`summarize`: per scorer, how many case runs it judged, the pass rate (an
assertion) or mean (a score), and the spread over repeats — the mean of each case's standard
deviation, so a flaky case shows up as noise here before ``compare`` calls it a change.

The HTML page is one self-contained file (no build step, nothing fetched, works from ``file://``).
It has **no script at all** and says so in its Content-Security-Policy (``script-src 'none'``): every
value from a case — inputs, outputs, reasons, trace fields — is HTML-escaped text, and even if
escaping were missed the browser would refuse to run it. The drill-down is ``<details>``: opening a
case shows its outcomes, output and the run's trace timeline (the rows of
:func:`kanawa.trace.timeline.build_timeline`, the model ``kanawa trace show`` draws), bars placed
by offset and duration.
"""

from __future__ import annotations

import html
import json
import statistics
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kanawa.evals.report import CaseResult, EvalReport
from kanawa.evals.scoring import Assertion

if TYPE_CHECKING:
    from rich.console import RenderableType


@dataclass(frozen=True)
class ScorerSummary:
    """One scorer over the whole report."""

    name: str
    kind: str  # "assertion" or "score"
    runs: int
    mean: float
    """The pass rate of an assertion, the mean of a score."""
    spread: float
    """Mean over cases of the standard deviation across repeats (0 with one repeat)."""
    failing_cases: tuple[str, ...]


def summarize(report: EvalReport) -> list[ScorerSummary]:
    """Per-scorer summary rows, in first-seen order."""
    kinds: dict[str, str] = {}
    for result in report.results:
        for outcome in result.outcomes:
            kinds.setdefault(outcome.name, "assertion" if isinstance(outcome, Assertion) else "score")
    rows: list[ScorerSummary] = []
    for name, by_case in report.per_case_scores().items():
        values = [v for vs in by_case.values() for v in vs]
        spreads = [statistics.pstdev(vs) for vs in by_case.values() if len(vs) > 1]
        failing = tuple(case for case, vs in by_case.items() if kinds[name] == "assertion" and min(vs) < 1.0)
        rows.append(
            ScorerSummary(
                name=name,
                kind=kinds[name],
                runs=len(values),
                mean=statistics.fmean(values) if values else 0.0,
                spread=statistics.fmean(spreads) if spreads else 0.0,
                failing_cases=failing,
            )
        )
    return rows


def _money(value: float | None) -> str:
    return "—" if value is None else f"${value:.4f}"


def _headline(report: EvalReport) -> list[tuple[str, str]]:
    runs = len(report.results)
    errors = sum(1 for r in report.results if r.error)
    unjudged = sum(1 for r in report.results if r.error is None and r.scorer_errors)
    durations = [r.duration_ms for r in report.results]
    usage = report.total_usage
    rows = [
        ("target", report.target),
        ("case runs", f"{runs} ({len(report.case_names())} cases × {report.repeat})"),
        ("passed", f"{sum(r.passed for r in report.results)}/{runs} ({report.pass_rate:.0%})"),
        ("errors", str(errors) + (f" (+{unjudged} a scorer could not judge)" if unjudged else "")),
        ("tokens", f"{usage.total_tokens} ({usage.input_tokens} in, {usage.output_tokens} out)"),
        (
            "cost",
            f"{_money(sum(r.cost_usd or 0.0 for r in report.results))} runs"
            f" + {_money(report.judge_cost_usd)} judges",
        ),
        ("median latency", f"{statistics.median(durations):.0f} ms" if durations else "—"),
    ]
    if report.stopped_reason:
        rows.append(("stopped", f"{report.stopped_reason}; {len(report.skipped)} case run(s) not run"))
    return rows


def _value(summary: ScorerSummary) -> str:
    return f"{summary.mean:.0%}" if summary.kind == "assertion" else f"{summary.mean:.3f}"


# --- rich ----------------------------------------------------------------------------------------


def rich_report(report: EvalReport, *, cases: bool = True) -> RenderableType:
    """The report as rich renderables: headline, a per-scorer table, and (``cases``) a per-case table."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    head = Table.grid(padding=(0, 2))
    head.add_column(style="bold")
    head.add_column()
    for key, value in _headline(report):
        head.add_row(key, Text(value, style="red" if key == "stopped" else ""))

    scorers = Table(title=f"{report.name}: scorers", title_justify="left")
    for column, justify in (
        ("scorer", "left"),
        ("kind", "left"),
        ("runs", "right"),
        ("pass rate / mean", "right"),
        ("± over repeats", "right"),
        ("failing cases", "left"),
    ):
        scorers.add_column(column, justify=justify)  # type: ignore[arg-type]
    for row in summarize(report):
        style = "red" if row.failing_cases else "green" if row.kind == "assertion" else ""
        scorers.add_row(
            row.name,
            row.kind,
            str(row.runs),
            Text(_value(row), style=style),
            f"{row.spread:.3f}",
            ", ".join(row.failing_cases[:5]) + (" …" if len(row.failing_cases) > 5 else ""),
        )
    parts: list[Any] = [head, scorers]
    if cases:
        table = Table(title="cases", title_justify="left")
        for column in ("case", "run", "result", "outcomes", "ms", "tokens"):
            table.add_column(column)
        for result in report.results:
            verdict = (
                Text("error", "red")
                if result.errored
                else Text("pass", "green")
                if result.passed
                else Text("fail", "red")
            )
            table.add_row(
                Text(result.case),
                str(result.repeat),
                verdict,
                Text(_outcomes_line(result, limit=120)),
                f"{result.duration_ms:.0f}",
                str(result.usage.total_tokens),
            )
        parts.append(table)
    return Group(*parts)


def _outcomes_line(result: CaseResult, *, limit: int) -> str:
    if result.error:
        return result.error[:limit]
    bits = [f"⚠ {name}: no verdict ({why})" for name, why in result.scorer_errors.items()]
    for outcome in result.outcomes:
        if isinstance(outcome, Assertion):
            bits.append(
                f"{'✓' if outcome.passed else '✗'} {outcome.name}"
                + ("" if outcome.passed else f": {outcome.reason}")
            )
        else:
            bits.append(f"{outcome.name}={outcome.value:.2f}")
    line = "; ".join(bits)
    return line if len(line) <= limit else line[: limit - 1] + "…"


# --- Markdown ------------------------------------------------------------------------------------


def _md(text: str) -> str:
    """Safe in a Markdown table cell: no pipes or newlines, HTML escaped (GitHub renders some HTML)."""
    return html.escape(text.replace("\n", " ").replace("|", "\\|"), quote=False)


def to_markdown(report: EvalReport, *, cases: bool = True) -> str:
    """The report as GitHub-flavoured Markdown."""
    lines = [f"## Eval: {_md(report.name)}", ""]
    lines += ["| | |", "|---|---|"]
    lines += [f"| {key} | {_md(value)} |" for key, value in _headline(report)]
    lines += [
        "",
        "| scorer | kind | runs | pass rate / mean | ± over repeats | failing cases |",
        "|---|---|--:|--:|--:|---|",
    ]
    for row in summarize(report):
        failing = ", ".join(row.failing_cases[:10]) + (" …" if len(row.failing_cases) > 10 else "")
        lines.append(
            f"| {_md(row.name)} | {row.kind} | {row.runs} | {_value(row)} | {row.spread:.3f}"
            f" | {_md(failing)} |"
        )
    if cases:
        lines += ["", "| case | run | result | outcomes | ms | tokens |", "|---|--:|---|---|--:|--:|"]
        for r in report.results:
            verdict = "error" if r.errored else "pass" if r.passed else "**fail**"
            lines.append(
                f"| {_md(r.case)} | {r.repeat} | {verdict} | {_md(_outcomes_line(r, limit=200))} | "
                f"{r.duration_ms:.0f} | {r.usage.total_tokens} |"
            )
    return "\n".join(lines) + "\n"


# --- HTML ----------------------------------------------------------------------------------------

_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'none'; "
    "base-uri 'none'; form-action 'none'"
)

_STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:2rem;color:#1d2330;background:#fbfbfd}
h1{font-size:1.4rem}table{border-collapse:collapse;margin:.6rem 0 1.2rem}
td,th{border-bottom:1px solid #e2e4ea;padding:.3rem .6rem;text-align:left;vertical-align:top}
th{background:#f0f1f5}.num{text-align:right;font-variant-numeric:tabular-nums}
.pass{color:#16794a}.fail,.error{color:#b3261e;font-weight:600}
details.case{border:1px solid #e2e4ea;border-radius:6px;margin:.35rem 0;background:#fff}
details.case>summary{cursor:pointer;padding:.45rem .7rem;list-style:none;display:flex;gap:1rem}
details.case[open]>summary{border-bottom:1px solid #e2e4ea;background:#f6f7fa}
.body{padding:.6rem .9rem}
pre{white-space:pre-wrap;word-break:break-word;background:#f6f7fa;padding:.5rem;margin:.3rem 0}
.bar{position:relative;height:12px;background:#eef0f4;min-width:240px}
.bar>span{position:absolute;top:0;bottom:0;background:#5b7be0;min-width:2px}
.bar>span.error{background:#b3261e}.muted{color:#6b7280}.stopped{color:#b3261e;font-weight:600}
"""


def _e(value: object) -> str:
    return html.escape(
        value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=repr, indent=2)
    )


def _anchor(result: CaseResult) -> str:
    safe = "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in result.case)
    return f"case-{safe}-{result.repeat}"


def to_html(report: EvalReport) -> str:
    """The report as one offline HTML page with a per-case drill-down into each run's trace."""
    out: list[str] = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>Eval: {_e(report.name)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>Eval: {_e(report.name)}</h1>",
        f'<p class="muted">started {_e(report.started_at.isoformat())}</p>',
        "<table>",
    ]
    for key, value in _headline(report):
        cls = ' class="stopped"' if key == "stopped" else ""
        out.append(f"<tr><th>{_e(key)}</th><td{cls}>{_e(value)}</td></tr>")
    out.append("</table><h2>Scorers</h2><table><tr><th>scorer</th><th>kind</th><th>runs</th>")
    out.append("<th>pass rate / mean</th><th>± over repeats</th><th>failing cases</th></tr>")
    for row in summarize(report):
        cls = "fail" if row.failing_cases else "pass" if row.kind == "assertion" else ""
        links = ", ".join(_e(c) for c in row.failing_cases[:20])
        out.append(
            f'<tr><td>{_e(row.name)}</td><td>{row.kind}</td><td class="num">{row.runs}</td>'
            f'<td class="num {cls}">{_e(_value(row))}</td><td class="num">{row.spread:.3f}</td>'
            f"<td>{links}</td></tr>"
        )
    out.append("</table><h2>Cases</h2>")
    for result in report.results:
        out.append(_case_html(result))
    if report.skipped:
        out.append(f'<h2>Not run</h2><p class="stopped">{_e(report.stopped_reason or "")}</p><ul>')
        out += [f"<li>{_e(s)}</li>" for s in report.skipped]
        out.append("</ul>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def _case_html(result: CaseResult) -> str:
    verdict = "error" if result.errored else "pass" if result.passed else "fail"
    parts = [
        f'<details class="case" id="{_anchor(result)}" data-case="{_e(result.case)}"'
        f' data-repeat="{result.repeat}">',
        f'<summary><span class="{verdict}">{verdict}</span><strong>{_e(result.case)}</strong>'
        f'<span class="muted">run {result.repeat} · {result.duration_ms:.0f} ms · '
        f"{result.usage.total_tokens} tokens"
        f" · {_money(result.cost_usd)}</span></summary>",
        '<div class="body">',
    ]
    if result.error:
        parts.append(f'<p class="error">{_e(result.error)}</p>')
    for name, why in result.scorer_errors.items():
        parts.append(f'<p class="error">no verdict from {_e(name)}: {_e(why)}</p>')
    parts.append("<table><tr><th>outcome</th><th>value</th><th>reason</th></tr>")
    for outcome in result.outcomes:
        if isinstance(outcome, Assertion):
            word = "pass" if outcome.passed else "fail"
            value = f'<span class="{word}">{word}</span>'
        else:
            value = f"{outcome.value:.3f}"
        parts.append(f"<tr><td>{_e(outcome.name)}</td><td>{value}</td><td>{_e(outcome.reason)}</td></tr>")
    parts.append("</table><h4>Output</h4>")
    parts.append(
        f'<pre class="output">{_e(result.output if result.output is not None else result.text)}</pre>'
    )
    parts.append(_timeline_html(result))
    if result.trace_path:
        parts.append(
            f'<p class="muted">trace file: <code>{_e(result.trace_path)}</code>'
            " (<code>kanawa trace view</code>)</p>"
        )
    parts.append("</div></details>")
    return "\n".join(parts)


def _timeline_html(result: CaseResult) -> str:
    from kanawa.trace.records import TraceRecord
    from kanawa.trace.timeline import build_timeline

    if not result.trace:
        return '<p class="muted">no trace kept for this run</p>'
    records: list[TraceRecord] = []
    for raw in result.trace:
        try:
            records.append(TraceRecord.from_json(raw))
        except ValueError:
            continue
    timeline = build_timeline(records)
    wall = max(timeline.wall_ms, 1e-6)
    rows = [
        f'<h4>Trace timeline <span class="muted">({timeline.wall_ms:.0f} ms, '
        f"{timeline.tokens.total} tokens)</span></h4>",
        f'<table class="timeline" data-run-id="{_e(result.run_id or "")}">'
        "<tr><th>+ms</th><th>event</th><th>agent</th>"
        "<th>subject</th><th>step</th><th>ms</th><th>tokens</th><th></th></tr>",
    ]
    for row in timeline.rows:
        left = min(100.0, 100.0 * row.offset_ms / wall)
        width = min(100.0 - left, 100.0 * (row.duration_ms or 0.0) / wall)
        tokens = (
            ""
            if row.tok_prompt is None and row.tok_completion is None
            else f"{row.tok_prompt or 0}/{row.tok_completion or 0}"
        )
        cls = "error" if row.status == "error" else ""
        rows.append(
            f'<tr class="trace-row" data-event="{_e(row.event)}"><td class="num">{row.offset_ms:.1f}</td>'
            f"<td>{_e(row.event)}</td><td>{_e(row.agent)}</td><td>{_e(row.subject)}</td>"
            f'<td class="num">{"" if row.step is None else row.step}</td>'
            f'<td class="num">{"" if row.duration_ms is None else f"{row.duration_ms:.1f}"}</td>'
            f'<td class="num">{tokens}</td>'
            f'<td><div class="bar"><span class="{cls}" style="left:{left:.2f}%;width:{width:.2f}%">'
            "</span></div></td></tr>"
        )
        if row.error:
            rows.append(f'<tr><td></td><td colspan="7" class="error">{_e(row.error)}</td></tr>')
    rows.append("</table>")
    return "\n".join(rows)


def write_report(report: EvalReport, path: str, *, fmt: str | None = None) -> str:
    """Write ``report`` as JSON, Markdown or HTML chosen by ``fmt`` or the file's suffix."""
    from pathlib import Path

    file = Path(path)
    kind = fmt or {".json": "json", ".md": "markdown", ".html": "html", ".htm": "html"}.get(
        file.suffix.lower()
    )
    if kind == "json":
        report.save(file)
    elif kind == "markdown":
        file.write_text(to_markdown(report), encoding="utf-8")
    elif kind == "html":
        file.write_text(to_html(report), encoding="utf-8")
    else:
        raise ValueError(f"{file}: a report file ends in .json, .md or .html")
    return str(file)


__all__ = ["ScorerSummary", "rich_report", "summarize", "to_html", "to_markdown", "write_report"]
