"""From a Python function to a tool's arguments model and JSON schema (seed 002 §3-2).

``describe_function`` inspects a function exactly once — at decoration time — and returns what the
hot path needs: the description, a pydantic model that validates the arguments, and a clean JSON
schema for the model. Nothing here runs per call except :func:`call_arguments`.

Rules:

* Type hints give the types; docstrings (Google, NumPy, reST — via ``docstring_parser``) give the
  tool description (short + long description, never the ``Args`` section) and per-parameter
  descriptions. An explicit ``Field(description=...)`` beats the docstring.
* ``*args``/``**kwargs`` and positional-only parameters without a type hint are refused with a
  :class:`TypeError`; so are generator functions and types pydantic cannot validate or describe.
* A first parameter annotated ``RunContext[...]`` or ``RunContext`` (a string annotation too, even when
  ``RunContext`` is imported only under ``TYPE_CHECKING``) is the run context: it is left out of the
  arguments model and the schema, and the invoker passes it positionally. Anywhere else, or
  keyword-only, it is refused with a :class:`TypeError`.
* Unknown arguments are refused at validation (``extra="forbid"``), so the schema says
  ``additionalProperties: false``.
* The schema is cleaned for providers: no ``title`` noise, ``$ref`` inlined unless recursive,
  ``const`` written as a one-value ``enum``, ``type``/``description`` first. With ``strict=True``
  every object lists all its properties as ``required`` (OpenAI strict mode); parameters with
  defaults then have to be sent by the model.
"""

from __future__ import annotations

import functools
import inspect
import re
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, cast

from pydantic import BaseModel, ConfigDict, Field, PydanticUserError, create_model
from pydantic.errors import PydanticInvalidForJsonSchema, PydanticSchemaGenerationError
from pydantic.fields import FieldInfo

from kanawa.context import RunContext
from kanawa.types import JsonObject, JsonValue

__all__ = [
    "FunctionDescription",
    "ToolArguments",
    "call_arguments",
    "clean_schema",
    "describe_function",
    "make_strict",
    "parse_docstring",
]

