"""Reading the files a user names on the command line: one clear line naming the file when it cannot
be read, and the text encodings Japanese users actually save in.

Essays, policies and playbooks written in Japan are often saved as Shift_JIS (Windows code page 932)
or, on older Unix systems, EUC-JP rather than UTF-8. :func:`decode_text` accepts those, deciding
strictly and in a fixed order so the same bytes always give the same text:

1. a UTF-16 byte-order mark → UTF-16 (what Windows Notepad calls "Unicode");
2. UTF-8, with or without a byte-order mark;
3. CP932 (Shift_JIS as Windows writes it), then EUC-JP — each accepted only when the bytes decode
   without error *and* the text holds full-width kana. Both encodings decode many byte strings that
   are not Japanese at all (a Latin-1 ``naïve`` is valid CP932), but hiragana and katakana need lead
   bytes (``0x82``/``0x83`` in CP932, ``0xA4``/``0xA5`` in EUC-JP) that the other encoding and
   Latin-1 prose practically never produce, and Japanese prose is never without kana.

Anything else raises :class:`InputFileError` saying which encodings were tried.
"""

from __future__ import annotations

import codecs
import re
from pathlib import Path
from typing import Final

JAPANESE_LEGACY_ENCODINGS: Final = ("cp932", "euc_jp")
"""Tried, in this order, after UTF-8."""

_KANA: Final = re.compile(r"[\u3041-\u3096\u30a1-\u30fa]")
"""Full-width hiragana and katakana (not the half-width forms, which mis-decoded bytes often are)."""
_CONTROL: Final = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f]")
"""Control characters no text file holds (tab, newlines and form feed are allowed)."""


class InputFileError(Exception):
    """A file named on the command line cannot be used; ``str()`` is the whole line to print."""


def _looks_japanese(text: str) -> bool:
    return _KANA.search(text) is not None and _CONTROL.search(text) is None


def decode_text(data: bytes) -> tuple[str, str]:
    """``(text, encoding)`` for ``data`` (see the module docstring for the order); raises
    :class:`UnicodeDecodeError` when no encoding fits."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16"), "utf-16"
    try:
        return data.decode("utf-8-sig"), "utf-8"
    except UnicodeDecodeError as exc:
        first_error = exc
    for encoding in JAPANESE_LEGACY_ENCODINGS:
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            continue
        if _looks_japanese(text):
            return text, encoding
    raise first_error


def _reason(exc: OSError) -> str:
    if isinstance(exc, FileNotFoundError):
        return "no such file"
    if isinstance(exc, IsADirectoryError):
        return "it is a directory, not a file"
    if isinstance(exc, PermissionError):
        return "permission denied"
    return exc.strerror or str(exc)


def read_input_text(path: Path, *, what: str = "file") -> str:
    """The text of ``path`` (UTF-8, UTF-16, Shift_JIS/CP932 or EUC-JP); :class:`InputFileError` with
    one line naming the file (``what`` says what it was meant to be) when it cannot be read."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputFileError(f"cannot read the {what} {path}: {_reason(exc)}") from None
    try:
        text, _ = decode_text(data)
    except UnicodeDecodeError:
        raise InputFileError(
            f"cannot read the {what} {path}: it is not text in UTF-8, Shift_JIS (CP932) or EUC-JP; "
            "save it as UTF-8"
        ) from None
    return text


__all__ = ["JAPANESE_LEGACY_ENCODINGS", "InputFileError", "decode_text", "read_input_text"]
