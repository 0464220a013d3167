"""The SmartAO page in headless Chromium (Debian's ``chromium`` driven by Playwright): paste an essay, run
the agents, accept a Style patch, see the rubric chart, download the PatchJSON and check it with
Python. The essay has ``𠮷`` (two UTF-16 units, one code point) before the accepted change, so offsets
taken from JavaScript string indices would be off by one and the Python check would fail.
Screenshots go to ``test-artifacts/``."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.async_api import Page, Request, Route

from kanawa.apps.smartao.patch import PatchJSON
from kanawa.apps.smartao.session import sample_documents
from kanawa.apps.smartao.web import smartao_extension
from kanawa.server.http.app import create_app
from kanawa.server.runs.demo_agents import demo_agents
from tests.server.conftest import LiveServer, artifacts, settings_for
from tests.server.sse import KEY_A, KEY_B
from tests.server.test_page import page

__all__ = ["artifacts", "page"]  # fixtures shared with the timeline page's tests

ESSAY = (
    "■志望理由\n"
    "私は𠮷田町の商店街で育ちました。駅前の店の多くはシャッターを下ろしており、子どもの頃に通った文房具店も"
    "閉店しました。高校二年生の夏、私は市役所の「まちづくり高校生会議」に参加し、空き店舗を自習スペースにする"
    "案を提案しました。一か月の試行で延べ三百人の高校生が訪れ、近くのパン屋の売り上げも一割増えました。"
    "この経験から地域の課題は協力で解決できると学んだのである。\n"
    "■貴学で学びたいこと\n"
    "貴学の地域創生学部では一年次からフィールドワークが必修です。私は商店街の活性化を研究するゼミで、"
    "空き店舗の活用と地域経済の関係を学びたいと考えています。"
    "将来は故郷の町に戻り、子どもからお年寄りまでが集まれる場所を作ることが私の夢です。\n"
)
FIXED = "この経験から地域の課題は協力で解決できると学んだのです。"


@pytest.fixture(scope="module")
def page_server(tmp_path_factory: pytest.TempPathFactory, reference_db: Path) -> Iterator[LiveServer]:
    directory = tmp_path_factory.mktemp("smartao-page")
    shutil.copyfile(reference_db, directory / "references.sqlite3")
    extension = smartao_extension(directory, textlint=False)
    server = LiveServer(
        create_app(agents=demo_agents(), settings=settings_for("embedded", None), extensions=[extension])
    )
    server.start()
    try:
        yield server
    finally:
        server.stop()


async def _coach(page: Page, url: str, essay: str) -> None:
    await page.goto(f"{url}/smartao/#key={KEY_A}")
    await page.wait_for_selector("#demo:not([hidden])")  # no model configured: output is labelled
    assert "#key" not in page.url
    await page.fill("#essay", essay)
    await page.click("#run")
    await page.wait_for_selector("body[data-status=completed]", timeout=20_000)


async def test_coach_an_essay_accept_a_style_patch_and_download_the_patchjson(
    page: Page, page_server: LiveServer, artifacts: Path
) -> None:
    await _coach(page, page_server.url, ESSAY)
    assert await page.input_value("#policy")  # prefilled from the shipped sample policy
    assert await page.input_value("#university") == "サンプル大学"
    accept = page.locator("#style-list button.accept")
    assert await accept.count() == 1
    await accept.click()
    assert await accept.get_attribute("aria-pressed") == "true"
    assert await page.inner_text("#essay-view ins") == FIXED
    assert await page.locator("#essay-view mark.issue").count() >= 1
    assert await page.locator("#rubric-chart line.axis").count() == 7
    assert await page.locator("#scores tbody tr").count() == 7
    assert await page.locator("#draft-list li").count() >= 1
    assert await page.locator("#ref-list li").count() >= 1
    assert "%" in await page.inner_text("#guard-summary") or "％" in await page.inner_text("#guard-summary")
    assert "リクエスト数" in await page.inner_text("#usage")
    unlabelled = await page.evaluate(
        "[...document.querySelectorAll('input, select, textarea')]"
        ".filter((e) => e.type !== 'hidden' && e.labels.length === 0).map((e) => e.id)"
    )
    assert unlabelled == []
    await page.screenshot(path=str(artifacts / "smartao-page.png"), full_page=True)

    async with page.expect_download() as waiting:
        await page.click("#download")
    download = await waiting.value
    saved = artifacts / "smartao-patch.json"
    await download.save_as(str(saved))
    data = json.loads(saved.read_text(encoding="utf-8"))
    patch = PatchJSON.model_validate(data)
    assert patch.apply(ESSAY) == data["new_text"]
    assert FIXED in data["new_text"]
    [change] = patch.change_map
    assert ESSAY[change.start : change.end] == "この経験から地域の課題は協力で解決できると学んだのである。"


async def test_the_page_at_phone_width_and_in_english(
    page: Page, page_server: LiveServer, artifacts: Path
) -> None:
    await page.set_viewport_size({"width": 375, "height": 800})
    await page.goto(f"{page_server.url}/smartao/#key={KEY_A}")
    await page.select_option("#sample", "shibou_riyusho.txt")
    await page.click("#run")
    await page.wait_for_selector("body[data-status=completed]", timeout=20_000)
    await page.wait_for_selector("#rubric-chart")
    overflow = await page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0
    assert await page.inner_text("#run") == "コーチングを開始"
    await page.click("#lang")
    assert await page.get_attribute("html", "lang") == "en"
    assert await page.inner_text("#run") == "Start coaching"
    assert await page.inner_text("#style-heading") == "Style issues StyleAgent"
    assert await page.get_attribute("#lang", "aria-pressed") == "true"
    assert await page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0
    await page.screenshot(path=str(artifacts / "smartao-page-phone-en.png"), full_page=True)
    await page.click("#lang")
    assert await page.inner_text("#run") == "コーチングを開始"


async def test_the_page_resumes_a_dropped_stream_with_last_event_id(
    page: Page, page_server: LiveServer
) -> None:
    """The first response is cut after five chunks; the page resumes from the fifth chunk's seq and
    still draws the whole result."""
    kept: list[int] = []

    async def cut(route: Route) -> None:
        response = await route.fetch()
        blocks = (await response.body()).split(b"\r\n\r\n")
        chunks = [b for b in blocks if b"data:" in b][:5]
        kept.extend(int(b.split(b"id: ", 1)[1].split(b"\r\n", 1)[0]) for b in chunks)
        await route.fulfill(response=response, body=b"\r\n\r\n".join(chunks) + b"\r\n\r\n")

    resumed: list[str | None] = []

    def watch(request: Request) -> None:
        if request.url.endswith("/events"):
            resumed.append(request.headers.get("last-event-id"))

    await page.route("**/v1/runs", cut)
    page.on("request", watch)
    await _coach(page, page_server.url, ESSAY)
    assert kept == [1, 2, 3, 4, 5]
    assert resumed == ["5"]
    assert await page.locator("#rubric-chart line.axis").count() == 7
    assert await page.locator("#style-list li").count() == 1
    assert await page.locator("#style-list button.accept").count() == 1


async def test_a_copied_essay_shows_the_block_and_the_matching_passages(
    page: Page, page_server: LiveServer, artifacts: Path
) -> None:
    prior = next(d for d in sample_documents("prior_essays.json") if d.id == "prior-01").text
    await page.goto(f"{page_server.url}/smartao/#key={KEY_A}")
    await page.fill("#essay", "■志望理由\n" + prior)
    await page.click("#run")
    await page.wait_for_selector("body[data-status=failed]", timeout=20_000)
    assert "要修正" in await page.inner_text("#guard-summary")
    marked = await page.locator("#guard-view mark.copied").all_inner_texts()
    assert marked
    assert all(text in prior for text in marked)
    assert not await page.is_hidden("#alert")
    alert = await page.inner_text("#alert")
    assert "チェックによりランが止まりました" in alert
    assert not re.search(r"[A-Za-z]{3,}", alert), "the Japanese page says what stopped the run in Japanese"
    assert "GuardrailViolation" in (await page.get_attribute("#alert", "title") or "")  # details kept
    assert await page.is_disabled("#download")
    assert await page.locator("#style-list li").count() == 0  # the block stopped the run before Style
    # the agents the block kept from running say so, rather than still "waiting"
    skipped = page.locator('#agents li[data-state="skipped"]')
    assert await skipped.count() >= 3
    assert "実行されず" in await skipped.first.inner_text()
    assert await page.locator('#agents li[data-state="waiting"]').count() == 0
    await page.screenshot(path=str(artifacts / "smartao-page-blocked.png"), full_page=True)


@pytest.fixture(scope="module")
def textlint_server(tmp_path_factory: pytest.TempPathFactory, reference_db: Path) -> Iterator[LiveServer]:
    """The page over a service whose StyleAgent lints with textlint (the sidecar the host starts)."""
    directory = tmp_path_factory.mktemp("smartao-textlint-page")
    shutil.copyfile(reference_db, directory / "references.sqlite3")
    extension = smartao_extension(directory, textlint=True)
    server = LiveServer(
        create_app(agents=demo_agents(), settings=settings_for("embedded", None), extensions=[extension])
    )
    server.start()
    try:
        yield server
    finally:
        server.stop()


JAPANESE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]")
CONTENT = ", ".join(
    [
        "#essay-view",
        "#guard-view",
        "#style-list",
        "#draft-list",
        "#draft-note",
        "#ref-list",
        "#scores",
        "#eval-summary",
        "#lang",
    ]
)
"""Where the page may show Japanese on its English side, always marked ``lang="ja"``: the essay and the
quotes from it, what the agents wrote (suggestions, reasons, references), and the button that switches
back to Japanese."""

_SHOWN_JAPANESE = """(content) => {
  const japanese = /[\\u3040-\\u30ff\\u3400-\\u4dbf\\u4e00-\\u9fff]/;
  const shown = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const parent = node.parentElement;
    if (!japanese.test(node.textContent) || parent.closest("script, style, [lang=ja]")) continue;
    if (!parent.getClientRects().length) continue;  // not shown (hidden, a closed select's options)
    shown.push(`${parent.tagName.toLowerCase()}#${parent.id}.${parent.className}: ${node.textContent}`);
  }
  const marked = [...document.querySelectorAll("[lang=ja]")].filter((e) => !e.closest(content))
    .map((e) => `${e.tagName.toLowerCase()}#${e.id}: ${e.textContent}`);
  return { shown, marked, title: document.title, lang: document.documentElement.lang };
}"""


async def _shown_japanese(page: Page) -> dict[str, object]:
    found: dict[str, object] = await page.evaluate(_SHOWN_JAPANESE, CONTENT)
    return found


async def test_the_english_toggle_translates_every_string_the_page_shows(
    page: Page, page_server: LiveServer, artifacts: Path
) -> None:
    await page.goto(f"{page_server.url}/smartao/")  # no key yet: the page asks for one, in Japanese
    await page.wait_for_selector("#alert:not([hidden])")
    assert await page.inner_text("#alert") == "API キーが必要です。"
    await page.click("#lang")
    assert await page.inner_text("#alert") == "An API key is needed."
    assert await _shown_japanese(page) == {
        "shown": [],
        "marked": [],
        "title": "SmartAO Admissions essay coach",
        "lang": "en",
    }
    await page.click("#lang")
    await page.fill("#key", KEY_A)
    await page.click("#keygo")
    await page.select_option("#sample", "shibou_riyusho.txt")
    await page.click("#run")  # the run, in Japanese; then the toggle, once everything is shown
    await page.wait_for_selector("body[data-status=completed]", timeout=20_000)
    await page.wait_for_selector("#rubric-chart")
    assert (
        await page.inner_text("#status")
        == "完了しました。修正を採用・却下して PatchJSON をダウンロードできます。"
    )
    await page.click("#lang")
    assert (
        await page.inner_text("#status") == "Done. Accept or reject the changes, then download the PatchJSON."
    )
    assert await page.inner_text("#sample option:checked") == "Sample statement of purpose"
    states = await page.locator("#agents li").all_inner_texts()
    assert len(states) == 6
    assert all(re.fullmatch(r"\w+: (done|not run)", state) for state in states), states
    assert "Notation and form" in await page.inner_text("#scores")
    assert await page.locator("#style-list li").count() >= 1
    shown = await _shown_japanese(page)
    await page.screenshot(path=str(artifacts / "smartao-page-english.png"), full_page=True)
    assert shown["shown"] == []
    assert shown["marked"] == []  # Japanese is marked only inside the essay and the agents' writing
    await page.click("#lang")  # and back: the status line follows the language
    assert (
        await page.inner_text("#status")
        == "完了しました。修正を採用・却下して PatchJSON をダウンロードできます。"
    )
    assert "表記・形式" in await page.inner_text("#scores")


async def test_a_key_in_a_link_asks_before_it_replaces_the_key_and_the_tenant_is_shown(
    page: Page, page_server: LiveServer
) -> None:
    """Key fixation (issue 20 #7): /smartao/#key=B in a tab holding key A asks, in the page's
    language, naming both tenants; declining keeps A, accepting switches to B; the active tenant is
    shown throughout."""
    held = "() => sessionStorage.getItem('kanawa-key')"
    await page.goto(f"{page_server.url}/smartao/#key={KEY_A}")
    await page.wait_for_selector("#tenant-name:text-is('alpha')")
    assert await page.inner_text("#tenant") == "テナント: alpha"
    for choice in ("#switch-keep", "#switch-yes"):
        await page.goto("about:blank")
        await page.goto(f"{page_server.url}/smartao/#key={KEY_B}")
        await page.wait_for_selector("#switchbox:not([hidden])")
        assert "#key" not in page.url
        assert await page.evaluate(held) == KEY_A  # nothing replaced while the page asks
        assert await page.inner_text("#tenant-name") == "alpha"
        text = await page.inner_text("#switch-text")
        assert "テナント「beta」" in text, text
        assert "テナント「alpha」" in text, text
        await page.click("#lang")  # the question in English, and nothing left in Japanese
        text = await page.inner_text("#switch-text")
        assert "tenant “beta”" in text, text
        assert "tenant “alpha”" in text, text
        assert await page.inner_text("#tenant") == "Tenant: alpha"
        assert (await _shown_japanese(page))["shown"] == []
        await page.click("#lang")
        await page.click(choice)
        await page.wait_for_selector("#switchbox", state="hidden")
        expected = ("alpha", KEY_A) if choice == "#switch-keep" else ("beta", KEY_B)
        await page.wait_for_selector(f"#tenant-name:text-is('{expected[0]}')")
        assert await page.evaluate(held) == expected[1]


TEXTLINT_ESSAY = (
    "■志望理由\n"
    "私は地域の商店街の活性化に関心があり、高校二年生の夏に市役所の会議に参加して、空き店舗を自習スペース"
    "として使う案を提案し、一か月の試行で延べ三百人の高校生が訪れ、近くのパン屋の売り上げも一割増えたという"
    "結果を得ました。\n"
    "地域の課題は、人々が協力すれば解決することができます。\n"
    "この経験から地域の課題は協力で解決できると学んだのである。\n"
)


async def test_textlint_messages_are_shown_in_the_pages_language(
    page: Page, textlint_server: LiveServer, artifacts: Path
) -> None:
    """textlint's sentence-length rule writes English and its other rules Japanese: the page shows each
    in its own language, Japanese and then English."""
    await _coach(page, textlint_server.url, TEXTLINT_ESSAY)
    assert "textlint" in await page.inner_text("#style-note")
    items = await page.locator("#style-list li strong").all_inner_texts()
    rules = await page.locator("#style-list li .by").all_inner_texts()
    assert "(japanese/sentence-length)" in rules
    assert "(ja-no-redundant-expression)" in rules
    assert "(japanese/no-mix-dearu-desumasu)" in rules
    for message in items:  # every message in Japanese; textlint's English ones translated
        assert JAPANESE.search(message), message
        assert "sentence length" not in message
    long = items[rules.index("(japanese/sentence-length)")]
    assert re.fullmatch(r"一文が\d+文字あります（90文字以内に分けましょう）", long)
    await page.screenshot(path=str(artifacts / "smartao-textlint-ja.png"), full_page=True)
    await page.click("#lang")
    english = await page.locator("#style-list li strong").all_inner_texts()
    assert re.fullmatch(
        r"This sentence has \d+ characters; split it into sentences of at most 90\.",
        english[rules.index("(japanese/sentence-length)")],
    )
    for message in english:  # English, quoting the essay only inside “…”
        assert not JAPANESE.search(re.sub(r"“[^”]*”", "", message)), message
    assert (await _shown_japanese(page))["shown"] == []
    await page.screenshot(path=str(artifacts / "smartao-textlint-en.png"), full_page=True)
