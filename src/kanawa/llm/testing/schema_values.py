"""Deterministic example values that validate against a JSON schema.

:class:`~kanawa.llm.testing.models.TestLLM` needs tool arguments and structured outputs that pass validation
without a real model, so the loop can be exercised end to end offline. :func:`value_for_schema` walks
the schema (the subset pydantic and tool schemas use) and builds one value; the same ``seed`` always
gives the same value, a different seed usually a different one.

Covered: local ``$ref`` (``#/$defs/...``, ``#/definitions/...``, any ``#/`` pointer), ``allOf``
(merged), ``anyOf``/``oneOf`` (first non-null branch), ``enum``, ``const``, ``type`` lists, objects
(``properties``, ``required``, ``additionalProperties``, ``patternProperties``, ``propertyNames``,
``min/maxProperties``, ``dependentRequired``), arrays (``items``, ``prefixItems``, draft-7 tuple
``items``, ``min/maxItems``, ``uniqueItems``, ``contains``), strings (``min/maxLength``, ``format``
date, date-time, time, duration, email, uri, uuid, hostname, ipv4, ipv6 and a few more), numbers
(``minimum``, ``maximum``, exclusive bounds in draft-4 and 2020-12 form, ``multipleOf``), booleans,
null and boolean schemas.

Examples come first: a (sub)schema with a non-empty ``examples`` list (JSON Schema's annotation for
representative values; pydantic writes ``Field(examples=[...])`` there) gets a copy of its first
example, and an optional property whose schema carries ``examples`` is always included. A tool
author's example is the most meaningful argument a test model can send (``calculator("(17 * 23) +
sqrt(144)")`` rather than ``calculator("charlie-72")``). Examples are trusted as written: an example
that contradicts its own schema is the schema author's mistake and is passed through. ``const`` still
wins over ``examples``.

Best effort, documented limits: ``pattern`` is satisfied for simple regexes (literals, classes,
``\\d``/``\\w``/``\\s``, groups, alternation, quantifiers, anchors) and otherwise falls back to a plain
string, since no generator satisfies every regex; ``not``, ``if``/``then``/``else`` and remote
``$ref`` are not interpreted (remote refs raise :class:`ValueError`). Recursive schemas get minimal
values (no optional members, ``minItems`` items, null branches) past a nesting depth; a schema that
demands unbounded nesting raises :class:`ValueError`.
"""

from __future__ import annotations

import base64
import copy
import datetime as dt
import functools
import json
import math
import random
import re
import uuid
from decimal import Decimal
from urllib.parse import unquote

from kanawa.llm.testing.pattern_sampler import sample_pattern
from kanawa.types import JsonObject, JsonValue

_MINIMAL_DEPTH = 6
"""Past this nesting depth values are minimal, so recursive schemas terminate."""

_MAX_DEPTH = 64
"""Past this depth the schema needs unbounded nesting (a required self-reference): give up."""

_WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet")
_TYPE_RANK = {"null": 0, "boolean": 1, "integer": 1, "number": 1, "string": 1, "array": 2, "object": 3}


def value_for_schema(schema: JsonObject, *, seed: int = 0) -> JsonValue:
    """Return a value that validates against ``schema``; deterministic for a given ``seed``.

    Raises :class:`ValueError` for a remote or dangling ``$ref``, a ``false`` schema where a value is
    required, or a schema that admits only infinitely nested values.
    """
    return _Generator(schema, random.Random(seed)).value(schema, 0)


