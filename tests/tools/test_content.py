"""Return values → content parts, and the IMAGE / IMAGE_LINK / BLOB helpers (seed 000 §7, 001 §4.8)."""

from __future__ import annotations

import dataclasses
import datetime
from pathlib import Path

import pytest
from pydantic import BaseModel

from kanawa.tools import FileAccessError, FileSandbox, SandboxViolation, to_content
from kanawa.tools.content import file_from_path, image_from_file, image_from_url
from kanawa.types import FilePart, ImagePart, TextPart


class Point(BaseModel):
    x: int
    label: str


@dataclasses.dataclass
class Pair:
    left: int
    right: int


def test_str_becomes_text_part() -> None:
    assert to_content("héllo") == (TextPart("héllo"),)


def test_none_becomes_empty_text() -> None:
    assert to_content(None) == (TextPart(""),)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"a": 1, "名": "値"}, '{"a":1,"名":"値"}'),
        ([1, "two", None], '[1,"two",null]'),
        (["a", "b"], '["a","b"]'),
        (3, "3"),
        (2.5, "2.5"),
        (True, "true"),
        ((1, 2), "[1,2]"),
    ],
)
def test_json_values_become_compact_json_text(value: object, expected: str) -> None:
    assert to_content(value) == (TextPart(expected),)


def test_pydantic_models_dataclasses_and_dates_become_json() -> None:
    assert to_content(Point(x=1, label="é")) == (TextPart('{"x":1,"label":"é"}'),)
    assert to_content(Pair(1, 2)) == (TextPart('{"left":1,"right":2}'),)
    assert to_content(datetime.date(2025, 5, 23)) == (TextPart('"2025-05-23"'),)


def test_unknown_objects_fall_back_to_str() -> None:
    class Thing:
        def __str__(self) -> str:
            return "a thing"

    assert to_content({"t": Thing()}) == (TextPart('{"t":"a thing"}'),)


def test_parts_pass_through() -> None:
    image = ImagePart(url="https://example.com/a.png")
    blob = FilePart(b"data", media_type="application/pdf", filename="a.pdf")
    assert to_content(image) == (image,)
    assert to_content(blob) == (blob,)
    assert to_content(TextPart("t")) == (TextPart("t"),)
    assert to_content([TextPart("caption"), image]) == (TextPart("caption"), image)
    assert to_content(("caption", image)) == (TextPart("caption"), image)


def test_bytes_become_a_file_part() -> None:
    assert to_content(b"\x00\x01") == (FilePart(b"\x00\x01"),)
    assert to_content(bytearray(b"ab")) == (FilePart(b"ab"),)


def test_image_from_file_reads_through_the_sandbox(tmp_path: Path) -> None:
    (tmp_path / "pic.png").write_bytes(b"\x89PNG")
    part = image_from_file("pic.png", sandbox=FileSandbox(root=tmp_path))
    assert part == ImagePart(data=b"\x89PNG", media_type="image/png")


def test_image_from_file_refuses_non_images_and_escapes(tmp_path: Path) -> None:
    root = tmp_path / "files"
    root.mkdir()
    (root / "notes.txt").write_text("x")
    (tmp_path / "out.png").write_bytes(b"x")
    with pytest.raises(FileAccessError, match="not an image"):
        image_from_file("notes.txt", sandbox=FileSandbox(root=root))
    with pytest.raises(SandboxViolation):
        image_from_file("../out.png", sandbox=FileSandbox(root=root))


def test_image_link_becomes_url_image_part() -> None:
    assert image_from_url("https://example.com/cat.jpg?size=2") == ImagePart(
        url="https://example.com/cat.jpg?size=2", media_type="image/jpeg"
    )
    with pytest.raises(ValueError, match="http"):
        image_from_url("file:///etc/passwd")


def test_file_from_path_is_a_blob_with_media_type_and_name(tmp_path: Path) -> None:
    (tmp_path / "report.pdf").write_bytes(b"%PDF")
    (tmp_path / "data.unknownext").write_bytes(b"?")
    sandbox = FileSandbox(root=tmp_path)
    assert file_from_path("report.pdf", sandbox=sandbox) == FilePart(
        b"%PDF", media_type="application/pdf", filename="report.pdf"
    )
    assert file_from_path("data.unknownext", sandbox=sandbox).media_type == "application/octet-stream"


def test_file_from_path_refuses_oversized_files(tmp_path: Path) -> None:
    (tmp_path / "big.bin").write_bytes(b"x" * 11)
    with pytest.raises(SandboxViolation):
        file_from_path("big.bin", sandbox=FileSandbox(root=tmp_path, max_bytes=10))
