"""``value_for_schema``: the values TestLLM sends as tool arguments and structured output must validate
against the schemas the loop offers (pydantic models and hand-written JSON schemas)."""

from __future__ import annotations

import datetime as dt
import enum
import ipaddress
import json
import math
import re
import uuid
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any, Literal, NoReturn

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import AnyUrl, BaseModel, ConfigDict, Field, TypeAdapter

from kanawa.llm.testing.schema_values import value_for_schema
from kanawa.types import JsonObject, JsonValue

# ------------------------------------------------------------------------- a small JSON schema checker


def violations(value: JsonValue, schema: JsonValue, root: JsonObject, path: str = "$") -> list[str]:
    """Every way ``value`` breaks ``schema`` (the keywords value_for_schema claims to honour)."""
    if schema is True or schema == {}:
        return []
    if schema is False:
        return [f"{path}: false schema"]
    assert isinstance(schema, dict)
    errors: list[str] = []
    if "$ref" in schema:
        ref = schema["$ref"]
        assert isinstance(ref, str)
        target: JsonValue = root
        for part in ref.lstrip("#/").split("/") if ref != "#" else []:
            assert isinstance(target, dict)
            target = target[part]
        errors += violations(value, target, root, path)
    for sub in schema.get("allOf") or []:  # type: ignore[union-attr]
        errors += violations(value, sub, root, path)
    if "anyOf" in schema and not any(not violations(value, s, root) for s in schema["anyOf"]):  # type: ignore[union-attr]
        errors.append(f"{path}: matches no anyOf branch")
    if "oneOf" in schema and sum(not violations(value, s, root) for s in schema["oneOf"]) != 1:  # type: ignore[union-attr]
        errors.append(f"{path}: does not match exactly one oneOf branch")
    if "enum" in schema and value not in schema["enum"]:  # type: ignore[operator]
        errors.append(f"{path}: {value!r} not in enum")
    if "const" in schema and value != schema["const"]:
        errors.append(f"{path}: {value!r} != const")
    declared = schema.get("type")
    if declared is not None:
        types = declared if isinstance(declared, list) else [declared]
        if not any(_is_type(value, t) for t in types):  # type: ignore[arg-type]
            errors.append(f"{path}: {value!r} is not {declared}")
    if isinstance(value, dict):
        errors += _object_violations(value, schema, root, path)
    elif isinstance(value, list):
        errors += _array_violations(value, schema, root, path)
    elif isinstance(value, str):
        errors += _string_violations(value, schema, path)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        errors += _number_violations(value, schema, path)
    return errors


def _is_type(value: JsonValue, name: str) -> bool:
    checks = {
        "null": value is None,
        "boolean": isinstance(value, bool),
        "integer": isinstance(value, int) and not isinstance(value, bool),
        "number": isinstance(value, int | float) and not isinstance(value, bool),
        "string": isinstance(value, str),
        "array": isinstance(value, list),
        "object": isinstance(value, dict),
    }
    return checks[name]


def _object_violations(
    value: dict[str, JsonValue], schema: JsonObject, root: JsonObject, path: str
) -> list[str]:
    errors = [f"{path}: missing {name}" for name in schema.get("required") or [] if name not in value]  # type: ignore[union-attr]
    props = schema.get("properties") or {}
    assert isinstance(props, dict)
    for key, item in value.items():
        if key in props:
            errors += violations(item, props[key], root, f"{path}.{key}")
        elif "additionalProperties" in schema:
            errors += violations(item, schema["additionalProperties"], root, f"{path}.{key}")
    if len(value) < int(schema.get("minProperties", 0)):  # type: ignore[arg-type]
        errors.append(f"{path}: too few properties")
    return errors


def _array_violations(value: list[JsonValue], schema: JsonObject, root: JsonObject, path: str) -> list[str]:
    errors: list[str] = []
    prefix = schema.get("prefixItems") or []
    assert isinstance(prefix, list)
    for index, item in enumerate(value):
        sub = prefix[index] if index < len(prefix) else schema.get("items", True)
        errors += violations(item, sub, root, f"{path}[{index}]")
    if len(value) < int(schema.get("minItems", 0)):  # type: ignore[arg-type]
        errors.append(f"{path}: too few items")
    if "maxItems" in schema and len(value) > int(schema["maxItems"]):  # type: ignore[arg-type]
        errors.append(f"{path}: too many items")
    if schema.get("uniqueItems") and len({json.dumps(v, sort_keys=True) for v in value}) != len(value):
        errors.append(f"{path}: items not unique")
    return errors


