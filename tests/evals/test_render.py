"""Reports for people: the rich table, Markdown, and the HTML page in headless Chromium (drill-down into
a case's trace; nothing from a case's output runs as script)."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from playwright.async_api import Page, async_playwright
from rich.console import Console

from kanawa import Agent, FunctionLLM
from kanawa.evals import Case, Dataset, EvalReport, ScorerSpec
from kanawa.evals.render import rich_report, summarize, to_html, to_markdown, write_report
from kanawa.evals.runner import Eval
from tests.evals.agents import make_calculator
from tests.evals.test_runner import sums

CHROMIUM = "/usr/bin/chromium"
HOSTILE = (
    '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'
    '<a href="javascript:window.__pwned=3">x</a> | pipe'
)


@pytest.fixture
async def page() -> AsyncIterator[Page]:
    if shutil.which(CHROMIUM) is None:
        pytest.fail("chromium is not installed: run `make browser` (apt-get install chromium)")
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        try:
            context = await browser.new_context(viewport={"width": 1280, "height": 800})
            yield await context.new_page()
            await context.close()
        finally:
            await browser.close()


async def hostile_report() -> EvalReport:
    echo = Agent("echo", "Repeat the question.", model=FunctionLLM(lambda request: HOSTILE))
    data = Dataset(
        name="hostile <b>eval</b>",
        cases=[Case(name="<script>alert(1)</script>", inputs="hi"), Case(name="plain", inputs="hi")],
        scorers=[
            ScorerSpec(type="contains", value="<script>"),
            ScorerSpec(type="regex", pattern="^nothing$"),
        ],
    )
    return await Eval(data, echo, repeat=2).arun()


async def test_html_drill_down_opens_the_trace_and_runs_no_script(page: Page, tmp_path: Path) -> None:
    report = await hostile_report()
    path = Path(write_report(report, str(tmp_path / "report.html")))
    violations: list[str] = []
    page.on("console", lambda message: violations.append(message.text))
    await page.goto(path.as_uri())
    case = page.locator("details.case").first
    assert await case.get_attribute("data-case") == "<script>alert(1)</script>"
    timeline = case.locator("table.timeline")
    assert not await timeline.is_visible()
    await case.locator("summary").click()
    await timeline.wait_for(state="visible")
    events = await timeline.locator("tr.trace-row").evaluate_all("rows => rows.map(r => r.dataset.event)")
    assert events[0] == "agent_start"
    assert "llm_end" in events
    assert await timeline.get_attribute("data-run-id") == report.results[0].run_id
    assert await case.locator("pre.output").inner_text() == HOSTILE
    # the output and the case name are text, and no script ran (none could: the CSP forbids scripts)
    assert await page.evaluate("() => window.__pwned") is None
    assert await page.locator("script").count() == 0
    assert await page.locator("details.case img").count() == 0
    await case.locator("summary").click()
    await timeline.wait_for(state="hidden")
    assert await page.title() == "Eval: hostile <b>eval</b>"
    assert not any("pwned" in v for v in violations)


async def test_markdown_and_rich_table() -> None:
    report = await Eval(sums(3, wrong={1}), make_calculator(), repeat=2).arun()
    rows = {row.name: row for row in summarize(report)}
    assert rows["equals_expected"].mean == pytest.approx(4 / 6)
    assert rows["equals_expected"].failing_cases == ("sum-1",)
    assert rows["equals_expected"].spread == 0.0
    markdown = to_markdown(report)
    assert "| equals_expected | assertion | 6 | 67% | 0.000 | sum-1 |" in markdown
    assert (
        "| sum-1 | 0 | **fail** | ✗ equals_expected: expected 'The answer is 3.', got 'The answer is 4.'"
        in markdown
    )
    console = Console(record=True, width=200)
    console.print(rich_report(report))
    text = console.export_text()
    assert "equals_expected" in text
    assert "sum-1" in text
    assert "67%" in text


async def test_markdown_escapes_cells() -> None:
    markdown = to_markdown(await hostile_report())
    assert "<script>" not in markdown
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in markdown
    assert "## Eval: hostile &lt;b&gt;eval&lt;/b&gt;" in markdown
    lines = [line for line in markdown.splitlines() if line.startswith("| &lt;script&gt;")]
    assert len(lines) == 2  # one row per repeat, each still six cells
    assert all(line.count(" | ") == 5 for line in lines)


def test_report_formats_by_suffix(tmp_path: Path) -> None:
    report = EvalReport(name="empty", target="t")
    assert EvalReport.load(write_report(report, str(tmp_path / "r.json"))).name == "empty"
    assert "## Eval: empty" in Path(write_report(report, str(tmp_path / "r.md"))).read_text()
    assert "<!doctype html>" in to_html(report)
    with pytest.raises(ValueError, match=r"\.json, \.md or \.html"):
        write_report(report, str(tmp_path / "r.txt"))
