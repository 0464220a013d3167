"""Decoding the final answer into the agent's output type (seed 003 ``decodeFinalOutput``).

``str`` means plain text: no schema is sent and the answer is the model's text as it is. Any other type
that pydantic's ``TypeAdapter`` handles (models, dataclasses, TypedDicts, ``list[int]`` …) gets a JSON
schema, sent as the response schema when no tools are offered, and the answer is validated against it.

What the decoder tolerates, because models do it even when asked for JSON only:

- surrounding whitespace, and a Markdown code fence (```` ```json … ``` ````): the first fenced block is
  taken;
- prose before or after one JSON value: when the text is not valid JSON, the span from the first ``{``
  (or ``[``) to the last ``}`` (or ``]``) is tried.

Schemas whose root is not an object (``list[int]``, ``int``, unions) are wrapped as
``{"response": <schema>}``, because providers' structured-output modes require an object at the root;
the decoder unwraps it (and also accepts the bare value).

Decoders are built once per output type and cached: building a ``TypeAdapter`` and its schema costs
far more than a whole loop step.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Hashable
from typing import Any, Final, Generic, cast

from pydantic import BaseModel, TypeAdapter, ValidationError, create_model

from kanawa.loop.events import OutputT
from kanawa.types import JsonObject, OutputSchema

_FENCE: Final = re.compile(r"```[\w+-]*[ \t]*\n?(.*?)```", re.DOTALL)
_NAME_UNSAFE: Final = re.compile(r"[^A-Za-z0-9_-]+")
_ERRORS_LIMIT: Final = 600
WRAPPER_KEY: Final = "response"


class DecodeError(ValueError):
    """The text did not decode; ``errors`` is a summary safe to show the model and the caller."""

    def __init__(self, errors: str) -> None:
        super().__init__(errors)
        self.errors = errors


class OutputDecoder(Generic[OutputT]):
    """Turns final-answer text into ``OutputT``; ``schema`` is ``None`` for plain text."""

    __slots__ = ("_adapter", "_wrapper", "is_text", "output_type", "schema", "schema_json", "type_name")

    def __init__(self, output_type: type[OutputT]) -> None:
        self.output_type = output_type
        self.type_name = _type_name(output_type)
        self.is_text = output_type is str
        self._adapter: TypeAdapter[OutputT] | None = None
        self._wrapper: type[BaseModel] | None = None
        self.schema: OutputSchema | None = None
        self.schema_json = ""
        if self.is_text:
            return
        adapter: TypeAdapter[OutputT] = TypeAdapter(output_type)
        schema = cast(JsonObject, adapter.json_schema())
        if schema.get("type") != "object":
            field_type: Any = output_type
            self._wrapper = create_model(
                f"{_schema_name(self.type_name)}Response", response=(field_type, ...)
            )
            schema = _wrap(schema)
        self._adapter = adapter
        self.schema = OutputSchema(name=_schema_name(self.type_name), schema=schema)
        self.schema_json = json.dumps(schema, ensure_ascii=False, separators=(",", ":"))

    def decode(self, text: str) -> OutputT:
        """Return the decoded output or raise :class:`DecodeError`."""
        if self._adapter is None:
            return cast(OutputT, text)
        candidate = _unfence(text)
        try:
            return self._validate(candidate)
        except ValidationError as first:
            span = _json_span(candidate) if _is_json_syntax_error(first) else None
            if span is None or span == candidate:
                raise DecodeError(summarize(first)) from None
            try:
                return self._validate(span)
            except ValidationError:
                raise DecodeError(summarize(first)) from None

    def _validate(self, candidate: str) -> OutputT:
        assert self._adapter is not None
        if self._wrapper is None:
            return self._adapter.validate_json(candidate)
        try:
            wrapped = self._wrapper.model_validate_json(candidate)
        except ValidationError:
            try:
                return self._adapter.validate_json(candidate)
            except ValidationError:
                pass
            raise
        return cast(OutputT, getattr(wrapped, WRAPPER_KEY))


def summarize(error: ValidationError) -> str:
    """Locations and messages of a validation error, without the input values."""
    parts = []
    for item in error.errors(include_url=False, include_input=False, include_context=False):
        loc = ".".join(str(p) for p in item["loc"]) or "(root)"
        parts.append(f"{loc}: {item['msg']}")
    text = "; ".join(parts) or str(error.title)
    return text if len(text) <= _ERRORS_LIMIT else text[: _ERRORS_LIMIT - 1] + "…"


@functools.lru_cache(maxsize=256)
def _cached_decoder(output_type: Hashable) -> OutputDecoder[Any]:
    return OutputDecoder(cast(type[Any], output_type))


def decoder_for(output_type: type[OutputT]) -> OutputDecoder[OutputT]:
    """The (cached) decoder for ``output_type``; unhashable types get a fresh one."""
    try:
        return cast(OutputDecoder[OutputT], _cached_decoder(cast(Hashable, output_type)))
    except TypeError:
        return OutputDecoder(output_type)


def _unfence(text: str) -> str:
    stripped = text.strip()
    if "```" in stripped:
        match = _FENCE.search(stripped)
        if match is not None:
            return match.group(1).strip()
    return stripped


def _json_span(text: str) -> str | None:
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if not starts:
        return None
    start = min(starts)
    end = text.rfind("}" if text[start] == "{" else "]")
    return text[start : end + 1] if end > start else None


def _is_json_syntax_error(error: ValidationError) -> bool:
    return any(item["type"] == "json_invalid" for item in error.errors(include_url=False))


def _wrap(schema: JsonObject) -> JsonObject:
    inner = dict(schema)
    defs = inner.pop("$defs", None)
    wrapped: JsonObject = {
        "type": "object",
        "properties": {WRAPPER_KEY: inner},
        "required": [WRAPPER_KEY],
        "additionalProperties": False,
    }
    if defs is not None:
        wrapped["$defs"] = defs
    return wrapped


def _type_name(output_type: object) -> str:
    name = getattr(output_type, "__name__", None)
    return name if isinstance(name, str) else repr(output_type)


def _schema_name(type_name: str) -> str:
    return _NAME_UNSAFE.sub("_", type_name).strip("_")[:64] or "output"


__all__ = ["WRAPPER_KEY", "DecodeError", "OutputDecoder", "decoder_for", "summarize"]
