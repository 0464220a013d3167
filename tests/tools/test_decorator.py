"""``@tool`` / ``make_tool`` (seed 002 §3-2: immutable Tool, pydantic-cast args)."""

from __future__ import annotations

import dataclasses
import enum
import functools
import threading
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field

import kanawa
from kanawa.context import RunContext
from kanawa.tools import Tool, ToolInvoker, make_tool, tool
from kanawa.tools.schema import call_arguments
from kanawa.types import ToolCall, text_of
from tests.tools import context_targets


class Unit(enum.Enum):
    CELSIUS = "celsius"
    FAHRENHEIT = "fahrenheit"


class Address(BaseModel):
    """A postal address."""

    street: str
    city: str
    zip_code: str | None = None


class TreeNode(BaseModel):
    value: int
    children: list[TreeNode] = []


def google_style(city: str, days: int = 3, unit: Literal["c", "f"] = "c") -> str:
    """Get the weather forecast.

    Uses the national weather service.

    Args:
        city: the city to look up
        days (int): how many days to forecast
        unit: temperature unit

    Returns:
        The forecast text.
    """
    return f"{city}:{days}:{unit}"


def numpy_style(query: str, limit: int = 10) -> list[str]:
    """Search the catalogue.

    Results are ranked by relevance.

    Parameters
    ----------
    query : str
        words to search for
    limit : int, optional
        the maximum number of results

    Returns
    -------
    list of str
    """
    return [query] * limit


def props(t: Tool) -> dict[str, Any]:
    properties = t.parameters["properties"]
    assert isinstance(properties, dict)
    return properties


# ------------------------------------------------------------------------------ decorator forms


def test_bare_decorator_builds_a_tool() -> None:
    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    assert isinstance(add, Tool)
    assert add.name == "add"
    assert add.description == "Add two integers."
    assert add(2, 3) == 5


def test_decorator_with_options_overrides_name_description_and_strict() -> None:
    @tool(name="sum_two", description="Sums.", strict=True, timeout=2.5)
    def add(a: int, b: int = 0) -> int:
        return a + b

    assert (add.name, add.description, add.strict, add.timeout) == ("sum_two", "Sums.", True, 2.5)
    assert add.spec.strict is True
    assert add.parameters["required"] == ["a", "b"]  # strict mode: every property is required


def test_decorator_and_make_tool_agree() -> None:
    a = tool(google_style)
    b = make_tool(google_style)
    assert a.parameters == b.parameters
    assert a.description == b.description


def test_tool_is_immutable() -> None:
    t = make_tool(google_style)
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.name = "other"  # type: ignore[misc]


def test_make_tool_on_a_tool_applies_options() -> None:
    t = make_tool(google_style)
    assert make_tool(t) is t
    renamed = make_tool(t, name="forecast", description="d")
    assert (renamed.name, renamed.description, renamed.function) == ("forecast", "d", google_style)


# ------------------------------------------------------------------------------ docstrings


def test_description_is_short_and_long_description_without_args_section() -> None:
    t = make_tool(google_style)
    assert t.description == "Get the weather forecast.\n\nUses the national weather service."
    assert "Args" not in t.description
    assert "Returns" not in t.description


def test_google_docstring_gives_parameter_descriptions() -> None:
    p = props(make_tool(google_style))
    assert p["city"]["description"] == "the city to look up"
    assert p["days"]["description"] == "how many days to forecast"
    assert p["unit"]["description"] == "temperature unit"


def test_numpy_docstring_gives_parameter_descriptions() -> None:
    t = make_tool(numpy_style)
    assert t.description == "Search the catalogue.\n\nResults are ranked by relevance."
    assert props(t)["query"]["description"] == "words to search for"
    assert props(t)["limit"]["description"] == "the maximum number of results"


def test_explicit_field_description_beats_docstring() -> None:
    def f(
        x: Annotated[int, Field(description="explicit")], y: int = Field(1, description="also explicit")
    ) -> int:
        """F.

        Args:
            x: from docstring
            y: from docstring
        """
        return x

    p = props(make_tool(f))
    assert p["x"]["description"] == "explicit"
    assert p["y"]["description"] == "also explicit"


def test_no_docstring_gives_empty_description() -> None:
    def bare(x: int) -> int:
        return x

    assert make_tool(bare).description == ""


# ------------------------------------------------------------------------------ schema shape


def test_schema_required_defaults_and_no_titles() -> None:
    t = make_tool(google_style)
    assert t.parameters["type"] == "object"
    assert t.parameters["required"] == ["city"]
    assert t.parameters["additionalProperties"] is False
    assert props(t)["days"] == {"type": "integer", "description": "how many days to forecast", "default": 3}
    assert "title" not in str(t.parameters)


def test_literal_parameter_becomes_enum() -> None:
    assert props(make_tool(google_style))["unit"]["enum"] == ["c", "f"]


