"""The live trace timeline page in headless Chromium (Debian's ``chromium`` driven by Playwright; no
browser is ever downloaded). Screenshots go to ``test-artifacts/`` for people to look at."""

from __future__ import annotations

import asyncio
import json
import shutil
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.async_api import Page, async_playwright

from kanawa import Agent
from kanawa.llm.pricing import cost_of
from kanawa.llm.testing import FunctionLLM
from kanawa.llm.testing.models import ModelRequest, Script
from kanawa.loop.config import AgentConfiguration
from kanawa.loop.errors import LLMCallFailed
from kanawa.server.http.app import create_app
from kanawa.server.http.trace_view import create_trace_app
from kanawa.trace.events import Tracer
from kanawa.trace.jsonl import JsonlTraceSink
from kanawa.types import AssistantMessage, ToolCall, Usage
from tests.server.agents import STORY, _story, server_agents, tick
from tests.server.conftest import LiveServer, settings_for
from tests.server.sse import AUTH_A, KEY_A, KEY_B, start_run

CHROMIUM = "/usr/bin/chromium"


@pytest.fixture
async def page() -> AsyncIterator[Page]:
    """A fresh headless Chromium page (one browser per test: the suite's event loop is per test)."""
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


PRICED_MODEL = "gpt-5-mini"


LIVE_GATE = threading.Event()
"""Opened by the live-run test once the page has drawn the run going: until then the ``gated`` agent's
last model call stays open, so the page sees the run running however loaded the machine is."""


async def _gated(request: ModelRequest) -> Script:
    """Two tool calls, then an answer that waits for :data:`LIVE_GATE`: the model call still waiting
    (no chunk of it yet) is on the page, drawn open, as soon as it starts."""
    if len(request.tool_results) < 2:
        n = len(request.tool_results)
        return AssistantMessage(tool_calls=(ToolCall(f"call_{n}", "tick", f'{{"n": {n}}}'),))
    await asyncio.to_thread(LIVE_GATE.wait, 30)
    return "slow and steady"


def _page_agents() -> dict[str, Agent[Any, Any]]:
    """The server test agents plus ``priced`` (the story on a model with a known price) and ``gated``
    (a run that goes on only when the test says so)."""
    agents = server_agents()
    story = agents["story"]
    agents["priced"] = Agent(
        "priced", "Tell a story.", tools=story.tools, model=FunctionLLM(_story, model=PRICED_MODEL)
    )
    agents["gated"] = Agent("gated", "Wait for the gate.", tools=[tick], model=FunctionLLM(_gated))
    return agents


def usd(value: float) -> str:
    """The page's money format."""
    return "$" + (f"{value:.4f}" if value >= 0.01 else f"{value:.6f}")


@pytest.fixture(scope="module")
def page_server() -> Iterator[LiveServer]:
    server = LiveServer(create_app(agents=_page_agents(), settings=settings_for("embedded", None))).start()
    try:
        yield server
    finally:
        server.stop()


async def _start(server: LiveServer, agent: str, text: str, *, wait: bool) -> str:
    async with (
        httpx.AsyncClient(base_url=server.url, timeout=20) as client,
        client.stream("POST", "/v1/runs", json={"agent": agent, "input": text}, headers=AUTH_A) as r,
    ):
        run_id = r.headers["x-run-id"]
        if wait:
            await r.aread()
    return run_id


async def test_the_run_page_draws_the_timeline_of_a_finished_run(
    page: Page, page_server: LiveServer, artifacts: Path
) -> None:
    run_id = await _start(page_server, "story", "go", wait=True)
    await page.goto(f"{page_server.url}/runs/{run_id}#key={KEY_A}")
    await page.wait_for_selector("body[data-status=completed]")
    assert await page.locator(".bar[data-kind=tool]").count() == 3
    assert await page.locator(".bar[data-kind=llm]").count() == 4
    assert await page.locator(".bar[data-kind=agent]").count() == 1
    assert (await page.inner_text("#answer")).strip() == STORY.strip()
    _prompt, completion = (await page.inner_text("#tokens")).split(" / ")
    assert int(completion) > 0
    # a scripted model has no price: no cost is shown, never $0
    assert await page.inner_text("#cost") == "–"
    assert await _llm_end_costs(page) == ["–"] * 4
    assert "#key" not in page.url  # the key leaves the address bar
    await page.screenshot(path=str(artifacts / "timeline-run.png"), full_page=True)


