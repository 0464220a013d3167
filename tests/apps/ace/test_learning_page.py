"""The ACE learning report's HTML page in Chromium, and its Markdown, with hostile text from a case:
nothing a case, a model or the playbook says runs as script or becomes markup."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from playwright.async_api import Page, async_playwright

from kanawa.apps.ace.learning import LearningReport, alearn
from kanawa.apps.ace.learning.demo import demo_dataset, demo_models
from kanawa.apps.ace.learning.render import to_markdown

CHROMIUM = "/usr/bin/chromium"
HOSTILE = (
    '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'
    '<a href="javascript:window.__pwned=3">x</a> | pipe ``` fence'
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


async def hostile_report() -> LearningReport:
    generator, reflector, curator = demo_models()
    report = await alearn(
        demo_dataset(), generator_model=generator, reflector_model=reflector, curator_model=curator, epochs=1
    )
    hostile = report.model_copy(deep=True, update={"dataset": HOSTILE})
    step = hostile.epochs[1].steps[0]
    step.case = HOSTILE
    step.feedback = HOSTILE
    step.key_insight = HOSTILE
    hostile.epochs[1].playbook_diff += f"+[af-00009] helpful=0 harmful=0 :: {HOSTILE}\n"
    hostile.final_playbook += f"[af-00009] helpful=0 harmful=0 :: {HOSTILE}\n"
    return hostile


async def test_the_learning_page_shows_hostile_text_as_text_and_runs_no_script(
    page: Page, tmp_path: Path
) -> None:
    report = await hostile_report()
    path = report.save(tmp_path / "learning.html")
    messages: list[str] = []
    page.on("console", lambda message: messages.append(message.text))
    await page.goto(path.as_uri())
    assert await page.title() == f"ACE learning — {HOSTILE}"
    assert await page.evaluate("() => window.__pwned") is None
    assert await page.locator("script").count() == 0
    assert await page.locator("img").count() == 0
    assert await page.locator("a").count() == 0
    curve = page.locator("table").first
    assert "0 (baseline)" in await curve.inner_text()
    details = page.locator("details").first
    assert HOSTILE in await details.inner_text()  # the step and the diff line, as text
    assert await details.locator("pre .add").count() >= 2  # added lines coloured in the diff
    assert not any("pwned" in m for m in messages)


async def test_markdown_escapes_hostile_text_and_keeps_the_fences_closed() -> None:
    markdown = to_markdown(await hostile_report())
    outside_fences = []
    fences = []
    inside = False
    fence = ""
    for line in markdown.splitlines():
        if not inside and line.startswith("```"):
            inside, fence = True, line[: len(line) - len(line.lstrip("`"))]
            fences.append(fence)
        elif inside and line == fence:
            inside = False
        elif not inside:
            outside_fences.append(line)
    assert not inside  # every fence closed
    assert "````" in fences  # longer than the ``` inside the hostile diff line
    text = "\n".join(outside_fences)
    assert "<script>" not in text
    assert "<img" not in text
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in text
    assert "\\| pipe" in text
