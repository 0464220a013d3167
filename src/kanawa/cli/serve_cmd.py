"""``kanawa serve``, ``kanawa worker`` and ``kanawa trace view``: the service commands.

``serve`` checks everything a misconfiguration could break before it listens (the agent registry,
the extensions of ``KANAWA_SERVE_EXTENSIONS``, the keys, Redis for more than one worker) and exits
with code 2 and one line otherwise. With no API
keys configured it listens on loopback only and prints a generated development key, and the runs
page's URL with that key in its fragment (one click opens it, already signed in).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from rich.console import Console
from rich.text import Text

from kanawa.cli.running import EXIT_OK, EXIT_SETUP

LOOPBACK = frozenset({"127.0.0.1", "::1", "localhost"})


def app_dir_on_path(directory: Path | None = None) -> None:
    """Put ``directory`` (default: the current one) first on ``sys.path``, as uvicorn does for its app,
    so ``kanawa serve myapp:agents`` finds ``myapp.py`` where the user stands. The console script's
    own ``sys.path`` starts with its ``bin/`` folder, not the working directory. Worker processes
    (uvicorn's spawned workers, Celery's forked pool) inherit the path."""
    folder = str((directory or Path.cwd()).resolve())
    if folder not in sys.path:
        sys.path.insert(0, folder)


def serve(
    console: Console,
    err: Console,
    *,
    agents: str | None,
    host: str,
    port: int,
    workers: int,
    log_level: str,
) -> int:
    """Validate, then run uvicorn (blocking) with ``workers`` processes; returns the exit code."""
    import secrets

    import uvicorn

    from kanawa.server.http.auth import KeyConfigError, KeyRing, is_loopback
    from kanawa.server.http.head_limits import uvicorn_options
    from kanawa.server.runs.extensions import merged_agents
    from kanawa.server.runs.loaders import LoadError, load_agents, load_extensions
    from kanawa.server.settings import ServerSettings

    app_dir_on_path()
    try:
        settings = ServerSettings.from_env()
        mounted = load_extensions(settings.serve_extensions)
        registry = merged_agents(load_agents(agents), mounted)
        if settings.keys_configured:
            KeyRing.parse(settings.api_keys, file=settings.api_keys_file)
    except (LoadError, KeyConfigError, ValueError) as exc:
        err.print(Text(f"kanawa serve: {exc}"), soft_wrap=True)
        return EXIT_SETUP
    if settings.celery_broker and not settings.redis_url:
        err.print(
            Text("kanawa serve: KANAWA_CELERY_BROKER needs KANAWA_REDIS_URL (runs stream through Redis)")
        )
        return EXIT_SETUP
    if workers > 1 and not settings.redis_url:
        err.print(
            Text(
                "kanawa serve: --workers above 1 needs KANAWA_REDIS_URL "
                "(runs must be resumable from any worker)"
            ),
            soft_wrap=True,
        )
        return EXIT_SETUP
    environ = os.environ
    if agents:
        environ["KANAWA_SERVE_AGENTS"] = agents
    key = ""  # the development key, when no keys are configured
    if not settings.keys_configured:
        if host not in LOOPBACK and not is_loopback(host):
            err.print(
                Text(
                    "kanawa serve: no API keys configured, so only loopback is served; "
                    f"refusing --host {host}. "
                    "Set KANAWA_API_KEYS=key:tenant,... or KANAWA_API_KEYS_FILE."
                ),
                soft_wrap=True,
            )
            return EXIT_SETUP
        key = environ.get("KANAWA_DEV_KEY") or "kw-dev-" + secrets.token_urlsafe(24)
        environ["KANAWA_DEV_KEY"] = key
        console.print(Text.assemble(("development key ", "bold yellow"), key))
        console.print(Text("(no KANAWA_API_KEYS configured: loopback clients only)", style="dim"))
    if settings.celery_broker:
        mode = "Celery workers (kanawa worker), streams in Redis"
    else:
        mode = "Redis Streams" if settings.redis_url else "embedded (in memory)"
    console.print(Text.assemble(("agents ", "bold"), ", ".join(registry)))
    if mounted:
        console.print(Text.assemble(("mounts ", "bold"), ", ".join(e.name for e in mounted)))
    console.print(Text.assemble(("mode   ", "bold"), mode))
    console.print(Text.assemble(("listen ", "bold"), base_url(host, port)))
    console.print(Text.assemble(("runs   ", "bold"), page_url(host, port, "/runs", key=key)), soft_wrap=True)
    console.print(Text.assemble(("mcp    ", "bold"), base_url(host, port) + "/mcp"))
    uvicorn.run(
        "kanawa.server.http.factory:app_from_env",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level=log_level,
        timeout_graceful_shutdown=5,
        **uvicorn_options(),
    )
    return EXIT_OK


def base_url(host: str, port: int) -> str:
    """``http://host:port`` as a browser takes it (an IPv6 address in brackets)."""
    shown = f"[{host}]" if ":" in host and not host.startswith("[") else host
    return f"http://{shown}:{port}"


def page_url(host: str, port: int, path: str, *, key: str = "") -> str:
    """The URL of a page the server serves; with the development ``key`` in its fragment, which the page
    keeps in the tab and removes from the address bar (a fragment never reaches the server)."""
    return base_url(host, port) + path + (f"#key={key}" if key else "")


def trace_view(console: Console, err: Console, file: Path, *, host: str, port: int) -> int:
    """Serve ``file`` in the timeline page until interrupted."""
    import uvicorn

    from kanawa.server.http.head_limits import uvicorn_options
    from kanawa.server.http.trace_view import create_trace_app
    from kanawa.trace.records import TraceFileError

    try:
        app = create_trace_app(file)
    except TraceFileError as exc:
        err.print(Text(f"kanawa trace view: {exc}"), soft_wrap=True)
        return 1
    console.print(Text.assemble(("timeline ", "bold"), f"http://{host}:{port}/trace"))
    uvicorn.run(app, host=host, port=port, log_level="warning", **uvicorn_options())
    return EXIT_OK


def worker(err: Console, *, concurrency: int, log_level: str) -> int:
    """Run a Celery worker until it is stopped; exit code 2 with one line when it is not configured."""
    from kanawa.server.runs.loaders import LoadError
    from kanawa.server.runs.workers import run_worker

    missing = [name for name in ("KANAWA_CELERY_BROKER", "KANAWA_REDIS_URL") if not os.environ.get(name)]
    if missing:
        err.print(Text(f"kanawa worker: set {' and '.join(missing)}"), soft_wrap=True)
        return EXIT_SETUP
    app_dir_on_path()
    try:
        run_worker(concurrency=concurrency, loglevel=log_level.upper())
    except LoadError as exc:
        err.print(Text(f"kanawa worker: {exc}"), soft_wrap=True)
        return EXIT_SETUP
    return EXIT_OK


__all__ = ["app_dir_on_path", "base_url", "page_url", "serve", "trace_view", "worker"]