def _string_violations(value: str, schema: JsonObject, path: str) -> list[str]:
    errors: list[str] = []
    if len(value) < int(schema.get("minLength", 0)) or len(value) > int(schema.get("maxLength", 10**9)):  # type: ignore[arg-type]
        errors.append(f"{path}: length {len(value)} out of bounds")
    if "pattern" in schema and not re.search(str(schema["pattern"]), value):
        errors.append(f"{path}: {value!r} does not match {schema['pattern']!r}")
    parsers: dict[str, Callable[[str], object]] = {
        "date": dt.date.fromisoformat,
        "date-time": dt.datetime.fromisoformat,
        "time": dt.time.fromisoformat,
        "uuid": uuid.UUID,
        "ipv4": ipaddress.IPv4Address,
        "ipv6": ipaddress.IPv6Address,
        "email": lambda s: re.fullmatch(r"[^@\s]+@[^@\s]+\.[a-z]+", s) or _fail(),
        "uri": lambda s: re.match(r"https?://[^\s/]+", s) or _fail(),
    }
    fmt = schema.get("format")
    if isinstance(fmt, str) and fmt in parsers:
        try:
            parsers[fmt](value)
        except ValueError:
            errors.append(f"{path}: {value!r} is not a {fmt}")
    return errors


def _fail() -> NoReturn:
    raise ValueError


def _number_violations(value: float, schema: JsonObject, path: str) -> list[str]:
    bounds: dict[str, Callable[[float], bool]] = {
        "minimum": lambda b: value >= b,
        "maximum": lambda b: value <= b,
        "exclusiveMinimum": lambda b: value > b,
        "exclusiveMaximum": lambda b: value < b,
    }
    errors = []
    for key, ok in bounds.items():
        bound = schema.get(key)
        if isinstance(bound, int | float) and not isinstance(bound, bool) and not ok(bound):
            errors.append(f"{path}: {value} breaks {key} {bound}")
    step = schema.get("multipleOf")
    if isinstance(step, int | float) and not math.isclose(value / step, round(value / step), abs_tol=1e-9):
        errors.append(f"{path}: {value} is not a multiple of {step}")
    return errors


def assert_valid(value: JsonValue, schema: JsonObject) -> None:
    json.dumps(value)  # a JSON value, nothing Python-only
    assert violations(value, schema, schema) == [], value


# ------------------------------------------------------------------------------ pydantic model zoo


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Priority(enum.IntEnum):
    LOW = 1
    HIGH = 5


class Address(BaseModel):
    street: str
    city: str = Field(min_length=2, max_length=20)
    postcode: str = Field(pattern=r"^\d{3}-\d{4}$")


class Person(BaseModel):
    name: str
    age: int = Field(ge=0, le=130)
    address: Address
    previous: list[Address] = []
    nickname: str | None = None
    email: str | None = Field(default=None, max_length=40)


class Constrained(BaseModel):
    score: float = Field(gt=0, lt=1)
    rating: int = Field(ge=1, le=5)
    step: int = Field(multiple_of=5, ge=12)
    price: float = Field(multiple_of=0.25, ge=0.3, le=10)
    code: str = Field(min_length=3, max_length=5)
    tags: list[str] = Field(min_length=2, max_length=3)
    word: Annotated[str, Field(pattern=r"^[A-Z]{2}[0-9]+$")]


class Kinds(BaseModel):
    mode: Literal["fast", "slow"]
    color: Color
    priority: Priority
    either: int | str
    anything: Any
    flags: dict[str, bool]
    counts: dict[str, int]
    pair: tuple[int, str]
    unique: set[int] = Field(min_length=3)
    frozen: frozenset[str]


