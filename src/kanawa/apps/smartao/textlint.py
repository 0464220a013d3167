"""textlint in a warm Node sidecar (seed 002 §4 StyleAgent ``grammar_check``; issue 12 part 3).

One Node process (``textlint/sidecar.js`` beside this module) loads textlint and its Japanese rules
once and then lints texts sent as JSON lines over stdin. The story of one lint:

1. :meth:`TextlintSidecar.lint` writes ``{"id": n, "text": …}`` and reads the answer line (one request
   at a time, under a lock, so any number of threads or event loops can share one sidecar).
2. textlint's offsets are UTF-16 code units: each is mapped to Python characters
   (:func:`~kanawa.apps.smartao.issues.utf16_to_chars`), so ``𠮷`` (one character, two units) does not
   shift every later finding.
3. One-character anchors are widened to their clause (:func:`~kanawa.apps.smartao.issues.widen_span`);
   a textlint fix becomes the issue's suggestion, and the ``です``/``である`` mix gets one from
   :func:`~kanawa.apps.smartao.sudachi_rules.ending_fix`.

The node modules come from ``npm ci`` over the committed ``package-lock.json`` (``make smartao-textlint``;
``make test`` depends on it). Without Node or the modules, :func:`textlint_available` is ``False`` and
StyleAgent uses the Sudachi rules instead.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Self

from kanawa.apps.smartao.issues import StyleIssue, utf16_to_chars, widen_span
from kanawa.apps.smartao.sudachi_rules import ending_fix

SIDECAR_DIR = Path(__file__).with_name("textlint")
SIDECAR_SCRIPT = SIDECAR_DIR / "sidecar.js"


class TextlintError(RuntimeError):
    """The sidecar could not start, died, or could not lint a text."""


def textlint_available() -> bool:
    """Whether ``node`` is on the PATH and the sidecar's node modules are installed."""
    return shutil.which("node") is not None and (SIDECAR_DIR / "node_modules" / "textlint").is_dir()


class TextlintSidecar:
    """A warm textlint process: ``with TextlintSidecar() as lint: lint.lint("…です。…である。")``.

    Start-up (Node, textlint, the morphological dictionaries) takes about a second; each lint after
    that is milliseconds. ``close()`` ends the process; the object is a context manager.
    Raises :class:`TextlintError` when Node or the modules are missing or the process fails.
    """

    def __init__(self, *, node: str | None = None, start_timeout: float = 60.0) -> None:
        node_path = node or shutil.which("node")
        if node_path is None or not textlint_available():
            raise TextlintError(
                "textlint is not installed: install Node.js and run `make smartao-textlint` "
                f"(npm ci in {SIDECAR_DIR})"
            )
        self._lock = threading.Lock()
        self._next_id = 0
        self._process = subprocess.Popen(
            [node_path, str(SIDECAR_SCRIPT)],
            cwd=SIDECAR_DIR,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            encoding="utf-8",
        )
        ready = self._read_line(start_timeout)
        if ready.get("ready") is not True:
            self.close()
            raise TextlintError(f"the textlint sidecar did not start: {ready.get('error', 'no answer')}")

    def _read_line(self, timeout: float) -> dict[str, object]:
        assert self._process.stdout is not None
        box: list[str] = []
        reader = threading.Thread(target=lambda: box.append(self._process.stdout.readline()), daemon=True)  # type: ignore[union-attr]
        reader.start()
        reader.join(timeout)
        if not box or not box[0]:
            self._process.kill()
            raise TextlintError("the textlint sidecar stopped answering")
        answer = json.loads(box[0])
        if not isinstance(answer, dict):
            raise TextlintError("the textlint sidecar sent something other than a JSON object")
        return answer

    @property
    def running(self) -> bool:
        return self._process.poll() is None

    @property
    def pid(self) -> int:
        """The Node process's id (a service that owns the sidecar can show it has not leaked it)."""
        return self._process.pid

    def raw(self, text: str, *, timeout: float = 30.0) -> list[dict[str, object]]:
        """textlint's messages for ``text`` as sent (UTF-16 offsets)."""
        with self._lock:
            if not self.running or self._process.stdin is None:
                raise TextlintError("the textlint sidecar is not running")
            self._next_id += 1
            request_id = self._next_id
            try:
                self._process.stdin.write(json.dumps({"id": request_id, "text": text}) + "\n")
                self._process.stdin.flush()
            except OSError as exc:
                raise TextlintError(f"the textlint sidecar is gone ({exc.__class__.__name__})") from None
            answer = self._read_line(timeout)
        if answer.get("id") != request_id:
            raise TextlintError("the textlint sidecar answered another request")
        if "error" in answer:
            raise TextlintError(f"textlint failed: {answer['error']}")
        messages = answer.get("messages")
        if not isinstance(messages, list):
            raise TextlintError("the textlint sidecar sent no messages list")
        return messages

    def lint(self, text: str) -> list[StyleIssue]:
        """The findings for ``text`` as :class:`StyleIssue` s with Python-character offsets."""
        table = utf16_to_chars(text)
        last = len(table) - 1
        issues: list[StyleIssue] = []
        for message in self.raw(text):
            start = table[min(_int(message.get("start")), last)]
            end = table[min(_int(message.get("end")), last)]
            rule = str(message.get("rule", "textlint"))
            suggestion: str | None = None
            fix = message.get("fix")
            if isinstance(fix, dict):
                fix_start, fix_end = (
                    table[min(_int(fix.get("start")), last)],
                    table[min(_int(fix.get("end")), last)],
                )
                start, end = fix_start, fix_end
                suggestion = str(fix.get("text", ""))
            else:
                start, end = widen_span(text, start, end)
                if rule.endswith("no-mix-dearu-desumasu"):
                    suggestion = ending_fix(text[start:end], text)
            issues.append(
                StyleIssue(
                    rule=rule,
                    message=str(message.get("message", "")).split("\n")[0],
                    start=start,
                    end=end,
                    suggestion=suggestion,
                    source="textlint",
                )
            )
        return issues

    def close(self) -> None:
        """End the process (closing stdin lets it finish; it is killed if it does not)."""
        process = self._process
        if process.stdin is not None and not process.stdin.closed:
            with contextlib.suppress(OSError):
                process.stdin.close()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _int(value: object) -> int:
    return value if isinstance(value, int) and value >= 0 else 0


__all__ = ["SIDECAR_DIR", "TextlintError", "TextlintSidecar", "textlint_available"]