async def _llm_end_costs(page: Page) -> list[str]:
    """The cost column of the table's ``llm_end`` rows."""
    cells: list[str] = await page.eval_on_selector_all(
        "#rows tr",
        "rows => rows.filter(r => r.children[1].textContent === 'llm_end')"
        ".map(r => r.children[6].textContent)",
    )
    return cells


async def test_the_run_page_shows_each_model_calls_cost_and_the_runs_total(
    page: Page, page_server: LiveServer, artifacts: Path
) -> None:
    async with httpx.AsyncClient(base_url=page_server.url, timeout=20) as client:
        run_id, events = await start_run(client, "priced", "go")
    ends = [
        e.chunk["data"]
        for e in events
        if e.chunk["type"] == "trace" and e.chunk["data"]["event"] == "llm_end"
    ]
    assert len(ends) == 4
    for end in ends:  # priced by the server from the record's own model and usage
        usage = Usage(
            input_tokens=end["tok_prompt"],
            output_tokens=end["tok_completion"],
            reasoning_tokens=end["data"]["reasoning_tokens"],
            cached_tokens=end["data"]["cached_tokens"],
            requests=1,
        )
        assert end["cost_usd"] == cost_of(PRICED_MODEL, usage)
        assert end["cost_usd"] > 0
    total = events[-1].chunk["data"]["cost_usd"]
    assert total == pytest.approx(sum(end["cost_usd"] for end in ends))
    await page.goto(f"{page_server.url}/runs/{run_id}#key={KEY_A}")
    await page.wait_for_selector("body[data-status=completed]")
    assert await page.inner_text("#cost") == usd(total)
    assert await _llm_end_costs(page) == [usd(end["cost_usd"]) for end in ends]
    assert usd(ends[0]["cost_usd"]) in (
        await page.locator(".bar[data-kind=llm]").first.get_attribute("title") or ""
    )
    await page.screenshot(path=str(artifacts / "timeline-cost.png"), full_page=True)


async def test_the_run_page_follows_a_live_run_to_its_end(
    page: Page, page_server: LiveServer, artifacts: Path
) -> None:
    LIVE_GATE.clear()
    run_id = await _start(page_server, "gated", "go", wait=False)
    try:
        await page.goto(f"{page_server.url}/runs/{run_id}#key={KEY_A}")
        await page.wait_for_selector("body[data-status=running]")
        await page.wait_for_selector(".bar.open")  # the agent, still at work, is drawn open-ended
        await page.locator(".bar[data-kind=tool]").nth(1).wait_for()  # both tool calls, live
        # the third model call has sent nothing yet (it waits for the gate): it is shown all the same
        waiting = page.locator(".bar[data-kind=llm].open")
        await waiting.wait_for()
        assert await waiting.count() == 1
        assert await page.locator(".bar[data-kind=llm]").count() == 3
        assert await page.get_attribute("body", "data-status") == "running"
    finally:
        LIVE_GATE.set()
    await page.wait_for_selector("body[data-status=completed]", timeout=20_000)
    assert await page.locator(".bar[data-kind=tool]").count() == 2
    assert await page.inner_text("#answer") == "slow and steady"
    await page.screenshot(path=str(artifacts / "timeline-live.png"), full_page=True)


async def test_the_list_page_and_a_missing_key(page: Page, page_server: LiveServer) -> None:
    run_id = await _start(page_server, "echo", "listed", wait=True)
    await page.goto(f"{page_server.url}/runs#key={KEY_A}")
    await page.wait_for_selector(f"a[href='/runs/{run_id}']")
    fresh = await page.context.new_page()
    await fresh.goto(f"{page_server.url}/runs")  # sessionStorage is per tab: this one has no key
    await fresh.wait_for_selector("#keybox.show")