class Temporal(BaseModel):
    when: dt.datetime
    day: dt.date
    at: dt.time
    wait: dt.timedelta
    ident: uuid.UUID
    link: AnyUrl
    host: ipaddress.IPv4Address
    amount: Decimal
    blob: bytes
    path: Path


class Cat(BaseModel):
    kind: Literal["cat"]
    lives: int = Field(ge=1, le=9)


class Dog(BaseModel):
    kind: Literal["dog"]
    good: bool


class Owner(BaseModel):
    pet: Cat | Dog = Field(discriminator="kind")
    pets: list[Annotated[Cat | Dog, Field(discriminator="kind")]]


class Node(BaseModel):
    value: int
    children: list[Node] = []
    parent: Node | None = None


class Chain(BaseModel):
    label: str
    next: Chain | None  # required, but nullable: the recursion must end in null


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    name: str
    size: int
    when: dt.datetime
    inner: Address


class Aliased(BaseModel):
    user_name: str = Field(alias="userName")
    items_: dict[str, list[Cat]] = Field(alias="items")


MODELS: list[type[BaseModel]] = [
    Address,
    Person,
    Constrained,
    Kinds,
    Temporal,
    Owner,
    Node,
    Chain,
    Strict,
    Aliased,
]


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
@pytest.mark.parametrize("seed", range(5))
def test_pydantic_models_accept_generated_values(model: type[BaseModel], seed: int) -> None:
    schema = model.model_json_schema()
    value = value_for_schema(schema, seed=seed)
    model.model_validate_json(json.dumps(value))  # the path TestLLM's JSON text takes
    if not model.model_config.get("strict"):
        model.model_validate(value)
    assert_valid(value, schema)


def test_same_seed_same_value_other_seeds_vary() -> None:
    schema = Person.model_json_schema()
    assert value_for_schema(schema, seed=3) == value_for_schema(schema, seed=3)
    distinct = {json.dumps(value_for_schema(schema, seed=s), sort_keys=True) for s in range(10)}
    assert len(distinct) > 5


def test_recursive_model_terminates_in_a_minimal_value() -> None:
    value = value_for_schema(Chain.model_json_schema())
    depth = 0
    while isinstance(value, dict) and value.get("next") is not None:
        value, depth = value["next"], depth + 1
    assert 0 < depth < 20


def test_schema_demanding_infinite_nesting_is_refused() -> None:
    schema: JsonObject = {
        "$defs": {
            "Loop": {
                "type": "object",
                "properties": {"again": {"$ref": "#/$defs/Loop"}},
                "required": ["again"],
            }
        },
        "$ref": "#/$defs/Loop",
    }
    with pytest.raises(ValueError, match="infinitely nested"):
        value_for_schema(schema)


def test_remote_ref_is_refused_clearly() -> None:
    with pytest.raises(ValueError, match=r"\$ref 'https://example.com/s.json'"):
        value_for_schema({"$ref": "https://example.com/s.json"})


# ---------------------------------------------------------------------------------- keyword by keyword


