"""``FileSandbox``: the only way tools read local files (seed 000 §7, seed 001 §4.8).

Policy, as the seeds state it:

* only files under the root (``/files`` by default) may be read, checked with ``os.path.realpath``
  and ``os.path.commonpath`` against the *real* root — so ``..`` and symlinks that lead outside are
  refused;
* files larger than 5 MB (``_MAX_BLOB_FILE_BYTES`` in the seed) are refused, before reading.

Additions: relative paths are taken relative to the root; only regular files are read (no FIFOs,
devices or directories), opened without following a final symlink and without blocking, and the size
is checked again on the open descriptor, so a file swapped after the check cannot slip through.
Error messages name the path only relative to the root and never reveal host paths outside it.

The root comes from the ``root`` keyword, else the ``KANAWA_FILES_ROOT`` environment variable, else
:data:`DEFAULT_FILES_ROOT`.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from kanawa.tools.errors import FileAccessError, SandboxViolation

__all__ = ["DEFAULT_FILES_ROOT", "DEFAULT_MAX_BYTES", "FILES_ROOT_ENV", "FileSandbox"]

DEFAULT_FILES_ROOT = "/files"
FILES_ROOT_ENV = "KANAWA_FILES_ROOT"
DEFAULT_MAX_BYTES = 5 * 1024 * 1024
"""The seed's ``_MAX_BLOB_FILE_BYTES``: 5 MB."""

_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)


def _resolve_fully(path: str) -> str | None:
    """``path`` with every symlink and ``..`` resolved, or ``None`` if that cannot be done.

    A non-strict ``realpath`` stops at a symlink loop and appends the rest of the path lexically, so
    ``loop/../../out`` could come back as a path that *looks* inside the root while the kernel would
    resolve it elsewhere. Strict resolution refuses loops; for a file that does not exist yet the
    non-strict answer is accepted only if resolving it again changes nothing (nothing was left
    unresolved).
    """
    try:
        return os.path.realpath(path, strict=True)
    except FileNotFoundError:
        real = os.path.realpath(path)
        return real if os.path.realpath(real) == real else None
    except OSError:  # a symlink loop, or a component we may not traverse
        return None


class FileSandbox:
    """Read-only access to the files under one root directory.

    ``resolve`` maps a requested path to a real path inside the root or raises
    :class:`SandboxViolation`; ``read_bytes``/``read_text`` also enforce ``max_bytes`` and refuse
    anything but regular files. Missing or unreadable files raise :class:`FileAccessError`.
    """

    __slots__ = ("_max_bytes", "_root")

    def __init__(
        self, root: str | os.PathLike[str] | None = None, *, max_bytes: int = DEFAULT_MAX_BYTES
    ) -> None:
        if max_bytes < 0:
            raise ValueError("max_bytes must not be negative")
        chosen = os.fspath(root) if root is not None else os.environ.get(FILES_ROOT_ENV) or DEFAULT_FILES_ROOT
        if "\x00" in chosen:
            raise ValueError("the sandbox root must not contain NUL bytes")
        self._root = os.path.realpath(os.path.abspath(chosen))
        self._max_bytes = max_bytes

    @property
    def root(self) -> Path:
        """The real (symlink-free) root directory."""
        return Path(self._root)

    @property
    def max_bytes(self) -> int:
        return self._max_bytes

    def __repr__(self) -> str:
        return f"FileSandbox(root={self._root!r}, max_bytes={self._max_bytes})"

    def resolve(self, path: str | os.PathLike[str]) -> Path:
        """The real path of ``path`` if it lies under the root; otherwise :class:`SandboxViolation`.

        Relative paths are relative to the root; absolute paths must already point inside it. The
        file need not exist.
        """
        if not isinstance(path, str | os.PathLike):
            raise SandboxViolation(f"a file path must be a string, not {type(path).__name__}")
        raw = os.fspath(path)
        if not isinstance(raw, str):
            raise SandboxViolation("a file path must be text, not bytes")
        if "\x00" in raw:
            raise SandboxViolation("access denied: the path contains a NUL character")
        try:
            real = _resolve_fully(os.path.join(self._root, raw))
            inside = real is not None and os.path.commonpath((self._root, real)) == self._root
        except (OSError, ValueError):
            inside = False
        if not inside:
            raise SandboxViolation(
                "access denied: the path points outside the files directory; "
                "use a path relative to the files directory"
            )
        assert real is not None
        return Path(real)

    def read_bytes(self, path: str | os.PathLike[str]) -> bytes:
        """The bytes of a regular file under the root, at most ``max_bytes`` long."""
        real = self.resolve(path)
        shown = self._relative(real)
        try:
            before = os.stat(real)
        except FileNotFoundError:
            raise FileAccessError(f"file not found: {shown}") from None
        except OSError as exc:
            raise FileAccessError(f"cannot read {shown}: {exc.strerror or 'access error'}") from None
        self._check(before, shown)
        try:
            fd = os.open(real, _OPEN_FLAGS)
        except OSError as exc:
            raise FileAccessError(f"cannot read {shown}: {exc.strerror or 'access error'}") from None
        with os.fdopen(fd, "rb") as handle:
            self._check(os.fstat(handle.fileno()), shown)
            data = handle.read(self._max_bytes + 1)
        if len(data) > self._max_bytes:
            raise self._too_large(shown)
        return data

    def read_text(self, path: str | os.PathLike[str], *, encoding: str = "utf-8") -> str:
        """The text of a file under the root (see :meth:`read_bytes`); undecodable files are refused."""
        data = self.read_bytes(path)
        try:
            return data.decode(encoding)
        except (UnicodeDecodeError, LookupError):
            raise FileAccessError(f"{self._relative(self.resolve(path))} is not {encoding} text") from None

    def _check(self, info: os.stat_result, shown: str) -> None:
        if not stat.S_ISREG(info.st_mode):
            raise SandboxViolation(f"access denied: {shown} is not a regular file")
        if info.st_size > self._max_bytes:
            raise self._too_large(shown)

    def _too_large(self, shown: str) -> SandboxViolation:
        return SandboxViolation(f"access denied: {shown} is larger than the {self._max_bytes}-byte limit")

    def _relative(self, real: Path) -> str:
        relative = os.path.relpath(real, self._root)
        return "the files directory" if relative == "." else repr(relative)
