"""``kanawa serve myapp:agents`` and ``kanawa worker`` import ``myapp`` from the folder they are run in,
as uvicorn does — run as the installed console script, from a temporary folder holding ``myapp.py``."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

KANAWA = Path(sys.executable).parent / "kanawa"
MYAPP = """
from kanawa import Agent
from kanawa.llm.testing.models import FunctionLLM

agents = {"hello": Agent("hello", "Say hello.", model=FunctionLLM(lambda request: "hello from myapp"))}
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


pytestmark = pytest.mark.skipif(not KANAWA.exists(), reason="the kanawa console script is not installed")


def _env() -> dict[str, str]:
    """No KANAWA_* settings and no PYTHONPATH: only the working directory can make ``myapp`` importable."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KANAWA_") and k != "PYTHONPATH"}
    return {**env, "COLUMNS": "200", "NO_COLOR": "1"}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "myapp.py").write_text(MYAPP, encoding="utf-8")
    return tmp_path


def test_serve_imports_the_app_module_from_the_current_folder(project: Path) -> None:
    port = free_port()
    proc = subprocess.Popen(
        [str(KANAWA), "serve", "myapp:agents", "--port", str(port), "--log-level", "warning"],
        cwd=project,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        key = ""
        for line in proc.stdout:
            found = re.search(r"development key (kw-dev-\S+)", line)
            if found:
                key = found.group(1)
                break
        assert key, proc.stderr.read() if proc.stderr else ""
        for _ in range(400):
            try:
                response = httpx.get(
                    f"http://127.0.0.1:{port}/v1/agents", headers={"Authorization": f"Bearer {key}"}
                )
                break
            except httpx.ConnectError:
                assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
                time.sleep(0.05)
        assert response.status_code == 200
        assert [agent["name"] for agent in response.json()["agents"]] == ["hello"]
    finally:
        proc.terminate()
        proc.communicate(timeout=30)


def test_worker_imports_the_app_module_from_the_current_folder(project: Path) -> None:
    """The worker loads the registry before it connects to the broker; an attribute ``myapp`` lacks
    shows the module itself was imported (the error would otherwise be that it cannot be imported)."""
    env = {
        **_env(),
        "KANAWA_CELERY_BROKER": "redis://127.0.0.1:9/0",
        "KANAWA_REDIS_URL": "redis://127.0.0.1:9/0",
        "KANAWA_SERVE_AGENTS": "myapp:no_such_registry",
    }
    proc = subprocess.run(
        [str(KANAWA), "worker"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == "kanawa worker: module 'myapp' has no attribute 'no_such_registry'"
