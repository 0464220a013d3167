"""Files named on the command line: Japanese legacy encodings are read, anything unreadable is one line
that names the file, with a non-zero exit — never a traceback or a bare exception name."""

from __future__ import annotations

import codecs
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kanawa.apps.smartao.patch import Change, PatchJSON
from kanawa.apps.smartao.session import sample_text
from kanawa.cli.app import app
from kanawa.cli.files import InputFileError, decode_text, read_input_text

KANAWA = Path(sys.executable).parent / "kanawa"
ESSAY = sample_text("shoronbun.txt")
NOT_TEXT = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00\xff\xfe\xfd"


# ------------------------------------------------------------------------------------ the detector


@pytest.mark.parametrize(
    ("data", "encoding"),
    [
        (ESSAY.encode("utf-8"), "utf-8"),
        (codecs.BOM_UTF8 + ESSAY.encode("utf-8"), "utf-8"),
        (ESSAY.encode("cp932"), "cp932"),
        (ESSAY.encode("shift_jis"), "cp932"),
        (ESSAY.encode("euc_jp"), "euc_jp"),
        (ESSAY.encode("utf-16"), "utf-16"),
        ("NEC特殊文字①と髙橋さんの～".encode("cp932"), "cp932"),
    ],
    ids=["utf-8", "utf-8-bom", "cp932", "shift_jis", "euc-jp", "utf-16-bom", "cp932-extensions"],
)
def test_japanese_text_is_read_in_the_encodings_people_save_it_in(data: bytes, encoding: str) -> None:
    text, found = decode_text(data)
    assert found == encoding
    assert text.replace("\ufeff", "") == data.decode(encoding).replace("\ufeff", "")
    assert "人工知能" in text or "髙橋" in text


def test_the_bom_is_not_part_of_the_text() -> None:
    text, _ = decode_text(codecs.BOM_UTF8 + "作文".encode())
    assert text == "作文"


@pytest.mark.parametrize(
    "data",
    [
        NOT_TEXT,
        "Rémi dévérouille séparément".encode("latin-1"),  # valid CP932 (R駑i d騅駻…), not Japanese
        "ｱｲｳｴｵ".encode("cp932")[:1] + b"\xff\xff",
    ],
    ids=["binary", "latin-1", "truncated"],
)
def test_bytes_that_are_not_japanese_or_utf8_text_are_refused(data: bytes) -> None:
    with pytest.raises(UnicodeDecodeError):
        decode_text(data)


def test_read_input_text_names_the_file_and_the_problem(tmp_path: Path) -> None:
    binary = tmp_path / "photo.png"
    binary.write_bytes(NOT_TEXT)
    with pytest.raises(InputFileError) as raised:
        read_input_text(binary, what="essay")
    assert str(raised.value) == (
        f"cannot read the essay {binary}: "
        "it is not text in UTF-8, Shift_JIS (CP932) or EUC-JP; save it as UTF-8"
    )
    with pytest.raises(InputFileError, match=r"cannot read the essay .*none\.txt: no such file$"):
        read_input_text(tmp_path / "none.txt", what="essay")
    with pytest.raises(InputFileError, match=r"it is a directory, not a file$"):
        read_input_text(tmp_path, what="essay")


# ----------------------------------------------------------------------- the commands, as processes

pytestmark_process = pytest.mark.skipif(
    not KANAWA.exists(), reason="the kanawa console script is not installed"
)