async def test_trace_view_draws_a_jsonl_trace_with_its_costs(
    page: Page, tmp_path: Path, artifacts: Path
) -> None:
    agent = _page_agents()["priced"]
    sink = JsonlTraceSink(tmp_path / "run.jsonl")
    agent.tracer = Tracer(sinks=[sink])
    await agent.arun("go")
    await sink.aclose()
    lines = (tmp_path / "run.jsonl").read_text().splitlines()
    assert sum(1 for line in lines if json.loads(line)["event"] == "tool_end") == 3
    server = LiveServer(create_trace_app(tmp_path / "run.jsonl")).start()
    try:
        await page.goto(f"{server.url}/")
        await page.wait_for_selector("body[data-status=completed]")
        assert await page.locator(".bar[data-kind=tool]").count() == 3
        assert await page.locator("#rows tr").count() == len(lines)
        costs = [
            cost_of(
                PRICED_MODEL,
                Usage(
                    input_tokens=r["tok_prompt"],
                    output_tokens=r["tok_completion"],
                    reasoning_tokens=0,
                    cached_tokens=0,
                    requests=1,
                ),
            )
            for r in map(json.loads, lines)
            if r["event"] == "llm_end"
        ]
        assert all(c is not None and c > 0 for c in costs)
        assert await _llm_end_costs(page) == [usd(c) for c in costs if c is not None]
        assert await page.inner_text("#cost") == usd(sum(c for c in costs if c is not None))
        await page.screenshot(path=str(artifacts / "timeline-trace-view.png"), full_page=True)
    finally:
        server.stop()


