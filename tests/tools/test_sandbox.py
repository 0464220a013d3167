"""``FileSandbox`` (seed 000 §7, seed 001 §4.8): only files under the root, realpath-checked, 5 MB cap."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kanawa.tools import DEFAULT_FILES_ROOT, DEFAULT_MAX_BYTES, FileAccessError, FileSandbox, SandboxViolation


@pytest.fixture
def root(tmp_path: Path) -> Path:
    files = tmp_path / "files"
    (files / "docs").mkdir(parents=True)
    (files / "docs" / "a.txt").write_text("hello", encoding="utf-8")
    (tmp_path / "secret.txt").write_text("top secret", encoding="utf-8")
    return files


def test_default_root_is_files_and_limit_is_5mb(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KANAWA_FILES_ROOT", raising=False)
    assert DEFAULT_FILES_ROOT == "/files"
    assert DEFAULT_MAX_BYTES == 5 * 1024 * 1024
    sandbox = FileSandbox()
    assert sandbox.root == Path(os.path.realpath("/files"))
    assert sandbox.max_bytes == DEFAULT_MAX_BYTES


def test_root_from_env_and_keyword_wins(monkeypatch: pytest.MonkeyPatch, root: Path, tmp_path: Path) -> None:
    monkeypatch.setenv("KANAWA_FILES_ROOT", str(root))
    assert FileSandbox().root == root.resolve()
    assert FileSandbox(root=tmp_path).root == tmp_path.resolve()


def test_relative_paths_are_relative_to_the_root(root: Path) -> None:
    sandbox = FileSandbox(root=root)
    assert sandbox.resolve("docs/a.txt") == (root / "docs" / "a.txt").resolve()
    assert sandbox.read_text("docs/a.txt") == "hello"
    assert sandbox.read_bytes(root / "docs" / "a.txt") == b"hello"  # an absolute path inside the root


@pytest.mark.parametrize("path", ["../secret.txt", "docs/../../secret.txt", "docs/../../files2/x", ".."])
def test_dotdot_traversal_is_refused(root: Path, path: str) -> None:
    with pytest.raises(SandboxViolation, match="outside the files directory"):
        FileSandbox(root=root).read_bytes(path)


def test_absolute_path_outside_the_root_is_refused(root: Path, tmp_path: Path) -> None:
    with pytest.raises(SandboxViolation):
        FileSandbox(root=root).resolve(str(tmp_path / "secret.txt"))
    with pytest.raises(SandboxViolation):
        FileSandbox(root=root).resolve("/etc/passwd")


def test_sibling_directory_with_common_prefix_is_refused(root: Path, tmp_path: Path) -> None:
    (tmp_path / "files-other").mkdir()
    with pytest.raises(SandboxViolation):
        FileSandbox(root=root).resolve(str(tmp_path / "files-other"))


def test_symlink_pointing_outside_is_refused(root: Path, tmp_path: Path) -> None:
    (root / "escape.txt").symlink_to(tmp_path / "secret.txt")
    (root / "escape_dir").symlink_to(tmp_path)
    sandbox = FileSandbox(root=root)
    with pytest.raises(SandboxViolation):
        sandbox.read_bytes("escape.txt")
    with pytest.raises(SandboxViolation):
        sandbox.read_bytes("escape_dir/secret.txt")


def test_symlink_inside_the_root_is_allowed(root: Path) -> None:
    (root / "link.txt").symlink_to(root / "docs" / "a.txt")
    assert FileSandbox(root=root).read_text("link.txt") == "hello"


def test_root_that_is_a_symlink_is_resolved(root: Path, tmp_path: Path) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(root)
    assert FileSandbox(root=alias).read_text("docs/a.txt") == "hello"


def test_file_over_5mb_is_refused_before_reading(root: Path) -> None:
    big = root / "big.bin"
    with big.open("wb") as handle:
        handle.truncate(DEFAULT_MAX_BYTES + 1)  # sparse: no 5 MB actually written
    with pytest.raises(SandboxViolation, match="larger than the 5242880-byte limit"):
        FileSandbox(root=root).read_bytes("big.bin")


def test_file_at_exactly_the_limit_is_allowed(root: Path) -> None:
    (root / "ok.bin").write_bytes(b"x" * 16)
    assert len(FileSandbox(root=root, max_bytes=16).read_bytes("ok.bin")) == 16
    with pytest.raises(SandboxViolation):
        FileSandbox(root=root, max_bytes=15).read_bytes("ok.bin")


def test_directories_and_fifos_are_refused(root: Path) -> None:
    sandbox = FileSandbox(root=root)
    with pytest.raises(SandboxViolation, match="not a regular file"):
        sandbox.read_bytes("docs")
    os.mkfifo(root / "pipe")
    with pytest.raises(SandboxViolation, match="not a regular file"):
        sandbox.read_bytes("pipe")


def test_missing_file_and_non_utf8_text_are_file_access_errors(root: Path) -> None:
    (root / "latin.txt").write_bytes(b"\xff\xfe\x00")
    sandbox = FileSandbox(root=root)
    with pytest.raises(FileAccessError, match=r"file not found: 'nope\.txt'"):
        sandbox.read_bytes("nope.txt")
    with pytest.raises(FileAccessError, match="not utf-8 text"):
        sandbox.read_text("latin.txt")


def test_nul_bytes_and_non_strings_are_refused(root: Path) -> None:
    sandbox = FileSandbox(root=root)
    with pytest.raises(SandboxViolation):
        sandbox.resolve("a\x00b")
    with pytest.raises(SandboxViolation):
        sandbox.resolve(42)  # type: ignore[arg-type]


def test_violation_messages_do_not_leak_host_paths(root: Path, tmp_path: Path) -> None:
    (root / "escape.txt").symlink_to(tmp_path / "secret.txt")
    for path in ["escape.txt", "../secret.txt", str(tmp_path / "secret.txt"), "/etc/passwd"]:
        with pytest.raises(SandboxViolation) as info:
            FileSandbox(root=root).read_bytes(path)
        message = str(info.value)
        assert str(tmp_path) not in message
        assert "secret" not in message
        assert "/etc" not in message


segments = st.one_of(
    st.sampled_from(["..", ".", "", "docs", "a.txt", "out", "loop", "in", "/", "//", "../.."]),
    st.text(st.characters(blacklist_characters="\x00/", blacklist_categories=["Cs"]), min_size=1, max_size=8),
)


@pytest.fixture
def maze(tmp_path: Path) -> Path:
    """A root with symlinks that point inside, outside, to the parent and in a loop."""
    files = tmp_path / "maze" / "files"
    (files / "docs").mkdir(parents=True)
    (files / "docs" / "a.txt").write_text("a")
    (files / "in").symlink_to(files / "docs")
    (files / "out").symlink_to(tmp_path)
    (files / "docs" / "up").symlink_to("../..")
    (files / "loop").symlink_to(files / "loop")
    return files


@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(segments, max_size=8), absolute=st.booleans())
def test_property_no_generated_path_resolves_outside_the_root(
    maze: Path, parts: list[str], absolute: bool
) -> None:
    sandbox = FileSandbox(root=maze)
    path = "/".join(parts)
    if absolute:
        path = os.path.join(str(maze), path)
    try:
        resolved = sandbox.resolve(path)
    except SandboxViolation:
        return
    real_root = os.path.realpath(maze)
    assert os.path.commonpath([real_root, os.path.realpath(resolved)]) == real_root
    assert str(resolved) == real_root or str(resolved).startswith(real_root + os.sep)


def test_symlink_loop_followed_by_dotdot_cannot_escape(maze: Path) -> None:
    # found by the property test: a non-strict realpath stops at the loop and resolves the rest
    # lexically, yielding a path that looks inside the root while the kernel would follow ``out``
    with pytest.raises(SandboxViolation):
        FileSandbox(root=maze).resolve("loop/../docs/docs/../../out")
    with pytest.raises(SandboxViolation):
        FileSandbox(root=maze).read_bytes("loop/../docs/a.txt")


def test_missing_file_under_the_root_still_resolves(maze: Path) -> None:
    assert (
        FileSandbox(root=maze).resolve("docs/not-yet.txt")
        == Path(os.path.realpath(maze)) / "docs" / "not-yet.txt"
    )
