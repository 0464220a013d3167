"""The deployment files, checked without Docker (no engine and no image registry here).

The Dockerfile's own steps are followed: its ``COPY`` sources (minus ``.dockerignore``) go into an
empty directory, a fresh Python 3.12 venv gets exactly its ``pip install`` spec, and its
``ENTRYPOINT`` (on 127.0.0.1 and a free port instead of 0.0.0.0:8000, with ``KANAWA_API_KEYS``) must
serve ``/healthz``, the timeline page and a demo run over SSE. That catches what building the image
would: a file the wheel does not ship (the page, the price table), an extra that lacks a dependency,
an entry point that does not start. ``compose.yaml`` is held to what kanawa reads and runs, and the
environment table of docs/server.md to :data:`~kanawa.server.settings.ENVIRONMENT`.

The venv is cached under ``.cache/docker-venvs/<hash of the copied files, the spec and Python>``:
built once under a file lock (test processes running in parallel wait for it instead of building it
twice, and hold it shared while they use it); building a new one removes the unused older ones.
"""

from __future__ import annotations

import fcntl
import fnmatch
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
import yaml

from kanawa.server.settings import ENVIRONMENT, ServerSettings
from tests.server.conftest import ROOT, free_port
from tests.server.sse import parse_blocks

VENV_CACHE = ROOT / ".cache" / "docker-venvs"
KEY = "kw-deploy-test-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {KEY}"}

# The first test builds the image's venv with pip (tens of seconds on a quiet machine, past the suite's
# 120 s default on a busy one, where it failed as a timeout); the build's own steps have their limits.
pytestmark = pytest.mark.timeout(600)


# ------------------------------------------------------------------------------- the Dockerfile


@dataclass
class Recipe:
    """What the Dockerfile does, as far as a venv can follow it."""

    base: str = ""
    workdir: PurePosixPath = field(default_factory=lambda: PurePosixPath("/"))
    env: dict[str, str] = field(default_factory=dict)
    copies: list[tuple[list[str], str]] = field(default_factory=list)
    install: str = ""
    entrypoint: list[str] = field(default_factory=list)
    expose: list[int] = field(default_factory=list)


def _instructions(text: str) -> Iterator[tuple[str, str]]:
    """``(INSTRUCTION, arguments)`` with continuation lines joined and comments dropped."""
    logical = ""
    for line in text.splitlines():
        stripped = line.strip()
        if not logical and (not stripped or stripped.startswith("#")):
            continue
        if stripped.endswith("\\"):
            logical += stripped[:-1] + " "
            continue
        logical += stripped
        word, _, rest = logical.partition(" ")
        yield word.upper(), rest.strip()
        logical = ""


def read_recipe(path: Path) -> Recipe:
    recipe = Recipe()
    for word, rest in _instructions(path.read_text(encoding="utf-8")):
        if word == "FROM":
            recipe.base = rest
        elif word == "WORKDIR":
            recipe.workdir = recipe.workdir / rest
        elif word == "ENV":
            for pair in shlex.split(rest):
                name, _, value = pair.partition("=")
                recipe.env[name] = value
        elif word == "COPY":
            *sources, destination = shlex.split(rest)
            assert not any(s.startswith("--") for s in sources), f"COPY flags are not followed: {rest}"
            recipe.copies.append((sources, destination))
        elif word == "RUN":
            for command in rest.split("&&"):
                argv = shlex.split(command)
                if argv[:2] == ["pip", "install"]:
                    specs = [a for a in argv[2:] if not a.startswith("-")]
                    assert len(specs) == 1, f"one local project spec expected: {command}"
                    recipe.install = specs[0]
        elif word == "ENTRYPOINT":
            recipe.entrypoint = json.loads(rest)
        elif word == "EXPOSE":
            recipe.expose += [int(p.split("/")[0]) for p in rest.split()]
    return recipe


