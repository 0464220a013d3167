"""Run a Dify plugin the way Dify's plugin daemon does and talk to it over its stdio protocol.

:class:`DifyPluginProcess` starts ``python -m main`` in the plugin directory with
``INSTALL_METHOD=local``, reads the manifest line the SDK prints first, and then speaks the daemon's
side of the protocol: one JSON line per request (``{"session_id", "event": "request", "data"}``) and,
for every backwards ``invoke`` the plugin sends (an agent strategy calling the LLM or a tool), the
``backwards_response`` lines Dify would send, produced by a handler the test supplies. Everything the
plugin writes for a session is returned in order, up to the session's ``end``.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

InvokeHandler = Callable[[dict[str, Any]], Iterable[dict[str, Any]]]
"""Answers one backwards invocation (``{"type": "llm"|"tool", ..., "request": {...}}``) with the
``data`` objects Dify would stream back; raising sends an ``error`` event with the exception text."""


@dataclass
class SessionResult:
    """What the plugin sent for one request: stream payloads, an error (if any), invocations made."""

    stream: list[dict[str, Any]] = field(default_factory=list)
    error: dict[str, Any] | None = None
    invocations: list[dict[str, Any]] = field(default_factory=list)


class DifyPluginProcess:
    """``with DifyPluginProcess(path) as plugin: plugin.request({...})`` (module docstring)."""

    def __init__(
        self,
        plugin_dir: Path,
        *,
        python: str | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float = 60.0,
    ) -> None:
        self.plugin_dir = plugin_dir
        self.timeout = timeout
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed in close()
        full_env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("OPENAI_", "INSTALL_METHOD", "PYTHONPATH"))
        }
        full_env.update({"INSTALL_METHOD": "local", "PYTHONUNBUFFERED": "1", **(env or {})})
        self._proc = subprocess.Popen(
            [python or sys.executable, "-m", "main"],
            cwd=plugin_dir,
            env=full_env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
        )
        self._sessions: dict[str, queue.Queue[dict[str, Any] | None]] = {}
        self._lock = threading.Lock()
        self.logs: list[dict[str, Any]] = []
        self._manifest: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        first = self._manifest.get(timeout=timeout)
        if first is None:
            self.close()
            raise RuntimeError(f"plugin exited before its manifest line:\n{self.stderr_text()}")
        self.manifest: dict[str, Any] = first

    # ----------------------------------------------------------------- plumbing
    def __enter__(self) -> DifyPluginProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the plugin (the SDK spins on a closed stdin, so it is terminated, not left to exit)."""
        if self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait(10)
        self._reader.join(10)
        for stream in (self._proc.stdin, self._proc.stdout):
            if stream is not None:
                stream.close()
        self._stderr.close()

    def stderr_text(self) -> str:
        self._stderr.seek(0)
        return self._stderr.read().decode(errors="replace")

    def _read(self) -> None:
        assert self._proc.stdout is not None
        manifest_seen = False
        for raw in self._proc.stdout:
            line = raw.strip()
            if not line:
                continue
            data = json.loads(line)
            if not manifest_seen:
                manifest_seen = True
                self._manifest.put(data)
                continue
            event = data.get("event")
            if event == "log":
                self.logs.append(data.get("data") or {})
            elif event in ("session", "error") and data.get("session_id"):
                with self._lock:
                    target = self._sessions.get(data["session_id"])
                if target is not None:
                    target.put(data if event == "error" else data["data"])
        self._manifest.put(None)
        with self._lock:
            for target in self._sessions.values():
                target.put(None)

    def _send(self, obj: Mapping[str, Any]) -> None:
        assert self._proc.stdin is not None
        self._proc.stdin.write(json.dumps(obj).encode() + b"\n")
        self._proc.stdin.flush()

    # ------------------------------------------------------------------ requests
    def request(self, data: Mapping[str, Any], *, on_invoke: InvokeHandler | None = None) -> SessionResult:
        """Send one request and collect the plugin's answer, serving backwards invocations."""
        session_id = uuid.uuid4().hex
        inbox: queue.Queue[dict[str, Any] | None] = queue.Queue()
        with self._lock:
            self._sessions[session_id] = inbox
        result = SessionResult()
        try:
            self._send({"session_id": session_id, "event": "request", "data": dict(data)})
            while True:
                message = inbox.get(timeout=self.timeout)
                if message is None:
                    raise RuntimeError(f"plugin exited mid-request:\n{self.stderr_text()}")
                if message.get("event") == "error":
                    result.error = message.get("data")
                    break
                kind = message.get("type")
                if kind == "end":
                    break
                if kind == "stream":
                    result.stream.append(message["data"])
                elif kind == "error":
                    result.error = message["data"]
                elif kind == "invoke":
                    result.invocations.append(message["data"])
                    self._answer(session_id, message["data"], on_invoke)
        finally:
            with self._lock:
                del self._sessions[session_id]
        return result

    def _answer(self, session_id: str, invoke: dict[str, Any], handler: InvokeHandler | None) -> None:
        request_id = invoke["backwards_request_id"]

        def reply(event: str, message: str = "", data: dict[str, Any] | None = None) -> None:
            self._send(
                {
                    "session_id": session_id,
                    "event": "backwards_response",
                    "data": {
                        "backwards_request_id": request_id,
                        "event": event,
                        "message": message,
                        "data": data,
                    },
                }
            )

        if handler is None:
            reply("error", "this test does not answer backwards invocations")
            return
        try:
            for data in handler(invoke):
                reply("response", data=data)
        except Exception as exc:
            reply("error", str(exc))
            return
        reply("end")