async def test_trace_view_shows_cached_input_and_prices_it_at_the_cache_rates(
    page: Page, tmp_path: Path
) -> None:
    agent = _page_agents()["priced"]
    sink = JsonlTraceSink(tmp_path / "raw.jsonl")
    agent.tracer = Tracer(sinks=[sink])
    await agent.arun("go")
    await sink.aclose()
    records = [json.loads(line) for line in (tmp_path / "raw.jsonl").read_text().splitlines()]
    ends = [r for r in records if r["event"] == "llm_end"]
    for r in ends:  # as a provider reports a warm prompt cache: part of the input read, part written
        r["tok_prompt"] = 4000
        r["data"]["cached_tokens"] = 3000
        r["data"]["cache_write_tokens"] = 500
    (tmp_path / "run.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    server = LiveServer(create_trace_app(tmp_path / "run.jsonl")).start()
    try:
        await page.goto(f"{server.url}/")
        await page.wait_for_selector("body[data-status=completed]")
        assert await page.inner_text("#cached") == f"{3000 * len(ends)} / {500 * len(ends)}"
        token_cells: list[str] = await page.eval_on_selector_all(
            "#rows tr",
            "rows => rows.filter(r => r.children[1].textContent === 'llm_end')"
            ".map(r => r.children[5].textContent)",
        )
        assert all(cell.endswith("(cache 3000 read / 500 written)") for cell in token_cells)
        cached = Usage(
            input_tokens=4000,
            output_tokens=ends[0]["tok_completion"],
            cached_tokens=3000,
            cache_write_tokens=500,
            requests=1,
        )
        plain = Usage(input_tokens=4000, output_tokens=ends[0]["tok_completion"], requests=1)
        cost, uncached = cost_of(PRICED_MODEL, cached), cost_of(PRICED_MODEL, plain)
        assert cost is not None
        assert uncached is not None
        assert cost < uncached
        assert (await _llm_end_costs(page))[0] == usd(cost)
    finally:
        server.stop()


def _fan(request: ModelRequest) -> Script:
    """Three tool calls at once (run in parallel), twice, then an answer."""
    turn = len(request.tool_results) // 3
    if turn < 2:
        calls = tuple(ToolCall(f"call_{n}", "tick", f'{{"n": {n}}}') for n in range(turn * 3, turn * 3 + 3))
        return AssistantMessage(tool_calls=calls)
    return "fanned out"


@pytest.fixture(scope="module")
def fan_server() -> Iterator[LiveServer]:
    agents = _page_agents()
    config = AgentConfiguration(max_tool_calls_per_tool=6)
    agents["fan"] = Agent("fan", "Fan out.", tools=[tick], model=FunctionLLM(_fan), config=config)
    server = LiveServer(create_app(agents=agents, settings=settings_for("embedded", None))).start()
    try:
        yield server
    finally:
        server.stop()


_GEOMETRY = """() => {
  const box = document.getElementById("timeline").getBoundingClientRect();
  const problems = [];
  let bars = 0;
  for (const lane of document.querySelectorAll("#timeline .lane")) {
    const name = lane.querySelector(".label").textContent;
    const track = lane.querySelector(".track").getBoundingClientRect();
    const rects = [...lane.querySelectorAll(".bar")].map((b) => b.getBoundingClientRect());
    bars += rects.length;
    rects.forEach((r, i) => {
      if (r.width < 1 || r.height < 1) problems.push(`${name}: bar ${i} is not drawn`);
      for (const outer of [track, box]) {
        if (r.left < outer.left || r.right > outer.right || r.top < outer.top || r.bottom > outer.bottom)
          problems.push(`${name}: bar ${i} [${r.left},${r.right}]x[${r.top},${r.bottom}] leaves`
                        + ` [${outer.left},${outer.right}]x[${outer.top},${outer.bottom}]`);
      }
      rects.slice(i + 1).forEach((o, j) => {
        if (r.left < o.right && o.left < r.right && r.top < o.bottom && o.top < r.bottom)
          problems.push(`${name}: bars ${i} and ${i + j + 1} overlap`);
      });
    });
  }
  return { bars, problems };
}"""


@pytest.mark.parametrize("width", [1280, 390])
async def test_parallel_tool_bars_never_overlap_and_no_bar_leaves_the_timeline(
    page: Page, fan_server: LiveServer, artifacts: Path, width: int
) -> None:
    run_id = await _start(fan_server, "fan", "go", wait=True)
    await page.set_viewport_size({"width": width, "height": 800})
    await page.goto(f"{fan_server.url}/runs/{run_id}#key={KEY_A}")
    await page.wait_for_selector("body[data-status=completed]")
    assert await page.locator(".bar[data-kind=tool]").count() == 6
    geometry = await page.evaluate(_GEOMETRY)
    await page.screenshot(path=str(artifacts / f"timeline-parallel-{width}.png"), full_page=True)
    assert geometry["bars"] == 6 + 3 + 1  # six tool calls, three model calls, the run
    assert geometry["problems"] == []
    assert await page.locator(".bar[data-kind=tool][data-row='2']").count() == 2  # three at once: 3 rows
    assert await page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0


async def test_trace_view_badge_shows_a_recovered_run_as_completed(page: Page, tmp_path: Path) -> None:
    """The ``leak`` agent's tool fails and the model answers anyway: an error record in a completed run."""
    agent = server_agents()["leak"]
    sink = JsonlTraceSink(tmp_path / "run.jsonl")
    agent.tracer = Tracer(sinks=[sink])
    result = await agent.arun("go")
    await sink.aclose()
    assert result.termination_reason == "completed"
    records = [json.loads(line) for line in (tmp_path / "run.jsonl").read_text().splitlines()]
    assert any(r.get("error") for r in records if r["event"] == "tool_end")
    server = LiveServer(create_trace_app(tmp_path / "run.jsonl")).start()
    try:
        await page.goto(f"{server.url}/trace")
        await page.wait_for_selector("body[data-status]")
        assert await page.inner_text("#status") == "completed"
        assert await page.locator(".bar.error[data-kind=tool]").count() == 1  # the failure still shows
    finally:
        server.stop()


async def test_trace_view_badge_shows_a_failed_run_as_failed(page: Page, tmp_path: Path) -> None:
    agent = server_agents()["boom"]
    sink = JsonlTraceSink(tmp_path / "run.jsonl")
    agent.tracer = Tracer(sinks=[sink])
    with pytest.raises(LLMCallFailed):
        await agent.arun("go")
    await sink.aclose()
    server = LiveServer(create_trace_app(tmp_path / "run.jsonl")).start()
    try:
        await page.goto(f"{server.url}/trace")
        await page.wait_for_selector("body[data-status]")
        assert await page.inner_text("#status") == "failed"
        assert await page.inner_text("#cost") == "–"  # its one call went to a model without a price
    finally:
        server.stop()


async def test_a_failed_run_on_a_model_without_a_price_shows_its_cost_as_unknown_never_zero(
    page: Page, page_server: LiveServer
) -> None:
    async with httpx.AsyncClient(base_url=page_server.url, timeout=20) as client:
        run_id, events = await start_run(client, "boom", "go")
    done = events[-1].chunk["data"]
    assert done["status"] == "failed"
    assert done["cost_usd"] is None
    await page.goto(f"{page_server.url}/runs/{run_id}#key={KEY_A}")
    await page.wait_for_selector("body[data-status=failed]")
    assert await page.inner_text("#cost") == "–"
    assert "$0" not in await page.inner_text("body")


async def test_the_servers_address_redirects_to_the_runs_page_keeping_the_key(
    page: Page, page_server: LiveServer
) -> None:
    async with httpx.AsyncClient(base_url=page_server.url) as client:
        answer = await client.get("/", follow_redirects=False)
    assert answer.status_code == 307
    assert answer.headers["location"] == "/runs"
    run_id = await _start(page_server, "echo", "from the root", wait=True)
    await page.goto(f"{page_server.url}/#key={KEY_A}")
    await page.wait_for_selector(f"a[href='/runs/{run_id}']")  # the list, read with the key
    assert page.url == f"{page_server.url}/runs"


async def test_a_key_in_a_link_never_silently_replaces_the_key_the_page_holds(
    page: Page, page_server: LiveServer
) -> None:
    """Key fixation (issue 20 #7): /runs#key=B in a tab holding key A asks, naming both tenants;
    keeping lists A's runs, switching lists B's; the active tenant is always shown."""
    mine = await _start(page_server, "echo", "alpha's run", wait=True)
    held = "() => sessionStorage.getItem('kanawa-key')"
    await page.goto(f"{page_server.url}/runs#key={KEY_A}")
    await page.wait_for_selector(f"a[href='/runs/{mine}']")
    assert await page.inner_text("#tenant-name") == "alpha"
    for choice in ("#switch-keep", "#switch-yes"):
        await page.goto("about:blank")
        await page.goto(f"{page_server.url}/runs#key={KEY_B}")
        await page.wait_for_selector("#switchbox:not([hidden])")
        text = await page.inner_text("#switch-text")
        assert "tenant \u201cbeta\u201d" in text, text
        assert "tenant \u201calpha\u201d" in text, text
        assert "#key" not in page.url
        assert await page.evaluate(held) == KEY_A  # nothing replaced while the page asks
        assert await page.locator("#run-rows tr").count() == 0  # nor anything loaded with either key
        await page.click(choice)
        await page.wait_for_selector("#switchbox", state="hidden")
        if choice == "#switch-keep":
            await page.wait_for_selector(f"a[href='/runs/{mine}']")
            assert await page.evaluate(held) == KEY_A
            await page.wait_for_function("document.getElementById('tenant-name').textContent === 'alpha'")
        else:
            await page.wait_for_selector("#tenant-name:text-is('beta')")
            assert await page.evaluate(held) == KEY_B
            await page.wait_for_selector("#notices :text('No runs yet.')")
            assert await page.locator(f"a[href='/runs/{mine}']").count() == 0
