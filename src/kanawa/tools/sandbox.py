"""``FileSandbox``: the only way tools read local files (seed 000 §7, seed 001 §4.8).

Policy, as the seeds state it:

* only files under the root (``/files`` by default) may be read, checked with ``os.path.realpath``
  and ``os.path.commonpath`` against the *real* root — so ``..`` and symlinks that lead outside are
  refused;
* files larger than 5 MB (``_MAX_BLOB_FILE_BYTES`` in the seed) are refused, before reading.

A path check alone loses a race: between the check and the open, a directory on the path can be
swapped for a symlink to somewhere else. So the check is only the first half. The file is then
opened by walking the checked, symlink-free path one component at a time from a descriptor of the
root, every directory with ``O_NOFOLLOW | O_DIRECTORY`` and the file with ``O_NOFOLLOW``
(:meth:`FileSandbox.open_checked`): a component that became a symlink after the check fails the open
(``ELOOP``/``ENOTDIR``) instead of being followed. What is guaranteed, and tested with a thread
swapping a directory and a symlink by ``renameat2(RENAME_EXCHANGE)`` and by plain renames against
a reading thread (``tests/tools/test_sandbox_race.py``): on Linux, and on any POSIX system whose
``os.open`` supports ``dir_fd`` and ``O_NOFOLLOW``, no symlink is followed while opening, so a read
returns a file that was under the root when it was opened, or is refused. Symlinks inside the root
that point inside it still work: the check resolves them and the walk takes the real path. Where
``dir_fd`` is unsupported (Windows) the open falls back to the checked path with the race open.

Then, on the open descriptor: only a regular file is read (no FIFOs, devices or directories; opened
without blocking), its size is checked, and the read itself stops after ``max_bytes + 1`` bytes, so a
file that grows after ``fstat`` cannot slip through. Error messages name the path only relative to
the root and never reveal host paths outside it. The sandbox only reads; it has no write path.

The root comes from the ``root`` keyword, else the ``KANAWA_FILES_ROOT`` environment variable, else
:data:`DEFAULT_FILES_ROOT`.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from kanawa.tools.errors import FileAccessError, SandboxViolation

__all__ = ["DEFAULT_FILES_ROOT", "DEFAULT_MAX_BYTES", "FILES_ROOT_ENV", "FileSandbox", "read_capped"]

DEFAULT_FILES_ROOT = "/files"
FILES_ROOT_ENV = "KANAWA_FILES_ROOT"
DEFAULT_MAX_BYTES = 5 * 1024 * 1024
"""The seed's ``_MAX_BLOB_FILE_BYTES``: 5 MB."""

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_OPEN_FLAGS = os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | _CLOEXEC
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | _CLOEXEC
_WALKS = os.open in os.supports_dir_fd and _NOFOLLOW != 0
_SWAPPED = (errno.ELOOP, errno.ENOTDIR, getattr(errno, "EMLINK", errno.ELOOP))
"""What ``open`` says when a component that was a directory at check time is now a symlink."""


def read_capped(handle: BinaryIO, limit: int, shown: str) -> bytes:
    """Read at most ``limit + 1`` bytes; more than ``limit`` is refused. ``fstat`` can understate a
    file that grows after the check (or a pseudo-file that reports size 0), so the cap is on the read
    itself, not only on the size the file reported."""
    data = handle.read(limit + 1)
    if len(data) > limit:
        raise SandboxViolation(f"access denied: {shown} is larger than the {limit}-byte limit")
    return data


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
        self, *, root: str | os.PathLike[str] | None = None, max_bytes: int = DEFAULT_MAX_BYTES
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
        fd = self.open_checked(real)
        try:
            self._check(os.fstat(fd), shown)
        except BaseException:
            os.close(fd)
            raise
        with os.fdopen(fd, "rb") as handle:
            return read_capped(handle, self._max_bytes, shown)

    def open_checked(self, real: Path) -> int:
        """Open ``real`` (a path :meth:`resolve` returned) for reading without following any symlink:
        walk it from the root one component at a time (see the module docstring). Returns the file
        descriptor; a component swapped for a symlink since the check is a :class:`SandboxViolation`.
        """
        shown = self._relative(real)
        relative = os.path.relpath(real, self._root)
        if not _WALKS:
            return self._open(lambda: os.open(real, _OPEN_FLAGS), shown)
        parts = relative.split(os.sep)
        if relative == "." or ".." in parts:  # resolve() never returns these; refuse, do not guess
            raise SandboxViolation(f"access denied: {shown} is not a regular file")
        directory = self._open(lambda: os.open(self._root, _DIR_FLAGS), shown)
        try:
            for name in parts[:-1]:
                parent = directory
                directory = self._open(lambda: os.open(name, _DIR_FLAGS, dir_fd=parent), shown)  # noqa: B023
                os.close(parent)
            return self._open(lambda: os.open(parts[-1], _OPEN_FLAGS, dir_fd=directory), shown)
        finally:
            os.close(directory)

    @staticmethod
    def _open(opener: Callable[[], int], shown: str) -> int:
        try:
            return opener()
        except FileNotFoundError:
            raise FileAccessError(f"file not found: {shown}") from None
        except OSError as exc:
            if exc.errno in _SWAPPED:
                raise SandboxViolation(
                    f"access denied: the path to {shown} changed while it was opened (a symlink now)"
                ) from None
            raise FileAccessError(f"cannot read {shown}: {exc.strerror or 'access error'}") from None

    def read_text(self, path: str | os.PathLike[str], *, encoding: str = "utf-8") -> str:
        """The text of a file under the root (see :meth:`read_bytes`); undecodable files are refused."""
        data = self.read_bytes(path)
        try:
            return data.decode(encoding)
        except (UnicodeDecodeError, LookupError):
            raise FileAccessError(f"{self._relative(self.resolve(path))} is not {encoding} text") from None

    def _check(self, info: os.stat_result, shown: str) -> None:
        """The check on the *open* descriptor: a regular file within the size limit."""
        if not stat.S_ISREG(info.st_mode):
            raise SandboxViolation(f"access denied: {shown} is not a regular file")
        if info.st_size > self._max_bytes:
            raise SandboxViolation(f"access denied: {shown} is larger than the {self._max_bytes}-byte limit")

    def _relative(self, real: Path) -> str:
        relative = os.path.relpath(real, self._root)
        return "the files directory" if relative == "." else repr(relative)
