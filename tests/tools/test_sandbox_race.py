"""``FileSandbox`` under attack: a thread swaps a directory inside the root for a symlink to an outside
directory while another reads through the sandbox. Not one read may return the outside file.

Also the two defences behind the open: the check on the *opened* file (regular file, size) and the
capped read (never more than ``max_bytes + 1`` bytes are read, whatever ``fstat`` said)."""

from __future__ import annotations

import contextlib
import ctypes
import os
import threading
import time
from pathlib import Path

import pytest

from kanawa.tools import FileAccessError, FileSandbox, SandboxViolation
from kanawa.tools.sandbox import read_capped

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
_LIBC = ctypes.CDLL(None, use_errno=True)
_SECONDS = 1.5


def _exchange(a: Path, b: Path) -> None:
    """Atomically swap two paths (``renameat2(RENAME_EXCHANGE)``)."""
    if _LIBC.renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) != 0:
        error = ctypes.get_errno()
        raise OSError(error, os.strerror(error))


def _rename_back_and_forth(a: Path, b: Path, spare: Path) -> None:
    """The same swap with plain renames (three steps, so a reader can also see neither)."""
    os.rename(a, spare)
    os.rename(b, a)
    os.rename(spare, b)


@pytest.fixture
def battlefield(tmp_path: Path) -> tuple[Path, Path, Path]:
    root = tmp_path / "files"
    (root / "inner").mkdir(parents=True)
    (root / "inner" / "secret.txt").write_text("inside", encoding="utf-8")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("OUTSIDE", encoding="utf-8")
    (root / "swap").symlink_to(outside, target_is_directory=True)
    return root, root / "inner", root / "swap"


def _race(root: Path, swap: object) -> tuple[int, int, int]:
    """Read ``inner/secret.txt`` while ``swap()`` runs in a loop; (reads, escapes, refusals)."""
    sandbox = FileSandbox(root=root)
    stop = threading.Event()

    def swapper() -> None:
        while not stop.is_set():
            swap()  # type: ignore[operator]

    thread = threading.Thread(target=swapper, daemon=True)
    thread.start()
    reads = escapes = refusals = 0
    deadline = time.monotonic() + _SECONDS
    try:
        while time.monotonic() < deadline:
            try:
                data = sandbox.read_text("inner/secret.txt")
            except (SandboxViolation, FileAccessError):
                refusals += 1
                continue
            reads += 1
            escapes += data == "OUTSIDE"
    finally:
        stop.set()
        thread.join()
    return reads, escapes, refusals


def test_an_atomic_exchange_racing_every_read_never_reads_outside(
    battlefield: tuple[Path, Path, Path],
) -> None:
    root, inner, swap = battlefield
    reads, escapes, refusals = _race(root, lambda: _exchange(inner, swap))
    assert escapes == 0, f"{escapes} of {reads} reads returned the outside file"
    assert reads > 0  # the race was real: some reads went through, some were refused
    assert refusals > 0


def test_plain_renames_racing_every_read_never_read_outside(battlefield: tuple[Path, Path, Path]) -> None:
    root, inner, swap = battlefield
    spare = root / "spare"
    reads, escapes, _ = _race(root, lambda: _rename_back_and_forth(inner, swap, spare))
    assert escapes == 0, f"{escapes} of {reads} reads returned the outside file"
    assert reads > 0


def test_a_directory_swapped_for_a_symlink_after_the_check_is_refused_at_open(
    battlefield: tuple[Path, Path, Path],
) -> None:
    """The deterministic form of the race: the path checks out, then the directory becomes a symlink
    to the outside before the file is opened."""
    root, inner, swap = battlefield
    sandbox = FileSandbox(root=root)
    checked = sandbox.resolve("inner/secret.txt")
    _exchange(inner, swap)
    with pytest.raises(SandboxViolation, match="changed"):
        sandbox.open_checked(checked)


def test_the_opened_file_is_checked_again_not_only_the_path(tmp_path: Path) -> None:
    """A FIFO or directory that replaces the checked file is refused on the open descriptor."""
    root = tmp_path / "files"
    root.mkdir()
    os.mkfifo(root / "pipe")
    (root / "dir").mkdir()
    sandbox = FileSandbox(root=root)
    for name in ("pipe", "dir"):
        with pytest.raises(SandboxViolation, match="not a regular file"):
            sandbox.read_bytes(name)


def test_the_read_is_capped_whatever_the_size_fstat_reported() -> None:
    """``fstat`` can understate a file that grows after the check (or a pseudo-file): at most
    ``limit + 1`` bytes are read and more than ``limit`` is refused."""
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, b"x" * 200)
        os.close(write_end)
        with os.fdopen(read_end, "rb") as handle, pytest.raises(SandboxViolation, match="100-byte limit"):
            read_capped(handle, 100, "'grows.txt'")
    finally:
        for fd in (read_end, write_end):
            with contextlib.suppress(OSError):
                os.close(fd)


def test_a_capped_read_of_a_file_within_the_limit_returns_it_whole() -> None:
    read_end, write_end = os.pipe()
    os.write(write_end, b"y" * 100)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as handle:
        assert read_capped(handle, 100, "'ok.txt'") == b"y" * 100