def resolve_ref(root: JsonObject, ref: str) -> JsonValue:
    """The node a local ``$ref`` (a JSON pointer such as ``#/$defs/Item``) names inside ``root``.

    Raises :class:`ValueError` for a remote reference or a pointer that leads nowhere.
    """
    if not ref.startswith("#"):
        raise ValueError(f"cannot resolve $ref {ref!r}: only local '#/...' references are supported")
    node: JsonValue = root
    for token in filter(None, unquote(ref[1:]).split("/")):
        key = token.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and key in node:
            node = node[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            raise ValueError(f"cannot resolve $ref {ref!r}: no {key!r} there")
    return node


# ---------------------------------------------------------------------------------------- schema ops


def _subschema(value: JsonValue) -> JsonObject:
    """A schema position may hold a boolean schema: ``true`` accepts anything, ``false`` nothing."""
    if value is True:
        return {}
    if isinstance(value, dict):
        return value
    raise ValueError("the schema admits no value here (a 'false' or malformed subschema)")


def _number(schema: JsonObject, key: str) -> float | None:
    value = schema.get(key)
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def _int(schema: JsonObject, key: str, default: int) -> int:
    value = _number(schema, key)
    return default if value is None else int(value)


def _names(value: JsonValue) -> list[str]:
    return [n for n in value if isinstance(n, str)] if isinstance(value, list) else []


def _examples(schema: JsonValue) -> list[JsonValue]:
    examples = schema.get("examples") if isinstance(schema, dict) else None
    return examples if isinstance(examples, list) else []


def _is_null(schema: JsonObject) -> bool:
    return schema.get("type") == "null" or ("const" in schema and schema["const"] is None)


_LOWER_BOUNDS = frozenset({"minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties"})
_UPPER_BOUNDS = frozenset({"maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties"})
_BOUNDS = _LOWER_BOUNDS | _UPPER_BOUNDS
_NUMBER_KEYWORDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")


def _merge(a: JsonObject, b: JsonObject) -> JsonObject:
    """Combine two schemas a value must both satisfy (``allOf``, ``$ref`` siblings, chosen branches)."""
    out = dict(a)
    for key, new in b.items():
        old = out.get(key)
        if key not in out:
            out[key] = new
        elif key in _BOUNDS and (x := _number(out, key)) is not None and (y := _number(b, key)) is not None:
            out[key] = max(x, y) if key in _LOWER_BOUNDS else min(x, y)
        elif key == "required" and isinstance(old, list) and isinstance(new, list):
            out[key] = [*old, *(name for name in new if name not in old)]
        elif key == "properties" and isinstance(old, dict) and isinstance(new, dict):
            out[key] = {**old, **{k: ({"allOf": [old[k], v]} if k in old else v) for k, v in new.items()}}
        elif key == "enum" and isinstance(old, list) and isinstance(new, list):
            out[key] = [v for v in old if v in new] or old
        elif key == "type":
            out[key] = _intersect_types(old, new)
        elif key in ("items", "additionalProperties") and isinstance(old, dict) and isinstance(new, dict):
            out[key] = {"allOf": [old, new]}
    return out


def _intersect_types(a: JsonValue, b: JsonValue) -> JsonValue:
    left: list[JsonValue] = a if isinstance(a, list) else [a]
    right: list[JsonValue] = b if isinstance(b, list) else [b]
    both: list[JsonValue] = [t for t in left if t in right]
    if "integer" in left + right and "number" in left + right and "integer" not in both:
        both.append("integer")
    return both or left


# ------------------------------------------------------------------------------------------ generator


class _Generator:
    """One walk over one schema; ``rng`` makes every choice, so a seed fixes the whole value."""

    def __init__(self, root: JsonObject, rng: random.Random) -> None:
        self._root = root
        self._rng = rng

    def value(self, raw: JsonValue, depth: int) -> JsonValue:
        if depth > _MAX_DEPTH:
            raise ValueError("the schema admits only infinitely nested values (a required self-reference)")
        schema = self._flatten(_subschema(raw))
        minimal = depth >= _MINIMAL_DEPTH
        if "const" in schema:
            return schema["const"]
        examples = _examples(raw) or _examples(schema)  # the field's own examples beat its $ref target's
        if examples:
            return copy.deepcopy(examples[0])
        enum = schema.get("enum")
        if isinstance(enum, list) and enum:
            return enum[0] if minimal else self._rng.choice(enum)
        for key in ("anyOf", "oneOf"):
            branches = schema.get(key)
            if isinstance(branches, list) and branches:
                rest = {k: v for k, v in schema.items() if k != key}
                return self.value(_merge(rest, self._branch(branches, minimal)), depth + 1)
        kind = self._type(schema, minimal)
        if kind == "object":
            return self._object(schema, depth, minimal)
        if kind == "array":
            return self._array(schema, depth, minimal)
        if kind == "string":
            return self._string(schema)
        if kind in ("integer", "number"):
            return self._numeric(schema, integer=kind == "integer")
        if kind == "boolean":
            return not minimal and self._rng.random() < 0.5
        return None

    def _flatten(self, schema: JsonObject) -> JsonObject:
        """Inline ``$ref`` (merged with its siblings) and fold ``allOf`` into one schema."""
        for _ in range(100):
            ref = schema.get("$ref")
            if not isinstance(ref, str):
                break
            siblings = {k: v for k, v in schema.items() if k != "$ref"}
            schema = _merge(_subschema(resolve_ref(self._root, ref)), siblings)
        else:
            raise ValueError("the schema's $ref chain does not end")
        parts = schema.get("allOf")
        if isinstance(parts, list):
            rest = {k: v for k, v in schema.items() if k != "allOf"}
            schema = functools.reduce(_merge, (self._flatten(_subschema(p)) for p in parts), rest)
        return schema

    def _branch(self, branches: list[JsonValue], minimal: bool) -> JsonObject:
        """First non-null branch; when minimal, the simplest (null, then scalars) so recursion ends."""
        viable = [self._flatten(_subschema(b)) for b in branches if b is not False]
        if not viable:
            raise ValueError("no branch of anyOf/oneOf admits a value")
        if minimal:
            return min(viable, key=lambda s: -1 if _is_null(s) else _TYPE_RANK.get(self._type(s, True), 3))
        return next((s for s in viable if not _is_null(s)), viable[0])

    def _type(self, schema: JsonObject, minimal: bool) -> str:
        declared = schema.get("type")
        if isinstance(declared, str):
            return declared
        if isinstance(declared, list) and declared:
            names = [t for t in declared if isinstance(t, str)]
            concrete = [t for t in names if t != "null"]
            return "null" if (minimal and "null" in names) or not concrete else concrete[0]
        if any(k in schema for k in ("properties", "required", "additionalProperties", "patternProperties")):
            return "object"
        if any(k in schema for k in ("items", "prefixItems", "minItems", "maxItems", "contains")):
            return "array"
        if any(k in schema for k in _NUMBER_KEYWORDS):
            return "number"
        return "string"  # string keywords, or an empty schema where any value is valid

    # ---------------------------------------------------------------------------------- containers

    def _object(self, schema: JsonObject, depth: int, minimal: bool) -> JsonObject:
        properties = schema.get("properties")
        props = properties if isinstance(properties, dict) else {}
        required = _names(schema.get("required"))
        additional = schema.get("additionalProperties", True)
        patterns = schema.get("patternProperties")
        pattern_schemas = patterns if isinstance(patterns, dict) else {}
        low, high = _int(schema, "minProperties", 0), _int(schema, "maxProperties", 1 << 30)
        names = list(required)
        for name in props:
            if name in names or len(names) >= high or minimal:
                continue
            if _examples(props[name]) or self._rng.random() < 0.5:  # an example says "fill me in"
                names.append(name)
        for name in props:
            if len(names) >= low:
                break
            if name not in names:
                names.append(name)
        dependent = schema.get("dependentRequired")
        if isinstance(dependent, dict):
            for name in names:  # grows while iterating: dependencies of dependencies are added too
                names.extend(n for n in _names(dependent.get(name)) if n not in names)
        is_map = isinstance(additional, dict) and additional and not props and not pattern_schemas
        extra = 1 if is_map and not minimal else 0
        if additional is not False and not pattern_schemas:
            extra = max(extra, low - len(names))
        out: JsonObject = {}
        for name in names:
            matching = [v for k, v in pattern_schemas.items() if re.search(k, name)]
            sub = props.get(name, matching[0] if matching else additional)
            out[name] = self.value(sub, depth + 1)
        key_schema = schema.get("propertyNames", {"minLength": 1})
        for index in range(extra):
            key = self.value(key_schema, depth + 1)
            key = key if isinstance(key, str) and key not in out else f"key{index}"
            out[key] = self.value(additional, depth + 1)
        return out

    def _array(self, schema: JsonObject, depth: int, minimal: bool) -> list[JsonValue]:
        items = schema.get("items", True)
        prefix = schema.get("prefixItems")
        if isinstance(items, list):  # draft-7 tuple form
            prefix, items = items, schema.get("additionalItems", True)
        prefix_list = prefix if isinstance(prefix, list) else []
        low = _int(schema, "minItems", 0)
        count = low if minimal else max(low, len(prefix_list), 1 + self._rng.randrange(2))
        count = min(count, _int(schema, "maxItems", count))
        if items is False:
            count = min(count, len(prefix_list))
        contains = schema.get("contains")
        unique = schema.get("uniqueItems") is True
        out: list[JsonValue] = []
        seen: set[str] = set()
        for index in range(count):
            sub = prefix_list[index] if index < len(prefix_list) else items
            if index == 0 and isinstance(contains, dict):
                sub = {"allOf": [sub, contains]}
            item = self.value(sub, depth + 1)
            if unique:  # regenerate duplicates a few times; stop early once minItems is met
                for _attempt in range(8):
                    if json.dumps(item, sort_keys=True) not in seen:
                        break
                    item = self.value(sub, depth + 1)
                key = json.dumps(item, sort_keys=True)
                if key in seen and len(out) >= low:
                    break
                seen.add(key)
            out.append(item)
        return out

    # ------------------------------------------------------------------------------------- scalars

    def _string(self, schema: JsonObject) -> str:
        low, high = _int(schema, "minLength", 0), _int(schema, "maxLength", 1 << 30)
        pattern = schema.get("pattern")
        if isinstance(pattern, str):
            sample = sample_pattern(pattern, self._rng)
            if sample is not None:
                padded = sample + "x" * max(0, low - len(sample))
                if low <= len(padded) <= high and _matches(pattern, padded):
                    return padded
        fmt = schema.get("format")
        text = _format_value(fmt, self._rng) if isinstance(fmt, str) else None
        if text is not None and low <= len(text) <= high:
            return text
        text = f"{self._rng.choice(_WORDS)}-{self._rng.randrange(100)}"
        return (text + "x" * max(0, low - len(text)))[:high]

    def _numeric(self, schema: JsonObject, *, integer: bool) -> int | float:
        low, low_open = _bound(schema, "minimum", "exclusiveMinimum")
        high, high_open = _bound(schema, "maximum", "exclusiveMaximum")
        step = _number(schema, "multipleOf")
        if integer or step is not None:  # pick k, answer k × unit: exact in decimal, no float drift
            unit = Decimal(repr(step)) if step else Decimal(1)
            while integer and unit != unit.to_integral_value():
                unit *= 10
            k_low = k_high = None
            if low is not None:
                ratio = Decimal(repr(low)) / unit
                k_low = math.ceil(ratio) + (1 if low_open and ratio == math.ceil(ratio) else 0)
            if high is not None:
                ratio = Decimal(repr(high)) / unit
                k_high = math.floor(ratio) - (1 if high_open and ratio == math.floor(ratio) else 0)
            exact = unit * self._pick_int(k_low, k_high)
            return int(exact) if integer else float(exact)
        if low is not None and high is not None:
            return low + (high - low) * self._rng.choice((0.25, 0.5, 0.75)) if high > low else low
        offset = self._rng.randrange(10) + 0.5
        if low is not None:
            return low + offset
        if high is not None:
            return high - offset
        return self._rng.randrange(100) + 0.5

    def _pick_int(self, low: int | None, high: int | None) -> int:
        if low is not None and high is not None:
            return self._rng.randint(low, high) if high >= low else low
        if low is not None:
            return low + self._rng.randrange(10)
        if high is not None:
            return high - self._rng.randrange(10)
        return self._rng.randrange(100)


def _bound(schema: JsonObject, inclusive: str, exclusive: str) -> tuple[float | None, bool]:
    """The tighter of an inclusive and an exclusive bound (2020-12 numbers or draft-4 booleans)."""
    plain, strict = _number(schema, inclusive), schema.get(exclusive)
    if isinstance(strict, bool):
        return plain, strict and plain is not None
    strict_value = _number(schema, exclusive)
    if strict_value is None:
        return plain, False
    if plain is not None and (plain > strict_value if inclusive == "minimum" else plain < strict_value):
        return plain, False
    return strict_value, True


def _matches(pattern: str, text: str) -> bool:
    """JSON Schema ``pattern`` semantics: an unanchored search (ECMA syntax Python cannot read fails)."""
    try:
        return re.search(pattern, text) is not None
    except re.error:
        return False


def _format_value(fmt: str, rng: random.Random) -> str | None:
    word, n = rng.choice(_WORDS), rng.randrange(1, 100)
    day = dt.date(2024, 1, 1) + dt.timedelta(days=rng.randrange(366))
    clock = f"{rng.randrange(24):02d}:{rng.randrange(60):02d}:00Z"
    values = {
        "date": day.isoformat(),
        "date-time": f"{day.isoformat()}T{clock}",
        "time": clock,
        "duration": f"P{n}D",
        "email": f"{word}{n}@example.com",
        "idn-email": f"{word}{n}@example.com",
        "uri": f"https://example.com/{word}/{n}",
        "iri": f"https://example.com/{word}/{n}",
        "url": f"https://example.com/{word}/{n}",
        "uri-reference": f"/{word}/{n}",
        "iri-reference": f"/{word}/{n}",
        "uuid": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
        "hostname": f"{word}.example.com",
        "idn-hostname": f"{word}.example.com",
        "ipv4": f"192.0.2.{n}",
        "ipv6": f"2001:db8::{n:x}",
        "json-pointer": f"/{word}/{n}",
        "regex": f"^{word}[0-9]+$",
        "byte": base64.b64encode(word.encode()).decode(),
        "path": f"data/{word}.txt",
    }
    return values.get(fmt)
