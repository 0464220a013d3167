"""Tool return values → content parts the model can read (seed 000 §7, seed 001 §4.8).

:func:`to_content` is what the invoker applies to every successful return value:

=============================================  ==============================================
returned                                       content
=============================================  ==============================================
``str``                                        ``TextPart(value)``
``None``                                       ``TextPart("")``
``TextPart`` / ``ImagePart`` / ``FilePart``    passed through
a list/tuple of parts (``str`` items allowed)  passed through (``str`` items become ``TextPart``)
``bytes`` / ``bytearray`` / ``memoryview``     ``FilePart(data)`` (``application/octet-stream``)
anything else                                  compact JSON text (``ensure_ascii=False``); pydantic
                                               models, dataclasses, dates … via pydantic's
                                               serialiser; unknown objects via ``str()``
=============================================  ==============================================

The seed's IMAGE / IMAGE_LINK / BLOB messages map onto :func:`image_from_file` (``ImagePart`` with
inline bytes), :func:`image_from_url` (``ImagePart(url=...)``) and :func:`file_from_path`
(``FilePart``); the file helpers read only through a :class:`~kanawa.tools.sandbox.FileSandbox`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pydantic_core import to_json

from kanawa.tools.errors import FileAccessError
from kanawa.types import ContentPart, FilePart, ImagePart, TextPart

if TYPE_CHECKING:  # the invoker imports this module for to_content; the file helpers are rarer
    from kanawa.tools.sandbox import FileSandbox

__all__ = ["file_from_path", "image_from_file", "image_from_url", "to_content"]

_PART_TYPES = (TextPart, ImagePart, FilePart)
_EMPTY = (TextPart(""),)


def to_content(value: object) -> tuple[ContentPart, ...]:
    """Normalise a tool's return value into content parts (see the module table)."""
    if isinstance(value, str):
        return (TextPart(value),)
    if value is None:
        return _EMPTY
    if isinstance(value, _PART_TYPES):
        return (value,)
    if isinstance(value, bytes | bytearray | memoryview):
        return (FilePart(bytes(value)),)
    if isinstance(value, list | tuple) and _is_part_sequence(value):
        return tuple(TextPart(item) if isinstance(item, str) else item for item in value)
    return (TextPart(to_json(value, fallback=str).decode()),)


def _is_part_sequence(items: Sequence[object]) -> bool:
    """True when ``items`` holds at least one part and nothing but parts and strings."""
    has_part = False
    for item in items:
        if isinstance(item, _PART_TYPES):
            has_part = True
        elif not isinstance(item, str):
            return False
    return has_part


def _media_type(path: str | os.PathLike[str]) -> str | None:
    import mimetypes  # deferred: only the file helpers guess media types

    media_type, _ = mimetypes.guess_type(os.fspath(path), strict=False)
    return media_type


def image_from_file(path: str | os.PathLike[str], *, sandbox: FileSandbox) -> ImagePart:
    """An inline :class:`ImagePart` read through ``sandbox`` (seed IMAGE); the media type is guessed
    from the file name and must be ``image/*``."""
    media_type = _media_type(path)
    if media_type is None or not media_type.startswith("image/"):
        raise FileAccessError("not an image file (expected an image extension such as .png or .jpg)")
    return ImagePart(data=sandbox.read_bytes(path), media_type=media_type)


def image_from_url(url: str, *, media_type: str | None = None) -> ImagePart:
    """An :class:`ImagePart` that points at ``url`` (seed IMAGE_LINK); only http(s) and data URLs."""
    if not url.startswith(("https://", "http://", "data:")):
        raise ValueError("an image link must be an http(s) or data: URL")
    return ImagePart(url=url, media_type=media_type or _media_type(url.split("?", 1)[0]) or "image/png")


def file_from_path(path: str | os.PathLike[str], *, sandbox: FileSandbox) -> FilePart:
    """A :class:`FilePart` read through ``sandbox`` (seed BLOB), with a guessed media type and the
    file's base name."""
    data = sandbox.read_bytes(path)
    return FilePart(
        data=data,
        media_type=_media_type(path) or "application/octet-stream",
        filename=os.path.basename(os.fspath(path)) or None,
    )