@pytest.mark.parametrize(
    "schema",
    [
        {},
        {"type": "null"},
        {"type": ["null", "integer"]},
        {"type": "boolean"},
        {"const": {"a": [1, 2]}},
        {"enum": ["x", 2, None]},
        {"definitions": {"N": {"type": "integer", "minimum": 3}}, "$ref": "#/definitions/N"},
        {"$defs": {"N": {"type": "string"}}, "$ref": "#/$defs/N", "maxLength": 3},
        {"allOf": [{"properties": {"a": {"type": "integer"}}, "required": ["a"]}, {"required": ["b"]}]},
        {"allOf": [{"type": "integer", "minimum": 5}, {"maximum": 6}]},
        {"anyOf": [{"type": "null"}, {"type": "string", "format": "email"}]},
        {"oneOf": [{"type": "integer", "maximum": -1}, {"type": "string"}]},
        {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": False},
        {"type": "object", "minProperties": 3, "additionalProperties": {"type": "integer"}},
        {"type": "object", "properties": {"a": True, "b": {"type": "null"}}, "required": ["a", "b"]},
        {"type": "array", "prefixItems": [{"type": "integer"}, {"const": "x"}], "items": False},
        {
            "type": "array",
            "items": {"type": "integer", "minimum": 0, "maximum": 9},
            "minItems": 4,
            "uniqueItems": True,
        },
        {"type": "array", "items": {"enum": [1, 2, 3]}, "minItems": 3, "maxItems": 3, "uniqueItems": True},
        {"type": "array", "maxItems": 0},
        {"type": "string", "minLength": 30},
        {"type": "string", "maxLength": 2},
        {"type": "string", "pattern": r"^[a-z]+-\d{2,4}$"},
        {"type": "string", "pattern": r"(?:ab|cd)+x?$"},
        {"type": "string", "pattern": r"^\u3042[ぁ-ん]{2}$"},
        *(
            {"type": "string", "format": f}
            for f in ("date", "date-time", "time", "uuid", "email", "uri", "ipv4", "ipv6")
        ),
        {"type": "integer", "exclusiveMinimum": 5, "exclusiveMaximum": 7},
        {"type": "integer", "minimum": 5, "exclusiveMinimum": True, "maximum": 6},  # draft-4 booleans
        {"type": "integer", "minimum": -3.5, "maximum": -2.5},
        {"type": "integer", "multipleOf": 7, "minimum": 15, "maximum": 27},
        {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 0.001},
        {"type": "number", "multipleOf": 0.1, "minimum": 0.25, "maximum": 0.35},
        {"type": "number", "maximum": -100},
        {"minimum": 10},
    ],
)
def test_keyword_schemas_are_satisfied(schema: JsonObject) -> None:
    for seed in range(4):
        assert_valid(value_for_schema(schema, seed=seed), schema)


def test_anyof_prefers_the_first_non_null_branch() -> None:
    assert isinstance(
        value_for_schema({"anyOf": [{"type": "null"}, {"type": "integer"}, {"type": "string"}]}), int
    )


def test_optional_properties_are_included_deterministically_by_seed() -> None:
    schema: JsonObject = {"type": "object", "properties": {k: {"type": "integer"} for k in "abcdefgh"}}
    shapes = set()
    for seed in range(8):
        value = value_for_schema(schema, seed=seed)
        assert isinstance(value, dict)
        shapes.add(tuple(sorted(value)))
    assert len(shapes) > 1


def test_unsupported_pattern_falls_back_to_a_plain_string() -> None:
    value = value_for_schema({"type": "string", "pattern": r"^(?=.*\d)\w+$", "maxLength": 12})
    assert isinstance(value, str)
    assert len(value) <= 12


# ---------------------------------------------------------------------------------------- examples


class Booking(BaseModel):
    city: Annotated[str, Field(examples=["Kyoto", "Osaka"])]
    nights: int = Field(default=1, ge=1, le=30, examples=[3])
    note: str | None = Field(default=None, examples=["window seat"])
    guest: Address = Field(
        examples=[{"street": "1-2 Sanjo", "city": "Kyoto", "postcode": "604-8005"}],
    )


def test_a_schema_with_examples_gets_its_first_example() -> None:
    assert value_for_schema({"type": "string", "examples": ["first", "second"]}) == "first"
    assert value_for_schema({"type": "integer", "minimum": 0, "examples": [7, 9]}, seed=5) == 7
    assert value_for_schema({"type": "string", "examples": []}) != ""  # empty list: generated as before
    assert value_for_schema({"const": "fixed", "examples": ["other"]}) == "fixed"  # const still wins


@pytest.mark.parametrize("seed", range(5))
def test_pydantic_field_examples_are_used_and_optional_ones_always_included(seed: int) -> None:
    schema = Booking.model_json_schema()
    value = value_for_schema(schema, seed=seed)
    assert value == {
        "city": "Kyoto",
        "nights": 3,
        "note": "window seat",
        "guest": {"street": "1-2 Sanjo", "city": "Kyoto", "postcode": "604-8005"},
    }
    Booking.model_validate_json(json.dumps(value))


def test_a_field_example_beats_the_example_of_its_ref_target() -> None:
    schema: JsonObject = {
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/Word", "examples": ["field"]}, "b": {"$ref": "#/$defs/Word"}},
        "required": ["a", "b"],
        "$defs": {"Word": {"type": "string", "examples": ["target"]}},
    }
    assert value_for_schema(schema) == {"a": "field", "b": "target"}


def test_an_example_is_copied_not_shared_with_the_schema() -> None:
    schema: JsonObject = {"type": "object", "examples": [{"tags": ["x"]}]}
    value = value_for_schema(schema)
    assert isinstance(value, dict)
    value["tags"] = []
    assert schema["examples"] == [{"tags": ["x"]}]


def test_schemas_without_examples_are_generated_as_before() -> None:
    schema: JsonObject = {"type": "object", "properties": {k: {"type": "integer"} for k in "abcd"}}
    with_example = {
        **schema,
        "properties": {**schema["properties"], "e": {"type": "integer", "examples": [1]}},
    }
    for seed in range(6):
        plain, extended = value_for_schema(schema, seed=seed), value_for_schema(with_example, seed=seed)
        assert isinstance(plain, dict)
        assert isinstance(extended, dict)
        assert extended == {**plain, "e": 1}  # the example consumes no random draw


# -------------------------------------------------------------------------- random schemas (hypothesis)

FORMATS = ("date", "date-time", "time", "uuid", "email", "uri", "ipv4")
PATTERNS = (
    r"^\d{3}-\d{4}$",
    r"^[A-Z][a-z]+$",
    r"^(foo|bar)_[0-9a-f]{4}$",
    r"x+y?",
    r"^[^@\s]+@example\.org$",
)
NAMES = st.text(alphabet="abcdefghij_", min_size=1, max_size=6)


@st.composite
def integer_schemas(draw: st.DrawFn) -> JsonObject:
    schema: JsonObject = {"type": "integer"}
    low = draw(st.none() | st.integers(-1000, 1000))
    step = draw(st.none() | st.integers(1, 20))
    if low is not None:
        schema["exclusiveMinimum" if draw(st.booleans()) else "minimum"] = low
        if draw(st.booleans()):
            schema["maximum"] = low + (step or 1) * draw(st.integers(2, 50))
    if step is not None:
        schema["multipleOf"] = step
    return schema


@st.composite
def number_schemas(draw: st.DrawFn) -> JsonObject:
    schema: JsonObject = {"type": "number"}
    low = draw(st.none() | st.floats(-1e6, 1e6, allow_nan=False))
    if low is not None:
        schema["exclusiveMinimum" if draw(st.booleans()) else "minimum"] = low
        if draw(st.booleans()):
            schema["exclusiveMaximum" if draw(st.booleans()) else "maximum"] = low + draw(st.floats(0.5, 1e3))
    if draw(st.booleans()):
        schema["multipleOf"] = draw(st.sampled_from([0.5, 0.25, 0.1, 0.01, 2, 3]))
        if "minimum" in schema or "exclusiveMinimum" in schema:
            schema.pop("maximum", None)
            schema.pop("exclusiveMaximum", None)
    return schema


@st.composite
def string_schemas(draw: st.DrawFn) -> JsonObject:
    kind = draw(st.sampled_from(["plain", "format", "pattern"]))
    if kind == "format":
        return {"type": "string", "format": draw(st.sampled_from(FORMATS))}
    if kind == "pattern":
        return {"type": "string", "pattern": draw(st.sampled_from(PATTERNS))}
    low = draw(st.integers(0, 40))
    schema: JsonObject = {"type": "string", "minLength": low}
    if draw(st.booleans()):
        schema["maxLength"] = low + draw(st.integers(0, 10))
    return schema


UNIQUE_ITEMS: list[JsonObject] = [{"type": "string", "minLength": 2}, {"type": "integer"}]
SIMPLE_TYPES: list[JsonObject] = [{"type": "boolean"}, {"type": "null"}]
SCALARS: st.SearchStrategy[JsonValue] = st.integers() | st.text(max_size=5) | st.none()


def _enum(values: list[JsonValue]) -> JsonObject:
    return {"enum": values}


def _const(value: JsonValue) -> JsonObject:
    return {"const": value}


LEAVES: st.SearchStrategy[JsonObject] = (
    integer_schemas()
    | number_schemas()
    | string_schemas()
    | st.sampled_from(SIMPLE_TYPES)
    | st.lists(SCALARS, min_size=1, max_size=4, unique=True).map(_enum)
    | SCALARS.map(_const)
)


def _objects(children: st.SearchStrategy[JsonObject]) -> st.SearchStrategy[JsonObject]:
    @st.composite
    def build(draw: st.DrawFn) -> JsonObject:
        props = draw(st.dictionaries(NAMES, children, max_size=4))
        required = [name for name in props if draw(st.booleans())]
        schema: JsonObject = {"type": "object", "properties": props, "required": required}  # type: ignore[dict-item]
        schema["additionalProperties"] = draw(st.sampled_from([False, True]) | children)
        return schema

    return build()


def _arrays(children: st.SearchStrategy[JsonObject]) -> st.SearchStrategy[JsonObject]:
    @st.composite
    def build(draw: st.DrawFn) -> JsonObject:
        low = draw(st.integers(0, 3))
        schema: JsonObject = {"type": "array", "items": draw(children), "minItems": low}
        if draw(st.booleans()):
            schema["maxItems"] = low + draw(st.integers(0, 3))
        if draw(st.booleans()):
            schema["items"] = draw(st.sampled_from(UNIQUE_ITEMS))
            schema["uniqueItems"] = True
        return schema

    return build()


def _any_of(branches: list[JsonObject]) -> JsonObject:
    return {"anyOf": list[JsonValue](branches)}


def _nullable(schema: JsonObject) -> JsonObject:
    return {"anyOf": [{"type": "null"}, schema]}


def _all_of(schema: JsonObject) -> JsonObject:
    return {"allOf": [schema]}


def _combinations(children: st.SearchStrategy[JsonObject]) -> st.SearchStrategy[JsonObject]:
    branches = st.lists(children, min_size=1, max_size=3).map(_any_of)
    return branches | children.map(_nullable) | _objects(children).map(_all_of)


SCHEMAS = st.recursive(
    LEAVES, lambda children: _objects(children) | _arrays(children) | _combinations(children), max_leaves=12
)


@st.composite
def schemas_with_refs(draw: st.DrawFn) -> JsonObject:
    """A random schema, sometimes with its parts moved to ``$defs`` and referenced."""
    body = draw(SCHEMAS)
    if not draw(st.booleans()):
        return body
    defs: JsonObject = {}

    def hoist(node: JsonValue) -> JsonValue:
        if isinstance(node, list):
            return [hoist(n) for n in node]
        if not isinstance(node, dict):
            return node
        inner = {k: (hoist(v) if k in ("items", "anyOf", "allOf") else v) for k, v in node.items()}
        if "properties" in node:
            inner["properties"] = {k: hoist(v) for k, v in node["properties"].items()}  # type: ignore[union-attr]
        if "type" in node and draw(st.booleans()):
            name = f"D{len(defs)}"
            defs[name] = inner
            return {"$ref": f"#/$defs/{name}"}
        return inner

    root = hoist(body)
    assert isinstance(root, dict)
    return {**root, "$defs": defs}


@settings(deadline=None)
@given(schemas_with_refs(), st.integers(0, 2**16))
def test_random_schemas_get_valid_values(schema: JsonObject, seed: int) -> None:
    value = value_for_schema(schema, seed=seed)
    assert_valid(value, schema)
    assert value_for_schema(schema, seed=seed) == value


def test_the_checker_itself_rejects_bad_values() -> None:
    schema = Person.model_json_schema()
    assert violations({"name": "x"}, schema, schema)
    assert violations(3, {"type": "integer", "multipleOf": 2}, {})
    assert violations("2024-13-01", {"type": "string", "format": "date"}, {})
    assert violations([1, 1], {"type": "array", "uniqueItems": True}, {})
    assert violations(1, {"oneOf": [{"type": "integer"}, {"minimum": 0}]}, {})
    assert TypeAdapter(int).validate_python(value_for_schema(TypeAdapter(int).json_schema())) is not None
