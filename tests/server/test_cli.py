"""``kanawa serve`` / ``kanawa worker`` / ``kanawa trace view`` as a user runs them."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import httpx
from playwright.async_api import Page
from typer.testing import CliRunner

from kanawa.cli.app import app
from kanawa.cli.serve_cmd import page_url
from kanawa.trace.events import Tracer
from kanawa.trace.jsonl import JsonlTraceSink
from tests.server.conftest import free_port
from tests.server.test_page import _page_agents, page

__all__ = ["page"]  # the Chromium fixture of the timeline page's tests

ROOT = Path(__file__).resolve().parents[2]


def _clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KANAWA_")}
    return {**env, "PYTHONPATH": str(ROOT), "COLUMNS": "200", "NO_COLOR": "1"}


def test_serve_without_keys_prints_a_dev_key_and_serves_loopback() -> None:
    port = free_port()
    proc = subprocess.Popen(
        [str(Path(sys.executable).parent / "kanawa"), "serve", "--port", str(port), "--log-level", "warning"],
        env=_clean_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        key = ""
        for _ in range(50):
            line = proc.stdout.readline()
            found = re.search(r"development key (kw-dev-\S+)", line)
            if found:
                key = found.group(1)
                break
        assert key
        for _ in range(200):
            try:
                response = httpx.get(
                    f"http://127.0.0.1:{port}/v1/agents", headers={"Authorization": f"Bearer {key}"}
                )
                break
            except httpx.ConnectError:
                time.sleep(0.05)
        assert response.status_code == 200
        assert {a["name"] for a in response.json()["agents"]} == {"calc", "echo"}
        assert httpx.get(f"http://127.0.0.1:{port}/v1/agents").status_code == 401
    finally:
        proc.terminate()
        proc.communicate(timeout=20)


def test_serve_refuses_what_it_cannot_do_safely() -> None:
    runner = CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1", "KANAWA_API_KEYS": "", "KANAWA_REDIS_URL": ""})
    result = runner.invoke(app, ["serve", "--host", "0.0.0.0"])
    assert result.exit_code == 2
    assert "loopback" in result.output
    result = runner.invoke(app, ["serve", "--workers", "2"])
    assert result.exit_code == 2
    assert "KANAWA_REDIS_URL" in result.output
    result = runner.invoke(app, ["serve", "no_such_module_xyz:agents"])
    assert result.exit_code == 2
    assert "cannot import" in result.output
    celery_only = CliRunner(
        env={"KANAWA_CELERY_BROKER": "amqp://x//", "KANAWA_REDIS_URL": "", "COLUMNS": "200"}
    )
    result = celery_only.invoke(app, ["serve"])
    assert result.exit_code == 2
    assert "KANAWA_REDIS_URL" in result.output
    bad_mount = CliRunner(
        env={"KANAWA_SERVE_EXTENSIONS": "no_such_module_xyz:mounts", "KANAWA_API_KEYS": "", "COLUMNS": "200"}
    )
    result = bad_mount.invoke(app, ["serve"])
    assert result.exit_code == 2
    assert "cannot import 'no_such_module_xyz'" in result.output
    bad_keys = CliRunner(env={"KANAWA_API_KEYS": "nocolon", "COLUMNS": "200"})
    result = bad_keys.invoke(app, ["serve"])
    assert result.exit_code == 2
    assert "KANAWA_API_KEYS entry 1" in result.output


def test_worker_without_a_broker_says_what_to_set() -> None:
    runner = CliRunner(env={"KANAWA_CELERY_BROKER": "", "KANAWA_REDIS_URL": "", "COLUMNS": "200"})
    result = runner.invoke(app, ["worker"])
    assert result.exit_code == 2
    assert "KANAWA_CELERY_BROKER" in result.output


def test_trace_view_of_a_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    result = CliRunner(env={"COLUMNS": "200"}).invoke(app, ["trace", "view", str(tmp_path / "none.jsonl")])
    assert result.exit_code == 1
    assert "trace file not found" in result.output


def _serve(port: int, **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(Path(sys.executable).parent / "kanawa"), "serve", "--port", str(port), "--log-level", "warning"],
        env={**_clean_env(), **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _printed(proc: subprocess.Popen[str], pattern: str) -> tuple[re.Match[str], list[str]]:
    """Read the process's stdout line by line until ``pattern`` matches (and the lines read so far)."""
    assert proc.stdout is not None
    lines: list[str] = []
    for _ in range(50):
        line = proc.stdout.readline()
        lines.append(line)
        found = re.search(pattern, line)
        if found:
            return found, lines
    raise AssertionError(f"{pattern!r} was never printed: {lines}")


