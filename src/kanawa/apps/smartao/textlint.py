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

The node modules come from ``npm ci`` over the committed ``package-lock.json``, in one of two places
(:func:`textlint_home`): beside this module in a source checkout (``make smartao-textlint``, which
``make test`` depends on), or in the per-user cache, one directory per lock
(``~/.cache/kanawa/textlint/<lock hash>`` on Linux; ``kanawa smartao setup`` installs it, see
:mod:`kanawa.apps.smartao.textlint_setup`). The sidecar script and the textlint configuration always
come from the installed package. Without Node or the modules, :func:`textlint_available` is ``False``
and StyleAgent uses the Sudachi rules instead.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Self

from kanawa.apps.smartao.issues import StyleIssue, utf16_to_chars, widen_span
from kanawa.apps.smartao.sudachi_rules import ending_fix

SIDECAR_DIR = Path(__file__).with_name("textlint")
"""The sidecar script, its textlint configuration and the lock its node modules are installed from."""
SIDECAR_SCRIPT = SIDECAR_DIR / "sidecar.js"
LOCK_FILE = SIDECAR_DIR / "package-lock.json"
CACHE_DIR_ENVIRONMENT_VARIABLE = "KANAWA_CACHE_DIR"
"""Overrides the per-user cache directory (``platformdirs.user_cache_dir("kanawa")``)."""
INSTALLED_MARK = ".installed"
"""Written into ``node_modules`` once ``npm ci`` finished: a half-made directory is never used."""
SETUP_HINT = "run `kanawa smartao setup` (it needs Node.js 18.14 or newer and npm)"


class TextlintError(RuntimeError):
    """The sidecar could not start, died, or could not lint a text."""


def lock_digest() -> str:
    """The first 16 hex digits of the SHA-256 of the committed lock: one cache directory per lock, so
    a kanawa release with other textlint versions never runs on the modules of an older one."""
    return hashlib.sha256(LOCK_FILE.read_bytes()).hexdigest()[:16]


def cache_root() -> Path:
    """kanawa's per-user cache: ``$KANAWA_CACHE_DIR``, else the platform's (``~/.cache/kanawa`` on
    Linux, ``~/Library/Caches/kanawa`` on macOS, ``%LOCALAPPDATA%\\kanawa\\Cache`` on Windows)."""
    configured = os.environ.get(CACHE_DIR_ENVIRONMENT_VARIABLE)
    if configured:
        return Path(configured).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("kanawa", appauthor=False))


def user_textlint_dir() -> Path:
    """Where ``kanawa smartao setup`` installs the node modules of this lock."""
    return cache_root() / "textlint" / lock_digest()


def textlint_home() -> Path | None:
    """The directory whose ``node_modules`` hold textlint: the source checkout's, else the per-user
    cache's for this lock; ``None`` when neither is installed."""
    if (SIDECAR_DIR / "node_modules" / "textlint").is_dir():
        return SIDECAR_DIR
    home = user_textlint_dir()
    if (home / "node_modules" / INSTALLED_MARK).is_file() and (home / "node_modules" / "textlint").is_dir():
        return home
    return None


def textlint_available() -> bool:
    """Whether ``node`` is on the PATH and the sidecar's node modules are installed."""
    return shutil.which("node") is not None and textlint_home() is not None


def missing_reason() -> str | None:
    """Why textlint cannot run here, in one sentence that says what to do (``None``: it can)."""
    if shutil.which("node") is None:
        return f"Node.js is not on the PATH: install Node.js, then {SETUP_HINT}"
    if textlint_home() is None:
        return f"textlint is not installed: {SETUP_HINT}"
    return None


class TextlintSidecar:
    """A warm textlint process: ``with TextlintSidecar() as lint: lint.lint("…です。…である。")``.

    Start-up (Node, textlint, the morphological dictionaries) takes about a second; each lint after
    that is milliseconds. ``close()`` ends the process; the object is a context manager.
    Raises :class:`TextlintError` when Node or the modules are missing or the process fails.
    """

    def __init__(self, *, node: str | None = None, start_timeout: float = 60.0) -> None:
        node_path = node or shutil.which("node")
        home = textlint_home()
        if node_path is None or home is None:
            reason = missing_reason() if node is None else f"textlint is not installed: {SETUP_HINT}"
            raise TextlintError(f"{reason} (or leave textlint out: StyleAgent then uses the Sudachi rules)")
        self._lock = threading.Lock()
        self._next_id = 0
        self._process = subprocess.Popen(
            [node_path, str(SIDECAR_SCRIPT), str(home)],
            cwd=home,
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


def start_textlint(wanted: bool | None = None) -> tuple[TextlintSidecar | None, str | None]:
    """StyleAgent's engine for an application: ``wanted=True`` requires textlint (raises
    :class:`TextlintError`), ``False`` takes the Sudachi rules, ``None`` takes textlint when it runs
    here and otherwise the Sudachi rules *with a notice* — one line saying why and how to get textlint,
    for the caller to print or log. Returns ``(sidecar or None, notice or None)``."""
    if wanted is False:
        return None, None
    if wanted:
        return TextlintSidecar(), None
    reason = missing_reason()
    if reason is None:
        try:
            return TextlintSidecar(), None
        except TextlintError as exc:
            reason = f"textlint did not start ({exc})"
    return None, f"StyleAgent uses the Sudachi rules: {reason}"


def _int(value: object) -> int:
    return value if isinstance(value, int) and value >= 0 else 0


__all__ = [
    "CACHE_DIR_ENVIRONMENT_VARIABLE",
    "SIDECAR_DIR",
    "TextlintError",
    "TextlintSidecar",
    "cache_root",
    "lock_digest",
    "missing_reason",
    "start_textlint",
    "textlint_available",
    "textlint_home",
    "user_textlint_dir",
]
