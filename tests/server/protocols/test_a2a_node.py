"""kanawa's A2A server driven by the official JavaScript SDK (``@a2a-js/sdk``, installed from npm by
``tests/clients/a2a/`` and ``make node-clients``) on Node: the documented script streams an answer
and reads its task back; the probe cuts a stream mid-answer, resubscribes and gets the whole answer
once, and finds another tenant's task missing. The docs show the documented script byte for byte."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.docs.blocks import blocks_in
from tests.server.conftest import LiveServer
from tests.server.protocols.a2a_agents import GATES, TALE
from tests.server.protocols.a2a_support import serve
from tests.server.sse import KEY_A, KEY_B

ROOT = Path(__file__).resolve().parents[3]
CLIENTS = ROOT / "tests" / "clients" / "a2a"
PAGES = [ROOT / "docs" / "a2a.md", ROOT / "docs" / "a2a.ja.md"]


def _missing() -> str | None:
    if shutil.which("node") is None:
        return "node is not installed: the @a2a-js/sdk tests need Node.js 20+"
    if not (CLIENTS / "node_modules" / ".installed").is_file():
        return "the A2A JavaScript client is not installed: run `make node-clients`"
    return None


needs_node = pytest.mark.skipif(_missing() is not None, reason=_missing() or "")


@pytest.fixture(scope="module")
def live() -> Iterator[LiveServer]:
    yield from serve("embedded", None)


def _node(script: str, *args: str, agent_url: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KANAWA_")}
    env.update(KANAWA_A2A_URL=agent_url, KANAWA_API_KEY=KEY_A, NODE_NO_WARNINGS="1")
    node = shutil.which("node")
    assert node is not None
    return subprocess.Popen(
        [node, script, *args], cwd=CLIENTS, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_the_pages_show_the_tested_script(page: Path) -> None:
    shown = [block.code for block in blocks_in(page) if block.lang in ("js", "javascript")]
    assert (CLIENTS / "stream.mjs").read_text(encoding="utf-8") in shown


@needs_node
def test_the_documented_script_streams_the_answer_and_reads_the_task(live: LiveServer) -> None:
    process = _node("stream.mjs", "hi", agent_url=f"{live.url}/a2a/concierge")
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err[-3000:]
    assert out.splitlines() == ["Hello! You said: hi", "TASK_STATE_COMPLETED"]


@needs_node
def test_a_cut_stream_resubscribed_loses_nothing_and_repeats_nothing(live: LiveServer) -> None:
    question = f"tale {uuid.uuid4().hex}"
    process = _node(
        "probe.mjs", f"{live.url}/a2a/teller", question, KEY_B, agent_url=f"{live.url}/a2a/teller"
    )
    steps: dict[str, dict[str, object]] = {}
    with process:
        try:
            assert process.stdout is not None
            for line in process.stdout:
                step = json.loads(line)
                steps[step["step"]] = step
                if step["step"] == "snapshot":
                    GATES[question].set()  # the run finishes only once the resubscription stands
            errors = process.stderr.read() if process.stderr else ""
            process.wait(timeout=120)
        finally:
            GATES[question].set()
            if process.poll() is None:
                process.kill()
    assert process.returncode == 0, errors[-3000:]
    cut = str(steps["cut"]["text"])
    assert cut
    assert TALE.startswith(cut)
    assert cut != TALE
    assert str(steps["snapshot"]["text"]).startswith(cut)
    assert steps["resumed"]["text"] == TALE
    assert steps["resumed"]["kinds"][0] == "task"  # type: ignore[index]
    assert steps["status"]["state"] == 3  # TASK_STATE_COMPLETED
    assert steps["got"] == {"step": "got", "state": 3, "text": TALE}
    assert steps["other"]["error"] == "JsonRpcTaskNotFoundError"  # the SDK's TaskNotFound over JSON-RPC