def _wait_until_up(url: str) -> None:
    for _ in range(200):
        try:
            httpx.get(url)
            return
        except httpx.ConnectError:
            time.sleep(0.05)
    raise AssertionError(f"{url} never answered")


async def test_serve_prints_the_runs_page_url_with_the_dev_key_and_the_url_opens_signed_in(
    page: Page,
) -> None:
    port = free_port()
    proc = _serve(port)
    try:
        url, lines = _printed(proc, r"runs\s+(http://\S+)")
        key = re.search(r"development key (kw-dev-\S+)", "".join(lines))
        assert key is not None
        assert url.group(1) == f"http://127.0.0.1:{port}/runs#key={key.group(1)}"
        _wait_until_up(f"http://127.0.0.1:{port}/healthz")
        await page.goto(url.group(1))  # what a click on the printed URL does
        await page.wait_for_selector("#notices div:text('No runs yet.')")
        assert not await page.locator("#keybox.show").count()  # signed in: no key was asked for
        assert page.url == f"http://127.0.0.1:{port}/runs"  # the key left the address bar
    finally:
        proc.terminate()
        proc.communicate(timeout=20)


def test_serve_with_configured_keys_prints_the_runs_page_url_without_a_key() -> None:
    port = free_port()
    proc = _serve(port, KANAWA_API_KEYS="sk-team-0123456789abcdef:team")
    try:
        url, lines = _printed(proc, r"runs\s+(http://\S+)")
        assert url.group(1) == f"http://127.0.0.1:{port}/runs"
        assert not any("development key" in line for line in lines)
    finally:
        proc.terminate()
        proc.communicate(timeout=20)


def test_page_url_brackets_an_ipv6_host() -> None:
    assert page_url("::1", 8000, "/runs", key="k") == "http://[::1]:8000/runs#key=k"
    assert page_url("localhost", 8000, "/smartao/") == "http://localhost:8000/smartao/"


def test_trace_view_refuses_oversized_heads_and_sends_the_page_security_headers(tmp_path: Path) -> None:
    """`kanawa trace view` serves with the request-head limits and page headers of `kanawa serve`."""

    async def write_trace() -> None:
        agent = _page_agents()["priced"]
        sink = JsonlTraceSink(tmp_path / "run.jsonl")
        agent.tracer = Tracer(sinks=[sink])
        await agent.arun("go")
        await sink.aclose()

    asyncio.run(write_trace())
    port = free_port()
    kanawa = str(Path(sys.executable).parent / "kanawa")
    proc = subprocess.Popen(
        [kanawa, "trace", "view", str(tmp_path / "run.jsonl"), "--port", str(port)],
        env={**_clean_env(), "KANAWA_MAX_HEAD_BYTES": "16384"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_until_up(f"http://127.0.0.1:{port}/trace")
        page = httpx.get(f"http://127.0.0.1:{port}/trace")
        assert page.status_code == 200
        assert "frame-ancestors 'none'" in page.headers.get("content-security-policy", "")
        assert page.headers.get("x-frame-options") == "DENY"
        ok = httpx.get(f"http://127.0.0.1:{port}/trace.json", headers={"X-Pad": "p" * 8_000})
        assert ok.status_code == 200
        big = httpx.get(f"http://127.0.0.1:{port}/trace.json", headers={"X-Pad": "p" * 40_000})
        assert big.status_code == 431
    finally:
        proc.terminate()
        proc.wait(timeout=20)