def _ignored(relative: PurePosixPath, patterns: list[str]) -> bool:
    """``.dockerignore`` matching for the forms the file uses: ``**/<glob>`` (any depth) and paths."""
    for pattern in patterns:
        if pattern.startswith("**/"):
            if any(fnmatch.fnmatchcase(part, pattern[3:]) for part in relative.parts):
                return True
        elif fnmatch.fnmatchcase(str(relative), pattern.rstrip("/")):
            return True
    return False


def _walk(top: Path, patterns: list[str]) -> Iterator[Path]:
    """The files under ``top`` that ``.dockerignore`` lets through (ignored directories not entered)."""
    for directory, subdirectories, names in os.walk(top):
        here = Path(directory)
        subdirectories[:] = sorted(d for d in subdirectories if not _ignored(_relative(here / d), patterns))
        for name in sorted(names):
            if not _ignored(_relative(here / name), patterns):
                yield here / name


def _relative(path: Path) -> PurePosixPath:
    return PurePosixPath(path.relative_to(ROOT).as_posix())


def copied_files(recipe: Recipe) -> dict[PurePosixPath, Path]:
    """Destination (relative to WORKDIR) → source file, as ``COPY`` would place them."""
    ignore_file = ROOT / ".dockerignore"
    patterns = [
        line.strip()
        for line in (ignore_file.read_text().splitlines() if ignore_file.exists() else [])
        if line.strip() and not line.startswith("#")
    ]
    for pattern in patterns:
        assert pattern.startswith("**/") or "*" not in pattern, f"unsupported .dockerignore form {pattern}"
    out: dict[PurePosixPath, Path] = {}
    for sources, destination in recipe.copies:
        into_dir = destination.endswith("/") or len(sources) > 1
        target = PurePosixPath(destination)
        for source in sources:
            path = ROOT / source
            assert path.exists(), f"COPY {source}: not in the build context"
            if path.is_dir():
                for file in _walk(path, patterns):
                    inner = PurePosixPath(file.relative_to(path).as_posix())
                    out[target / path.name / inner if into_dir else target / inner] = file
            elif not _ignored(PurePosixPath(source), patterns):
                out[target / path.name if into_dir else target] = path
    return {PurePosixPath(os.path.normpath(d)): s for d, s in out.items()}


# ------------------------------------------------------------------------- the venv ("image")


@dataclass
class Image:
    recipe: Recipe
    venv: Path
    workdir: Path

    @property
    def bin(self) -> Path:
        return self.venv / "bin"

    def env(self, home: Path, **extra: str) -> dict[str, str]:
        """A container's environment: the Dockerfile's ENV, the venv first on PATH, nothing of ours."""
        return {"PATH": f"{self.bin}:/usr/bin:/bin", "HOME": str(home), **self.recipe.env, **extra}


def _build(target: Path, workdir: Path, recipe: Recipe) -> None:
    shutil.rmtree(target, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(target)], check=True, timeout=300)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(recipe.env)
    subprocess.run(
        [str(target / "bin" / "python"), "-m", "pip", "install", "-q", recipe.install],
        cwd=workdir,
        env=env,
        check=True,
        timeout=900,
    )
    (target / ".ready").write_text("ok\n")


def _prune(keep: str) -> None:
    """Remove older venvs nobody holds (a changed source tree makes a new one each time)."""
    for lock_path in VENV_CACHE.glob("*.lock"):
        key = lock_path.stem
        if key == keep:
            continue
        with lock_path.open("a") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue
            shutil.rmtree(VENV_CACHE / key, ignore_errors=True)
            lock_path.unlink(missing_ok=True)