def _kanawa(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KANAWA_") and not k.endswith("_API_KEY")}
    env.update(COLUMNS="200", NO_COLOR="1", KANAWA_ACE_STORE=str(cwd / "playbooks"))
    return subprocess.run(
        [str(KANAWA), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False
    )


@pytestmark_process
@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["smartao", "coach", "none.txt"], "kanawa: cannot read the essay none.txt: no such file"),
        (
            ["smartao", "coach", "essay.txt", "--policy", "policy.txt"],
            "kanawa: cannot read the policy policy.txt: no such file",
        ),
        (
            ["ace", "import", "none.txt", "-d", "x", "--no-dense"],
            "kanawa: cannot read the playbook none.txt: no such file",
        ),
        (
            ["ace", "adapt", "none.jsonl", "-d", "x", "-m", "test", "--no-dense"],
            "kanawa: cannot read the training file none.jsonl: no such file",
        ),
        (
            ["ace", "generate", "t", "-d", "x", "-m", "test", "--no-dense", "--prompts-dir", "none"],
            "kanawa: cannot read the prompts directory none: no such directory",
        ),
        (
            ["smartao", "coach", "essay.txt", "--db", "essay.txt"],
            "kanawa: cannot use the evaluation store essay.txt: file is not a database",
        ),
        (
            ["smartao", "reflexion", "--db", "essay.txt"],
            "kanawa: cannot use the evaluation store essay.txt: file is not a database",
        ),
        (["trace", "show", "none.jsonl"], "kanawa: trace file not found: none.jsonl"),
        (["trace", "view", "none.jsonl"], "kanawa trace view: trace file not found: none.jsonl"),
    ],
    ids=[
        "coach-essay",
        "coach-policy",
        "ace-import",
        "ace-adapt",
        "ace-generate-prompts",
        "coach-db",
        "reflexion-db",
        "trace-show",
        "trace-view",
    ],
)
def test_a_file_that_cannot_be_used_is_one_line_naming_it_and_exit_1(
    tmp_path: Path, args: list[str], line: str
) -> None:
    (tmp_path / "essay.txt").write_text(ESSAY, encoding="utf-8")
    proc = _kanawa(tmp_path, *args)
    assert proc.returncode == 1
    assert proc.stderr.strip() == line
    assert "Traceback" not in proc.stderr + proc.stdout


@pytestmark_process
@pytest.mark.parametrize(
    "args",
    [["smartao", "coach", "photo.png"], ["ace", "import", "photo.png", "-d", "x", "--no-dense"]],
    ids=["coach", "ace-import"],
)
def test_a_file_that_is_not_text_is_one_clear_line(tmp_path: Path, args: list[str]) -> None:
    (tmp_path / "photo.png").write_bytes(NOT_TEXT)
    proc = _kanawa(tmp_path, *args)
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [
        f"kanawa: cannot read the {'essay' if args[0] == 'smartao' else 'playbook'} photo.png: "
        "it is not text in UTF-8, Shift_JIS (CP932) or EUC-JP; save it as UTF-8"
    ]
    assert "UnicodeDecodeError" not in proc.stderr


def test_a_cp932_essay_and_policy_are_coached_as_the_text_they_hold(tmp_path: Path) -> None:
    """CliRunner over the real app (in process: one Sudachi load). The patch and the findings are
    offsets into the decoded essay: they fit the original text exactly only if it was decoded right."""
    (tmp_path / "sjis.txt").write_bytes(ESSAY.encode("cp932"))
    (tmp_path / "policy.txt").write_bytes(sample_text("admission_policy.txt").encode("cp932"))
    args = ["sjis.txt", "--policy", "policy.txt", "--db", "evals.db", "--json"]
    result = CliRunner().invoke(
        app, ["smartao", "coach", *[a if a.startswith("-") else str(tmp_path / a) for a in args]]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    changes = [Change.model_validate(change) for change in report["patch"]["change_map"]]
    assert changes
    assert report["style_issues"]
    assert PatchJSON.from_changes(ESSAY, changes).new_text == report["patch"]["new_text"]
    for issue in report["style_issues"]:
        assert 0 <= issue["start"] < issue["end"] <= len(ESSAY)
    assert "人工知能" in report["patch"]["new_text"]


@pytestmark_process
def test_a_cp932_playbook_imports(tmp_path: Path) -> None:
    playbook = (
        "## 確認\n"
        "[chk-00001] helpful=0 harmful=0 :: 支払いの前に金額を確認する。\n"
        "[chk-00002] helpful=1 harmful=0 :: ページが空になるまで取得する。\n"
    )
    (tmp_path / "playbook.txt").write_bytes(playbook.encode("cp932"))
    proc = _kanawa(tmp_path, "ace", "import", "playbook.txt", "--dataset", "sjis", "--no-dense")
    assert proc.returncode == 0, proc.stderr
    exported = _kanawa(tmp_path, "ace", "export", "--dataset", "sjis")
    assert exported.stdout == playbook
