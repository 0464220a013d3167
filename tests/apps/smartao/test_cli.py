"""``kanawa smartao coach``: one coaching run from the shell, offline (demo model), with the shipped
samples; bad input gets one line and an exit code, never a traceback."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
from typer.testing import CliRunner

from kanawa.apps.smartao.session import sample_text
from kanawa.cli import app
from tests.server.conftest import ROOT, free_port


def test_coach_prints_the_report_as_json_and_the_rubric_as_text(tmp_path: Path) -> None:
    essay = tmp_path / "essay.txt"
    essay.write_text(sample_text("shoronbun.txt"), encoding="utf-8")
    policy = tmp_path / "policy.txt"
    policy.write_text(sample_text("admission_policy.txt"), encoding="utf-8")
    db = tmp_path / "evals.sqlite3"
    runner = CliRunner()
    result = runner.invoke(
        app, ["smartao", "coach", str(essay), "--policy", str(policy), "--db", str(db), "--json"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["demo"] is True
    assert report["patch"]["new_text"]
    assert len(report["rubric"]["scores"]) == 7
    text = runner.invoke(app, ["smartao", "coach", str(essay), "--db", str(db)])
    assert text.exit_code == 0, text.output
    assert "［デモ出力］" in text.output
    assert "表記・形式" in text.output


def test_coach_refuses_a_missing_or_empty_essay(tmp_path: Path) -> None:
    runner = CliRunner()
    missing = runner.invoke(app, ["smartao", "coach", str(tmp_path / "none.txt")])
    assert missing.exit_code == 1
    assert "cannot read" in missing.output
    empty = tmp_path / "empty.txt"
    empty.write_text("  \n", encoding="utf-8")
    result = runner.invoke(app, ["smartao", "coach", str(empty)])
    assert result.exit_code == 1
    assert "empty" in result.output
    assert "Traceback" not in result.output


def test_serve_prints_the_page_url_with_the_dev_key_and_serves_the_page_and_runs(
    tmp_path: Path, reference_db: Path
) -> None:
    shutil.copyfile(reference_db, tmp_path / "references.sqlite3")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("KANAWA_")}
    command = [str(Path(sys.executable).parent / "kanawa"), "smartao", "serve", "--port", str(port)]
    proc = subprocess.Popen(
        [*command, "--data", str(tmp_path), "--no-textlint", "--log-level", "warning"],
        env={**env, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = ""
        for _ in range(20):
            found = re.search(r"(http://127\.0\.0\.1:\d+/smartao/)#key=(kw-dev-\S+)", proc.stdout.readline())
            if found:
                url, key = found.groups()
                break
        assert url == f"http://127.0.0.1:{port}/smartao/"
        runs = proc.stdout.readline().split()  # the timeline's list, signed in with the same key
        assert runs == ["runs", f"http://127.0.0.1:{port}/runs#key={key}"]
        auth = {"Authorization": f"Bearer {key}"}
        for _ in range(200):
            try:
                page = httpx.get(url)
                break
            except httpx.ConnectError:
                time.sleep(0.05)
        assert page.status_code == 200
        assert "SmartAO" in page.text
        agents = {
            a["name"]: a["model"] for a in httpx.get(url + "../v1/agents", headers=auth).json()["agents"]
        }
        assert agents == {"calc": "function", "echo": "function", "smartao": "smartao-demo"}
        request = json.dumps({"essay": sample_text("shoronbun.txt")}, ensure_ascii=False)
        with httpx.stream(
            "POST", url + "../v1/runs", json={"agent": "smartao", "input": request}, headers=auth, timeout=30
        ) as response:
            body = "".join(response.iter_text())
        assert '"type":"rubric"' in body
        assert '"status":"completed"' in body
    finally:
        proc.terminate()
        proc.communicate(timeout=20)


def test_serve_refuses_a_public_host_without_keys() -> None:
    result = CliRunner().invoke(app, ["smartao", "serve", "--host", "0.0.0.0"], env={"KANAWA_API_KEYS": ""})
    assert result.exit_code == 2
    assert "loopback" in result.output


def _head_status(port: int, path: str, header_bytes: int) -> int:
    """The status a finished request head with one header line of ``header_bytes`` gets."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        head = f"GET {path} HTTP/1.1\r\nHost: x\r\nX-Big: ".encode() + b"b" * header_bytes
        sock.sendall(head + b"\r\n\r\n")
        answer = b""
        while b"\r\n" not in answer and (piece := sock.recv(65536)):
            answer += piece
    found = re.match(rb"HTTP/1\.1 (\d{3}) ", answer)
    assert found, answer[:200]
    return int(found.group(1))


def test_serve_refuses_oversized_heads_and_sends_the_page_security_headers(
    tmp_path: Path, reference_db: Path
) -> None:
    """`kanawa smartao serve` has the request-head limits and page headers `kanawa serve` has."""
    shutil.copyfile(reference_db, tmp_path / "references.sqlite3")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("KANAWA_")}
    command = [str(Path(sys.executable).parent / "kanawa"), "smartao", "serve", "--port", str(port)]
    proc = subprocess.Popen(
        [*command, "--data", str(tmp_path), "--no-textlint", "--log-level", "warning"],
        env={**env, "PYTHONPATH": str(ROOT), "KANAWA_API_KEYS": "kA:acme", "KANAWA_MAX_HEAD_BYTES": "16384"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(400):
            try:
                page = httpx.get(f"http://127.0.0.1:{port}/smartao/")
                break
            except httpx.ConnectError:
                time.sleep(0.05)
        else:
            raise AssertionError("kanawa smartao serve never answered")
        assert page.status_code == 200
        assert "frame-ancestors 'none'" in page.headers.get("content-security-policy", "")
        assert page.headers.get("x-frame-options") == "DENY"
        assert page.headers.get("x-content-type-options") == "nosniff"
        assert page.headers.get("referrer-policy") == "no-referrer"
        assert _head_status(port, "/smartao/", 8_000) == 200
        assert _head_status(port, "/smartao/", 40_000) == 431
    finally:
        proc.terminate()
        proc.wait(timeout=20)