TOOL_NAME_PATTERN = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""Names every provider accepts (the intersection of OpenAI, Anthropic and Gemini rules)."""

_SECTION_MARKS = re.compile(r":|^\s*-+\s*$", re.MULTILINE)
"""What every docstring section needs: a colon (Google ``Args:``, reST ``:param``, Epydoc ``@param x:``,
Sphinx directives) or a line of dashes (a NumPy underline). A docstring without either is prose, and
:func:`parse_docstring` reads it without importing ``docstring_parser``."""


class ToolArguments(BaseModel):
    """Base class of every generated arguments model.

    The class variables describe how a validated instance becomes a call. They are only consulted
    when ``kanawa_plain`` is false, so the common case is ``function(**instance.__dict__)``.
    """

    model_config = ConfigDict(extra="forbid", defer_build=True)
    """``defer_build``: this base is never validated itself, so ``import kanawa``'s tools need not build
    a validator for it (nor load pydantic's plugin machinery). Its subclasses are built when defined,
    as any model is (:meth:`__pydantic_init_subclass__`)."""

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        if not cls.__pydantic_complete__:
            cls.model_rebuild(raise_errors=False)

    kanawa_plain: ClassVar[bool] = True
    """Every field is a keyword parameter of the same name."""
    kanawa_positional: ClassVar[tuple[str, ...]] = ()
    """Field names passed positionally, in order (positional-only parameters)."""
    kanawa_param_names: ClassVar[Mapping[str, str]] = {}
    """Field name → parameter name, for parameters whose names pydantic reserves (``json``, ``_x``)."""


@dataclass(frozen=True, slots=True)
class FunctionDescription:
    """What ``describe_function`` learned about a function."""

    description: str
    args_model: type[BaseModel]
    parameters: JsonObject
    is_async: bool
    takes_context: bool = False
    """The first parameter is the :class:`~kanawa.context.RunContext`, passed before the arguments."""


def call_arguments(model: BaseModel) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Positional and keyword arguments for calling a tool's function with validated ``model``.

    A hand-written arguments model (not a :class:`ToolArguments`) passes its fields and any extra
    fields it allowed as keyword arguments.
    """
    cls = type(model)
    plain: bool | None = getattr(cls, "kanawa_plain", None)
    if plain:
        return (), dict(model.__dict__)
    if plain is None:
        keywords = dict(model.__dict__)
        if model.__pydantic_extra__:
            keywords.update(model.__pydantic_extra__)
        return (), keywords
    positional: tuple[str, ...] = getattr(cls, "kanawa_positional", ())
    renames: Mapping[str, str] = getattr(cls, "kanawa_param_names", {})
    values = model.__dict__
    args = tuple(values[f] for f in positional)
    return args, {renames.get(f, f): v for f, v in values.items() if f not in positional}


# --------------------------------------------------------------------------------------- docstrings


def parse_docstring(fn: Callable[..., Any]) -> tuple[str, dict[str, str]]:
    """The description (short + long, without sections) and per-parameter descriptions of ``fn``.

    A ``functools.partial`` is described by its function; a callable object by its ``__call__``
    docstring, else its class docstring.
    """
    source = _hint_source(fn)
    text = inspect.getdoc(source)
    if not text and source is not fn and not isinstance(fn, functools.partial):
        text = inspect.getdoc(fn)  # a callable object's class docstring
    if not text:
        return "", {}
    if _SECTION_MARKS.search(text) is None:
        return _prose_description(text), {}
    import docstring_parser  # deferred: only paid when a tool's docstring has sections

    try:
        doc = docstring_parser.parse(text)
    except (docstring_parser.ParseError, IndexError):  # its reST reader indexes past ": :" lines
        return text.strip(), {}
    description = "\n\n".join(p.strip() for p in (doc.short_description, doc.long_description) if p)
    params: dict[str, str] = {}
    for param in doc.params:
        if not param.description:
            continue
        for arg_name in param.arg_name.split(","):  # NumPy allows "x, y : int"
            params.setdefault(arg_name.strip().lstrip("*"), param.description.strip())
    return description, params


def _prose_description(text: str) -> str:
    """The description ``docstring_parser`` gives a docstring without sections (its reST reading wins
    when no style finds any): the first line, then the rest, each stripped, a blank line between."""
    first, *rest = inspect.cleandoc(text).split("\n", 1)
    long = rest[0].strip() if rest else ""
    return "\n\n".join(part.strip() for part in (first, long) if part)


# ---------------------------------------------------------------------------------------- functions


def _hint_source(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The object whose annotations describe ``fn``'s parameters."""
    if isinstance(fn, functools.partial):
        return _hint_source(fn.func)
    if inspect.isfunction(fn) or inspect.ismethod(fn) or inspect.isbuiltin(fn):
        return fn
    call = getattr(type(fn), "__call__", None)  # noqa: B004 - a callable instance: use its __call__
    return cast("Callable[..., Any]", call) if call is not None else fn


def _is_async(fn: Callable[..., Any]) -> bool:
    if inspect.iscoroutinefunction(fn):
        return True
    source = _hint_source(fn)
    return source is not fn and inspect.iscoroutinefunction(source)


def _has_description(hint: object, default: object) -> bool:
    if isinstance(default, FieldInfo) and default.description:
        return True
    if typing.get_origin(hint) is Annotated:
        return any(isinstance(m, FieldInfo) and m.description for m in getattr(hint, "__metadata__", ()))
    return False


def _reserved(name: str) -> bool:
    return name.startswith(("_", "model_")) or hasattr(ToolArguments, name)


def describe_function(fn: Callable[..., Any], *, name: str, strict: bool = False) -> FunctionDescription:
    """Inspect ``fn`` once and build its description, arguments model and JSON schema.

    Raises :class:`TypeError` for signatures a model cannot call (see the module docstring).
    """
    source = _hint_source(fn)
    if inspect.isasyncgenfunction(source) or inspect.isgeneratorfunction(source):
        raise TypeError(f"tool {name!r}: generator functions cannot be tools; return a value instead")
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"tool {name!r}: the signature of {fn!r} cannot be inspected") from exc
    hints = _type_hints(source, name)
    description, param_docs = parse_docstring(fn)

    fields: dict[str, Any] = {}
    positional: list[str] = []
    renames: dict[str, str] = {}
    takes_context = False
    for index, param in enumerate(signature.parameters.values()):
        if _is_run_context(hints.get(param.name)):
            if index != 0 or param.kind is param.KEYWORD_ONLY:
                raise TypeError(
                    f"tool {name!r}: the RunContext parameter {param.name!r} must be the first "
                    "positional parameter"
                )
            takes_context = True
            continue
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            star = "*" if param.kind is param.VAR_POSITIONAL else "**"
            raise TypeError(
                f"tool {name!r}: parameter {star}{param.name} is not supported; "
                "declare every argument as a named, typed parameter"
            )
        if param.kind is param.POSITIONAL_ONLY and param.name not in hints:
            raise TypeError(f"tool {name!r}: positional-only parameter {param.name!r} needs a type hint")
        hint: object = hints.get(param.name, Any)
        default: object = ... if param.default is param.empty else param.default
        field_name = param.name
        extra: dict[str, Any] = {}
        if _reserved(param.name):
            field_name = f"kanawa_arg_{index}"
            renames[field_name] = param.name
            extra["alias"] = param.name
        doc = param_docs.get(param.name)
        if doc and not _has_description(hint, default):
            extra["description"] = doc
        if param.kind is param.POSITIONAL_ONLY:
            positional.append(field_name)
        annotated = Annotated[hint, Field(**extra)] if extra else hint
        fields[field_name] = (annotated, default)

    module = getattr(fn, "__module__", None)
    try:
        model = create_model(
            name, __base__=ToolArguments, __module__=module if isinstance(module, str) else __name__, **fields
        )
        raw_schema = model.model_json_schema()
    except (PydanticSchemaGenerationError, PydanticInvalidForJsonSchema, PydanticUserError) as exc:
        raise TypeError(
            f"tool {name!r}: its parameter types cannot be validated or described ({exc})"
        ) from exc
    if positional or renames:
        model.kanawa_plain = False
        model.kanawa_positional = tuple(positional)
        model.kanawa_param_names = renames
    parameters = clean_schema(cast("JsonObject", raw_schema))
    if strict:
        parameters = make_strict(parameters)
    return FunctionDescription(description, model, parameters, _is_async(fn), takes_context)


def _type_hints(source: Callable[..., Any], name: str) -> dict[str, Any]:
    """The resolved hints of ``source``. ``RunContext`` resolves even when the function's module
    imports it only for type checking (a common lint fix under ``from __future__ import annotations``);
    a module that binds the name itself keeps its own meaning."""
    module_globals = getattr(inspect.unwrap(source), "__globals__", {})
    extra = None if "RunContext" in module_globals else {"RunContext": RunContext}
    try:
        return typing.get_type_hints(source, localns=extra, include_extras=True)
    except Exception as exc:  # NameError for unresolvable forward references, among others
        raise TypeError(f"tool {name!r}: its type hints cannot be resolved ({exc})") from exc


def _is_run_context(hint: object) -> bool:
    """``RunContext``, ``RunContext[Deps]``, or either inside ``Annotated``."""
    if typing.get_origin(hint) is Annotated:
        hint = typing.get_args(hint)[0]
    return hint is RunContext or typing.get_origin(hint) is RunContext


# ------------------------------------------------------------------------------------------ schemas

_FIRST_KEYS = ("type", "description", "enum", "properties", "items", "required", "additionalProperties")
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_VALUES = ("items", "additionalProperties", "not", "contains", "propertyNames")


def _ordered(node: dict[str, JsonValue]) -> dict[str, JsonValue]:
    out = {k: node[k] for k in _FIRST_KEYS if k in node}
    out.update((k, v) for k, v in node.items() if k not in out)
    return out


class _Inliner:
    """Inlines ``$ref``s into their use sites; keeps (and cleans) ``$defs`` only for recursive types."""

    def __init__(self, defs: Mapping[str, JsonValue]) -> None:
        self.defs = defs
        self.kept: dict[str, JsonValue] = {}
        self.wanted: list[str] = []

    def walk(self, node: JsonValue, stack: frozenset[str]) -> JsonValue:
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            key = ref.removeprefix("#/$defs/")
            siblings = {k: v for k, v in node.items() if k != "$ref"}
            if key in stack or key not in self.defs:
                if key not in self.kept and key not in self.wanted:
                    self.wanted.append(key)
                return self._clean_node({"$ref": ref, **siblings}, stack)
            target = self.walk(self.defs[key], stack | {key})
            merged = {**target, **self._clean_node(siblings, stack)} if isinstance(target, dict) else target
            return _ordered(merged) if isinstance(merged, dict) else merged
        return self._clean_node(node, stack)

    def _clean_node(self, node: dict[str, JsonValue], stack: frozenset[str]) -> dict[str, JsonValue]:
        out = _map_subschemas(node, lambda sub: self.walk(sub, stack))
        if isinstance(out.get("title"), str):
            del out["title"]
        if "const" in out:
            out["enum"] = [out.pop("const")]
        return _ordered(out)


def clean_schema(schema: JsonObject) -> JsonObject:
    """A provider-friendly copy of a pydantic JSON schema (see the module docstring)."""
    defs = schema.get("$defs")
    inliner = _Inliner(defs if isinstance(defs, dict) else {})
    body = {k: v for k, v in schema.items() if k != "$defs"}
    cleaned = cast("JsonObject", inliner.walk(body, frozenset()))
    while inliner.wanted:
        key = inliner.wanted.pop()
        if key in inliner.defs:
            inliner.kept[key] = inliner.walk(inliner.defs[key], frozenset({key}))
    if cleaned.get("type") == "object":
        cleaned.setdefault("properties", {})
    if inliner.kept:
        cleaned["$defs"] = dict(sorted(inliner.kept.items()))
    return cleaned


def _map_subschemas(node: dict[str, JsonValue], fn: Callable[[JsonValue], JsonValue]) -> dict[str, JsonValue]:
    """A copy of ``node`` with ``fn`` applied to each direct sub-schema (never to ``default``/``enum``)."""
    out: dict[str, JsonValue] = {}
    for key, value in node.items():
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {k: fn(v) for k, v in value.items()}
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            out[key] = [fn(v) for v in value]
        elif key in _SCHEMA_VALUES and isinstance(value, dict):
            out[key] = fn(value)
        else:
            out[key] = value
    return out


def make_strict(schema: JsonObject) -> JsonObject:
    """A copy of ``schema`` in which every object requires all its properties and allows no others."""

    def visit(node: JsonValue) -> JsonValue:
        if not isinstance(node, dict):
            return node
        out = _map_subschemas(node, visit)
        properties = out.get("properties")
        if isinstance(properties, dict):
            out["required"] = list(properties)
            out["additionalProperties"] = False
        return _ordered(out)

    return cast("JsonObject", visit(schema))