@pytest.fixture(scope="module")
def image(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Image]:
    recipe = read_recipe(ROOT / "Dockerfile")
    assert recipe.base.startswith("python:3.12"), recipe.base
    if sys.version_info[:2] == (3, 11):  # make test runs the suite on 3.11 as well
        pytest.skip("the image runs Python 3.12 (python:3.12-slim): the 3.12 suite replays it")
    assert sys.version_info[:2] == (3, 12), "the venv must use the image's Python (3.12)"
    files = copied_files(recipe)
    workdir = tmp_path_factory.mktemp("image") / recipe.workdir.relative_to("/")
    digest = hashlib.sha256(f"{sys.version}\n{recipe.install}\n".encode())
    for destination, source in sorted(files.items()):
        (workdir / destination).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, workdir / destination)
        digest.update(f"{destination}\n".encode() + source.read_bytes())
    key = digest.hexdigest()[:16]
    VENV_CACHE.mkdir(parents=True, exist_ok=True)
    with (VENV_CACHE / f"{key}.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one builder; the others wait here for its venv
        if not (VENV_CACHE / key / ".ready").is_file():
            _build(VENV_CACHE / key, workdir, recipe)
            _prune(keep=key)
        fcntl.flock(lock, fcntl.LOCK_SH)  # held while in use: a newer build does not remove it
        yield Image(recipe, VENV_CACHE / key, workdir)


def test_the_image_holds_the_package_it_built_not_the_checkout(image: Image, tmp_path: Path) -> None:
    where = subprocess.run(
        [str(image.bin / "python"), "-c", "import kanawa, sys; print(kanawa.__file__)"],
        cwd=image.workdir,
        env=image.env(tmp_path),
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert Path(where).is_relative_to(image.venv), where


def test_the_entrypoint_serves_health_the_page_and_a_demo_run(image: Image, tmp_path: Path) -> None:
    argv = list(image.recipe.entrypoint)
    assert argv[:2] == ["kanawa", "serve"], argv
    port = free_port()
    assert image.recipe.expose == [int(argv[argv.index("--port") + 1])], "EXPOSE is the served port"
    argv[argv.index("--host") + 1] = "127.0.0.1"
    argv[argv.index("--port") + 1] = str(port)
    argv[0] = str(image.bin / argv[0])
    process = subprocess.Popen(
        argv,
        cwd=image.workdir,
        env=image.env(tmp_path, KANAWA_API_KEYS=f"{KEY}:acme"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        with httpx.Client(base_url=base, timeout=20) as client:
            _wait_until_serving(client, process)
            assert client.get("/healthz").json() == {"status": "ok"}
            assert "kanawa" in client.get("/runs").text  # the page is package data
            assert client.post("/v1/runs", json={"agent": "calc", "input": "2+3?"}).status_code == 401
            with client.stream(
                "POST", "/v1/runs", json={"agent": "calc", "input": "2+3?"}, headers=AUTH
            ) as response:
                assert response.status_code == 200
                events, _, _ = parse_blocks(response.read())
    finally:
        process.terminate()
        try:
            process.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
    assert [e.id for e in events] == list(range(1, len(events) + 1))
    chunks = [e.chunk for e in events]
    assert next(c for c in chunks if c["type"] == "tool_response")["data"]["name"] == "calculator"
    assert next(c for c in chunks if c["type"] == "final")["data"]["output"] == "The answer is 5."
    assert chunks[-1]["type"] == "done"
    assert chunks[-1]["data"]["status"] == "completed"


def _wait_until_serving(client: httpx.Client, process: subprocess.Popen[bytes]) -> None:
    """Poll ``/healthz`` until it answers (a readiness wait); fail with the server's output if the
    process ends first."""
    for _ in range(600):
        if process.poll() is not None:
            out, err = process.communicate()
            pytest.fail(f"the entrypoint exited with {process.returncode}: {out.decode()}{err.decode()}")
        try:
            if client.get("/healthz", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    pytest.fail("the entrypoint never answered /healthz")


# ---------------------------------------------------------------------------------- compose.yaml


def _compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((ROOT / "compose.yaml").read_text(encoding="utf-8"))
    return loaded


def _read_by_kanawa() -> dict[str, str]:
    """Every ``KANAWA_*`` variable named in the package's source → the first module naming it."""
    found: dict[str, str] = {}
    for path in sorted((ROOT / "src" / "kanawa").rglob("*.py")):
        for name in re.findall(r"[\"'](KANAWA_[A-Z0-9_]+)[\"']", path.read_text(encoding="utf-8")):
            found.setdefault(name, str(path.relative_to(ROOT)))
    return found


def _substituted(value: str) -> str:
    """Compose's ``${VAR:?message}`` / ``${VAR:-default}`` with a test value for the required ones."""
    return re.sub(
        r"\$\{(\w+)(?::([?-])([^}]*))?\}",
        lambda m: f"{KEY}:acme" if m.group(2) == "?" else (m.group(3) or ""),
        value,
    )


def test_compose_runs_the_images_commands_with_variables_kanawa_reads(image: Image, tmp_path: Path) -> None:
    compose = _compose()
    services = compose["services"]
    assert set(services) == {"app", "worker", "redis", "postgres"}
    read = _read_by_kanawa()
    for name in ("app", "worker"):
        service = services[name]
        assert service["build"] == ".", "built from the Dockerfile checked above"
        entrypoint = service.get("entrypoint", image.recipe.entrypoint)
        argv = [*entrypoint, *service.get("command", [])]
        # click parses every option before it honours --help: an unknown one is exit code 2
        run = subprocess.run(
            [str(image.bin / argv[0]), *argv[1:], "--help"],
            cwd=image.workdir,
            env=image.env(tmp_path),
            capture_output=True,
            text=True,
            check=False,
        )
        assert run.returncode == 0, f"{name}: {argv} — {run.stderr}"
        env = {key: _substituted(str(value)) for key, value in service["environment"].items()}
        unknown = sorted(set(env) - set(read))
        assert not unknown, f"{name} sets variables kanawa never reads: {unknown}"
        settings = {k: v for k, v in env.items() if k in ENVIRONMENT.values()}
        assert settings, f"{name} configures the service"
        _check_settings_parse(settings)
        for variable in ("KANAWA_REDIS_URL", "KANAWA_CELERY_BROKER", "KANAWA_DATABASE_URL"):
            if variable in env:
                host = urlsplit(env[variable]).hostname
                assert host in services, f"{name}: {variable} points at {host}, not a service"
                assert host in service.get("depends_on", {}), f"{name} must wait for {host}"
    database = urlsplit(services["app"]["environment"]["KANAWA_DATABASE_URL"])
    postgres = services["postgres"]["environment"]
    assert (database.username, database.password, database.path.lstrip("/")) == (
        postgres["POSTGRES_USER"],
        postgres["POSTGRES_PASSWORD"],
        postgres["POSTGRES_DB"],
    )
    assert services["worker"]["environment"]["KANAWA_CELERY_BROKER"].startswith("redis://")
    port = int(image.recipe.entrypoint[image.recipe.entrypoint.index("--port") + 1])
    assert services["app"]["ports"] == [f"{port}:{port}"]
    assert f"127.0.0.1:{port}/healthz" in " ".join(services["app"]["healthcheck"]["test"])


def _check_settings_parse(env: dict[str, str]) -> None:
    saved = {name: os.environ.get(name) for name in ENVIRONMENT.values()}
    try:
        for name in ENVIRONMENT.values():
            os.environ.pop(name, None)
        os.environ.update(env)
        ServerSettings.from_env()  # raises naming a malformed variable
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


# ---------------------------------------------------------------------- the environment variables


SAMPLES = {
    "KANAWA_API_KEYS": ("k:t", "api_keys", "k:t"),
    "KANAWA_API_KEYS_FILE": ("/etc/keys", "api_keys_file", Path("/etc/keys")),
    "KANAWA_REDIS_URL": ("redis://r:6379/0", "redis_url", "redis://r:6379/0"),
    "KANAWA_REDIS_PREFIX": ("p:", "redis_prefix", "p:"),
    "KANAWA_CELERY_BROKER": ("amqp://b//", "celery_broker", "amqp://b//"),
    "KANAWA_CELERY_QUEUE": ("q", "celery_queue", "q"),
    "KANAWA_RUN_TTL": ("7", "run_ttl", 7.0),
    "KANAWA_RUN_BUFFER": ("99", "run_buffer", 99),
    "KANAWA_SSE_PING": ("0.5", "sse_ping", 0.5),
    "KANAWA_MAX_REQUEST_BYTES": ("2048", "max_request_bytes", 2048),
    "KANAWA_MAX_HEAD_BYTES": ("4096", "max_head_bytes", 4096),
    "KANAWA_MAX_HEADERS": ("20", "max_headers", 20),
    "KANAWA_HEAD_TIMEOUT": ("2.5", "head_timeout", 2.5),
    "KANAWA_RATE_LIMIT": ("5", "rate_limit", 5),
    "KANAWA_MAX_RUNS": ("3", "max_runs", 3),
    "KANAWA_TENANT_MAX_TOKENS": ("10", "tenant_max_tokens", 10),
    "KANAWA_TENANT_MAX_REQUESTS": ("4", "tenant_max_requests", 4),
    "KANAWA_TENANT_MAX_COST_USD": ("1.5", "tenant_max_cost_usd", 1.5),
    "KANAWA_SERVE_AGENTS": ("app:agents", "serve_agents", "app:agents"),
    "KANAWA_SERVE_EXTENSIONS": ("app:extensions", "serve_extensions", "app:extensions"),
    "KANAWA_GC_FREEZE": ("0", "gc_freeze", False),
    "KANAWA_GC_THRESHOLD": ("0", "gc_threshold", 0),
    "KANAWA_SSE_WRITE_TIMEOUT": ("2.5", "sse_write_timeout", 2.5),
    "KANAWA_MAX_STREAMS": ("7", "max_streams", 7),
    "KANAWA_MAX_RUN_STREAMS": ("3", "max_run_streams", 3),
    "KANAWA_MCP_SESSIONS": ("4", "mcp_sessions", 4),
    "KANAWA_MCP_SESSION_IDLE": ("60", "mcp_session_idle", 60.0),
    "KANAWA_MCP_EVENT_BYTES": ("1048576", "mcp_event_bytes", 1_048_576),
    "KANAWA_AUTH_FAILURES": ("0", "auth_failures", 0),
    "KANAWA_TENANT_RUN_BYTES": ("1048576", "tenant_run_bytes", 1_048_576),
    "KANAWA_RUN_BYTES": ("0", "run_bytes", 0),
    "KANAWA_PUBLIC_URL": ("https://a.example/k/", "public_url", "https://a.example/k"),
    "KANAWA_ALLOWED_HOSTS": ("A.example,*.b.example", "allowed_hosts", ("a.example", "*.b.example")),
    "KANAWA_A2A_CARD_NEEDS_KEY": ("1", "a2a_card_needs_key", True),
    "KANAWA_A2A_LIST_BYTES": ("200000", "a2a_list_bytes", 200_000),
    "KANAWA_CORS_ORIGINS": (
        "http://a.example:5173, https://b.example/",
        "cors_origins",
        ("http://a.example:5173", "https://b.example"),
    ),
}


def test_every_settings_variable_is_read_and_in_the_documented_table(monkeypatch: pytest.MonkeyPatch) -> None:
    assert set(SAMPLES) == set(ENVIRONMENT.values()), "a new variable needs a sample here"
    for name in ENVIRONMENT.values():
        monkeypatch.delenv(name, raising=False)
    for name, (raw, attribute, parsed) in SAMPLES.items():
        assert ENVIRONMENT[attribute] == name
        assert getattr(ServerSettings.from_env(), attribute) != parsed
        monkeypatch.setenv(name, raw)
        assert getattr(ServerSettings.from_env(), attribute) == parsed, name
        monkeypatch.delenv(name)
    page = (ROOT / "docs" / "server.md").read_text(encoding="utf-8")
    table = page[page.index("| variable | meaning | default |") :].split("\n\n", 1)[0]
    rows = [line for line in table.splitlines()[2:] if line.startswith("|")]
    documented = {name for row in rows for name in re.findall(r"`(KANAWA_\w+)`", row.split("|")[1])}
    assert documented == set(ENVIRONMENT.values())