def test_enum_parameter_becomes_inline_enum() -> None:
    def convert(value: float, unit: Unit = Unit.CELSIUS) -> float:
        return value

    schema = props(make_tool(convert))["unit"]
    assert schema == {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius"}


def test_single_value_literal_becomes_one_value_enum() -> None:
    def f(mode: Literal["only"]) -> str:
        return mode

    assert props(make_tool(f))["mode"]["enum"] == ["only"]


def test_nested_pydantic_model_parameter_is_inlined() -> None:
    def ship(to: Address, weight_kg: float) -> str:
        return to.city

    t = make_tool(ship)
    to = props(t)["to"]
    assert to["type"] == "object"
    assert to["description"] == "A postal address."
    assert to["required"] == ["street", "city"]
    assert "$defs" not in t.parameters
    assert "$ref" not in str(t.parameters)


def test_recursive_model_keeps_defs_and_ref() -> None:
    def walk(tree: TreeNode) -> int:
        return tree.value

    t = make_tool(walk)
    defs = t.parameters["$defs"]
    assert isinstance(defs, dict)
    assert set(defs) == {"TreeNode"}
    assert props(t)["tree"]["properties"]["children"]["items"] == {"$ref": "#/$defs/TreeNode"}


def test_nested_model_argument_is_validated_into_the_model() -> None:
    def ship(to: Address) -> str:
        return to.city

    t = make_tool(ship)
    positional, keywords = call_arguments(
        t.args_model.model_validate({"to": {"street": "s", "city": "Kyoto"}})
    )
    assert positional == ()
    assert isinstance(keywords["to"], Address)
    assert t(**keywords) == "Kyoto"


def test_schema_is_built_once_per_tool() -> None:
    t = make_tool(google_style)
    assert t.parameters is t.parameters  # a stored value, not a property recomputing it
    assert t.spec.parameters is t.parameters


def test_parameter_names_pydantic_reserves_still_work() -> None:
    def f(json: str, schema: int = 1, _private: int = 2) -> str:
        return f"{json}{schema}{_private}"

    t = make_tool(f)
    assert set(props(t)) == {"json", "schema", "_private"}
    positional, keywords = call_arguments(
        t.args_model.model_validate({"json": "j", "schema": 5, "_private": 7})
    )
    assert t(*positional, **keywords) == "j57"


def test_positional_only_parameter_with_hint_is_passed_positionally() -> None:
    def f(a: int, /, b: int) -> int:
        return a * 10 + b

    t = make_tool(f)
    positional, keywords = call_arguments(t.args_model.model_validate({"a": 1, "b": 2}))
    assert t(*positional, **keywords) == 12


# ------------------------------------------------------------------------------ async / callables


def test_is_async_decided_at_construction() -> None:
    async def a(x: int) -> int:
        return x

    def s(x: int) -> int:
        return x

    assert make_tool(a).is_async is True
    assert make_tool(s).is_async is False


def test_async_callable_object_and_partial_are_supported() -> None:
    class Lookup:
        async def __call__(self, key: str) -> str:
            """Look a key up.

            Args:
                key: the key
            """
            return key

    t = make_tool(Lookup(), name="lookup")
    assert t.is_async
    assert props(t)["key"]["description"] == "the key"

    p = make_tool(functools.partial(google_style, days=1), name="weather")
    assert p.is_async is False
    assert p.description.startswith("Get the weather forecast.")
    assert props(p)["city"]["description"] == "the city to look up"


# ------------------------------------------------------------------------------ rejected signatures


def test_var_args_rejected_at_decoration_time() -> None:
    def f(*items: int) -> int:
        return 0

    with pytest.raises(TypeError, match=r"\*items is not supported"):
        tool(f)


def test_var_kwargs_rejected_at_decoration_time() -> None:
    def f(a: int, **options: str) -> int:
        return a

    with pytest.raises(TypeError, match=r"\*\*options is not supported"):
        tool(f)


def test_positional_only_without_hint_rejected() -> None:
    def f(a, /, b: int) -> int:  # type: ignore[no-untyped-def]
        return b

    with pytest.raises(TypeError, match="positional-only parameter 'a' needs a type hint"):
        tool(f)


def test_generator_function_rejected() -> None:
    def gen(n: int):  # type: ignore[no-untyped-def]
        yield n

    with pytest.raises(TypeError, match="generator"):
        tool(gen)


class Opaque:
    """Not a type pydantic knows how to validate."""


def test_unsupported_parameter_type_rejected() -> None:
    def f(x: Opaque) -> None:
        return None

    with pytest.raises(TypeError, match="cannot be validated or described"):
        make_tool(f)


def test_invalid_tool_name_rejected() -> None:
    with pytest.raises(ValueError, match="invalid tool name"):
        make_tool(google_style, name="has space")
    with pytest.raises(ValueError, match="invalid tool name"):
        make_tool(lambda x: x)


def test_unannotated_regular_parameter_accepts_any_json() -> None:
    def f(x):  # type: ignore[no-untyped-def]
        return x

    assert props(make_tool(f))["x"] == {}


# ------------------------------------------------------------------------------------ run context


@dataclasses.dataclass
class Shop:
    owner: str


def greet(ctx: RunContext[Shop], name: str, polite: bool = True) -> str:
    """Greet a customer on behalf of the shop.

    Args:
        ctx: the run context
        name: who to greet
        polite: whether to be polite
    """
    return f"{'Dear' if polite else 'Hey'} {name}, from {ctx.deps.owner}"


def test_context_parameter_is_left_out_of_the_schema_and_the_arguments_model() -> None:
    t = make_tool(greet)
    assert t.takes_context
    assert t.parameters["properties"] == {
        "name": {"type": "string", "description": "who to greet"},
        "polite": {"type": "boolean", "description": "whether to be polite", "default": True},
    }
    assert t.parameters["required"] == ["name"]
    assert set(t.args_model.model_fields) == {"name", "polite"}
    strict = make_tool(greet, strict=True)
    assert set(props(strict)) == {"name", "polite"}
    assert make_tool(t, name="hello").takes_context  # reconfiguring keeps it
    assert make_tool(google_style).takes_context is False


def test_context_tool_called_in_plain_code_takes_the_context_first() -> None:
    t = tool(greet)
    assert t(RunContext(Shop("Aiko")), "Ken") == "Dear Ken, from Aiko"


def test_bare_annotated_and_dotted_run_context_annotations_are_detected() -> None:
    def bare(ctx: RunContext, q: str) -> str:  # type: ignore[type-arg]
        return q

    def annotated(ctx: Annotated[RunContext[int], "the run"], q: str) -> str:
        return q

    def dotted(ctx: kanawa.RunContext[int], q: str) -> str:
        return q

    for fn in (bare, annotated, dotted):
        t = make_tool(fn)
        assert t.takes_context, fn.__name__
        assert set(props(t)) == {"q"}, fn.__name__


def test_run_context_imported_only_for_type_checking_is_still_detected() -> None:
    assert "RunContext" not in vars(context_targets)
    t = make_tool(context_targets.lookup)
    assert t.takes_context
    assert set(props(t)) == {"key"}


def test_a_modules_own_class_named_run_context_keeps_its_meaning() -> None:
    namespace: dict[str, Any] = {}
    source = (
        "from __future__ import annotations\n"
        "from pydantic import BaseModel\n"
        "class RunContext(BaseModel):\n"
        "    label: str\n"
        "def tag(ctx: RunContext, q: str) -> str:\n"
        "    return ctx.label + q\n"
    )
    exec(compile(source, "own_run_context", "exec"), namespace)
    t = make_tool(namespace["tag"])
    assert not t.takes_context
    assert set(props(t)) == {"ctx", "q"}


def test_run_context_anywhere_but_first_positional_is_rejected() -> None:
    def second(q: str, ctx: RunContext[int]) -> str:
        return q

    def keyword_only(*, ctx: RunContext[int], q: str) -> str:
        return q

    for fn in (second, keyword_only):
        with pytest.raises(TypeError, match="must be the first positional parameter"):
            make_tool(fn)


async def test_the_invoker_passes_its_context_to_sync_async_and_method_tools() -> None:
    class Counter:
        def __init__(self) -> None:
            self.threads: set[str] = set()

        def count(self, ctx: RunContext[Shop], /, n: int, *, unit: str = "items") -> str:
            """Count for the shop owner."""
            self.threads.add(threading.current_thread().name)
            return f"{ctx.deps.owner}: {n} {unit}"

    async def async_greet(ctx: RunContext[Shop], name: str) -> str:
        return f"hi {name} from {ctx.deps.owner}"

    counter = Counter()
    ctx = RunContext(Shop("Mei"), agent_name="shop")
    invoker = ToolInvoker([make_tool(counter.count, name="count"), async_greet, greet], context=ctx)
    results = await invoker.invoke_all(
        [
            ToolCall("1", "count", '{"n": 3}'),
            ToolCall("2", "async_greet", '{"name": "Ken"}'),
            ToolCall("3", "greet", '{"name": "Ken", "polite": false}'),
        ]
    )
    assert [text_of(r.content) for r in results] == ["Mei: 3 items", "hi Ken from Mei", "Hey Ken, from Mei"]
    assert threading.current_thread().name not in counter.threads  # the sync tool ran in a worker thread
    rejected = await invoker.invoke(ToolCall("4", "greet", '{"name": "Ken", "ctx": {"deps": 1}}'))
    assert rejected.is_error  # the model cannot supply the context itself


async def test_an_invoker_without_a_context_gives_an_empty_one() -> None:
    def where(ctx: RunContext[None]) -> str:
        return f"{ctx.deps} {ctx.step} {ctx.agent_name!r} {len(ctx.messages)}"

    result = await ToolInvoker([where]).invoke(ToolCall("1", "where", ""))
    assert text_of(result.content) == "None 0 '' 0"
