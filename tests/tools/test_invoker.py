"""``ToolInvoker`` (seed 000 §6, seed 001 §4.7): fail-closed tool calls, run concurrently."""

from __future__ import annotations

import asyncio
import contextvars
import enum
import threading
from typing import Literal

import pytest
from pydantic import BaseModel

from kanawa.tools import Tool, ToolErrorKind, ToolInvoker, ToolRegistry, tool
from kanawa.tools.messages import EXECUTION_ERROR_MESSAGE
from kanawa.types import TextPart, ToolCall, ToolMessage, text_of


class Mode(enum.Enum):
    FAST = "fast"
    SAFE = "safe"


class Address(BaseModel):
    street: str
    city: str


class Counter:
    def __init__(self) -> None:
        self.calls = 0


def text(result: object) -> str:
    return text_of(result.content)  # type: ignore[attr-defined]


def call(name: str, arguments: str = "{}", call_id: str = "c1") -> ToolCall:
    return ToolCall(call_id, name, arguments)


@pytest.fixture
def counter() -> Counter:
    return Counter()


@pytest.fixture
def failing(counter: Counter) -> Tool:
    @tool
    def explode(x: int) -> int:
        """Always fails."""
        counter.calls += 1
        raise RuntimeError(f"secret internal state {x}")

    return explode


@pytest.fixture
def adder(counter: Counter) -> Tool:
    @tool
    def add(a: int, b: int = 0) -> int:
        """Add."""
        counter.calls += 1
        return a + b

    return add


# ---------------------------------------------------------------------------------- seed §6.1


async def test_parse_error_does_not_call_the_tool(adder: Tool, counter: Counter) -> None:
    invoker = ToolInvoker([adder])
    for raw in ["[1, 2]", "not json", '"{}"', "null"]:
        result = await invoker.invoke(call("add", raw))
        assert result.is_error
        assert result.error_kind is ToolErrorKind.PARSE_ERROR
        assert "could not be parsed" in text(result)
        assert "JSON object string" in text(result)
    assert counter.calls == 0


async def test_empty_string_arguments_call_the_tool_with_no_arguments() -> None:
    @tool
    def ping() -> str:
        return "pong"

    result = await ToolInvoker([ping]).invoke(call("ping", ""))
    assert not result.is_error
    assert text(result) == "pong"


# ---------------------------------------------------------------------------------- seed §6.2


async def test_unknown_tool_message(adder: Tool) -> None:
    result = await ToolInvoker([adder]).invoke(call("nope", '{"a": 1}'))
    assert result.is_error
    assert result.error_kind is ToolErrorKind.UNKNOWN_TOOL
    assert text(result) == "there is not a tool named nope"


async def test_option_mismatch_is_parameter_option_validation_error(counter: Counter) -> None:
    @tool
    def run(mode: Mode, level: Literal["low", "high"] = "low") -> str:
        counter.calls += 1
        return mode.value

    invoker = ToolInvoker([run])
    result = await invoker.invoke(call("run", '{"mode": "reckless"}'))
    assert result.error_kind is ToolErrorKind.VALIDATION_ERROR
    assert text(result) == "parameter option validation error: 'mode' must be one of 'fast' or 'safe'"

    result = await invoker.invoke(call("run", '{"mode": "fast", "level": "max"}'))
    assert text(result).startswith("parameter option validation error:")
    assert "'level'" in text(result)
    assert "'low' or 'high'" in text(result)
    assert counter.calls == 0


async def test_schema_enum_options_are_enforced_even_when_the_model_class_allows_anything() -> None:
    class Loose(BaseModel):
        model_config = {"extra": "allow"}

    seen: list[dict[str, object]] = []
    hand_built = Tool(
        name="paint",
        description="Paint.",
        parameters={"type": "object", "properties": {"colour": {"type": "string", "enum": ["red", "blue"]}}},
        function=lambda **kw: seen.append(kw),
        args_model=Loose,
        is_async=False,
    )
    invoker = ToolInvoker([hand_built])
    result = await invoker.invoke(call("paint", '{"colour": "green"}'))
    assert text(result) == "parameter option validation error: 'colour' must be one of 'red' or 'blue'"
    ok = await invoker.invoke(call("paint", '{"colour": "red"}'))
    assert not ok.is_error
    assert seen == [{"colour": "red"}]


async def test_other_validation_errors_name_field_paths_without_internals(counter: Counter) -> None:
    @tool
    def ship(to: Address, count: int) -> str:
        counter.calls += 1
        return to.city

    result = await ToolInvoker([ship]).invoke(
        call("ship", '{"to": {"street": "s"}, "count": "many", "extra": 1}')
    )
    message = text(result)
    assert result.error_kind is ToolErrorKind.VALIDATION_ERROR
    assert message.startswith("tool argument validation error:")
    assert "to.city: required argument is missing" in message
    assert "count: Input should be a valid integer" in message
    assert "extra: unexpected argument" in message
    for internal in ("pydantic", "errors.pydantic.dev", "type=", "input_value", "many"):
        assert internal not in message
    assert counter.calls == 0


async def test_tool_exception_gives_the_fixed_message(failing: Tool) -> None:
    result = await ToolInvoker([failing]).invoke(call("explode", '{"x": 1}'))
    assert result.is_error
    assert result.error_kind is ToolErrorKind.EXECUTION_ERROR
    assert result.content == (TextPart("tool invoke error: failed to execute tool"),)


async def test_exception_details_go_to_detail_not_model(failing: Tool) -> None:
    result = await ToolInvoker([failing]).invoke(call("explode", '{"x": 7}'))
    assert result.detail == "RuntimeError: secret internal state 7"
    assert "secret" not in text(result)
    assert "RuntimeError" not in text(result)
    message = result.to_message()
    assert "secret" not in message.text


async def test_identical_failed_call_is_not_rerun(failing: Tool, counter: Counter) -> None:
    invoker = ToolInvoker([failing])
    first = await invoker.invoke(call("explode", '{"x": 1}'))
    second = await invoker.invoke(call("explode", '{ "x" : 1 }', call_id="c2"))
    assert counter.calls == 1
    assert first.error_kind is ToolErrorKind.EXECUTION_ERROR
    assert second.is_error
    assert second.error_kind is ToolErrorKind.DUPLICATE_FAILURE
    assert second.call_id == "c2"
    assert "already failed" in text(second)
    assert "change the arguments" in text(second)


async def test_identical_signature_ignores_key_order(counter: Counter) -> None:
    @tool
    def fail2(a: int, b: int) -> int:
        counter.calls += 1
        raise ValueError("no")

    invoker = ToolInvoker([fail2])
    await invoker.invoke(call("fail2", '{"a": 1, "b": 2}'))
    again = await invoker.invoke(call("fail2", '{"b": 2, "a": 1}'))
    assert again.error_kind is ToolErrorKind.DUPLICATE_FAILURE
    assert counter.calls == 1


async def test_failed_call_with_changed_arguments_runs_again(failing: Tool, counter: Counter) -> None:
    invoker = ToolInvoker([failing])
    await invoker.invoke(call("explode", '{"x": 1}'))
    result = await invoker.invoke(call("explode", '{"x": 2}'))
    assert result.error_kind is ToolErrorKind.EXECUTION_ERROR
    assert counter.calls == 2


async def test_identical_failed_validation_is_not_rerun(adder: Tool) -> None:
    invoker = ToolInvoker([adder])
    await invoker.invoke(call("add", '{"a": "x"}'))
    again = await invoker.invoke(call("add", '{"a": "x"}'))
    assert again.error_kind is ToolErrorKind.DUPLICATE_FAILURE


async def test_identical_successful_call_runs_again(adder: Tool, counter: Counter) -> None:
    invoker = ToolInvoker([adder])
    await invoker.invoke(call("add", '{"a": 1}'))
    await invoker.invoke(call("add", '{"a": 1}'))
    assert counter.calls == 2


async def test_failures_are_remembered_per_invoker_only(failing: Tool, counter: Counter) -> None:
    await ToolInvoker([failing]).invoke(call("explode", '{"x": 1}'))
    await ToolInvoker([failing]).invoke(call("explode", '{"x": 1}'))
    assert counter.calls == 2


# ---------------------------------------------------------------------------------- timeouts


async def test_timeout_is_an_execution_error_with_a_timeout_message() -> None:
    never = asyncio.Event()

    @tool
    async def hang() -> None:
        await never.wait()

    result = await ToolInvoker([hang], timeout=0.01).invoke(call("hang"))
    assert result.error_kind is ToolErrorKind.EXECUTION_ERROR
    assert "did not finish within 0.01 seconds" in text(result)
    assert result.detail is not None
    assert result.detail.startswith("TimeoutError")


async def test_tool_timeout_overrides_invoker_timeout() -> None:
    never = asyncio.Event()

    @tool(timeout=0.01)
    async def hang() -> None:
        await never.wait()

    result = await ToolInvoker([hang], timeout=60).invoke(call("hang"))
    assert "0.01 seconds" in text(result)


async def test_timeout_error_raised_by_the_tool_itself_is_a_plain_failure() -> None:
    @tool
    async def upstream() -> None:
        raise TimeoutError("upstream service")

    result = await ToolInvoker([upstream], timeout=60).invoke(call("upstream"))
    assert text(result) == EXECUTION_ERROR_MESSAGE
    assert result.detail == "TimeoutError: upstream service"


# ---------------------------------------------------------------------------------- success


async def test_success_returns_content_output_and_duration(adder: Tool) -> None:
    result = await ToolInvoker([adder]).invoke(call("add", '{"a": 2, "b": 3}'))
    assert not result.is_error
    assert result.error_kind is None
    assert result.content == (TextPart("5"),)
    assert result.output == 5
    assert result.duration_ms >= 0.0
    assert (result.call_id, result.name) == ("c1", "add")


async def test_result_to_message_carries_is_error_and_name(failing: Tool) -> None:
    result = await ToolInvoker([failing]).invoke(call("explode", '{"x": 1}', call_id="call_9"))
    message = result.to_message()
    assert isinstance(message, ToolMessage)
    assert (message.tool_call_id, message.name, message.is_error) == ("call_9", "explode", True)
    assert message.text == EXECUTION_ERROR_MESSAGE


async def test_sync_tools_run_in_a_worker_thread() -> None:
    threads: list[int] = []

    @tool
    def where() -> str:
        threads.append(threading.get_ident())
        return "ok"

    @tool
    async def where_async() -> str:
        threads.append(threading.get_ident())
        return "ok"

    invoker = ToolInvoker([where, where_async])
    await invoker.invoke(call("where"))
    await invoker.invoke(call("where_async"))
    loop_thread = threading.get_ident()
    assert threads[0] != loop_thread
    assert threads[1] == loop_thread


async def test_an_inline_sync_tool_runs_on_the_event_loop_and_a_plain_one_does_not() -> None:
    threads: dict[str, int] = {}

    @tool(inline=True)
    def cheap(n: int) -> int:
        threads["inline"] = threading.get_ident()
        return n + 1

    @tool
    def plain(n: int) -> int:
        threads["plain"] = threading.get_ident()
        return n + 1

    invoker = ToolInvoker([cheap, plain])
    results = await invoker.invoke_all([call("cheap", '{"n": 1}', "a"), call("plain", '{"n": 2}', "b")])
    assert [text(r) for r in results] == ["2", "3"]
    assert threads["inline"] == threading.get_ident()
    assert threads["plain"] != threading.get_ident()


async def test_an_inline_tool_keeps_validation_failures_and_context_changes_of_a_threaded_one() -> None:
    marker: contextvars.ContextVar[str] = contextvars.ContextVar("marker", default="run")
    seen: list[str] = []

    @tool(inline=True)
    def mark(n: int) -> str:
        seen.append(marker.get())
        marker.set("tool")  # a thread's change stays in the thread: an inline tool's stays its own too
        if n < 0:
            raise ValueError("negative")
        return "ok"

    invoker = ToolInvoker([mark], timeout=0.5)  # the default timeout does not apply to an inline tool
    assert text(await invoker.invoke(call("mark", '{"n": 1}'))) == "ok"
    assert marker.get() == "run"
    assert seen == ["run"]
    bad = await invoker.invoke(call("mark", '{"n": "x"}'))
    assert bad.error_kind is ToolErrorKind.VALIDATION_ERROR
    assert seen == ["run"]
    failed = await invoker.invoke(call("mark", '{"n": -1}'))
    assert failed.error_kind is ToolErrorKind.EXECUTION_ERROR
    assert text(failed) == EXECUTION_ERROR_MESSAGE
    assert failed.detail == "ValueError: negative"


def test_inline_is_refused_for_async_tools_and_with_a_timeout() -> None:
    async def slow() -> str:
        return "x"

    def quick() -> str:
        return "x"

    with pytest.raises(ValueError, match="inline=True is for sync functions"):
        tool(inline=True)(slow)
    with pytest.raises(ValueError, match="inline=True is for sync functions"):
        tool(inline=True, timeout=1)(quick)
    assert tool(inline=True)(quick).inline
    assert not tool(quick).inline
    assert tool(tool(quick), inline=True).inline  # an existing tool made inline


async def test_sync_wrapper_returning_a_coroutine_is_awaited() -> None:
    async def inner() -> str:
        return "awaited"

    def wrapper() -> object:
        return inner()

    result = await ToolInvoker([tool(wrapper)]).invoke(call("wrapper"))
    assert text(result) == "awaited"


async def test_invoker_reads_a_registry_live_and_wraps_plain_functions() -> None:
    def double(n: int) -> int:
        return 2 * n

    registry = ToolRegistry()
    invoker = ToolInvoker(registry)
    assert (await invoker.invoke(call("double", '{"n": 2}'))).error_kind is ToolErrorKind.UNKNOWN_TOOL
    registry.register(double)
    assert text(await invoker.invoke(call("double", '{"n": 2}'))) == "4"
    assert text(await ToolInvoker([double]).invoke(call("double", '{"n": 5}'))) == "10"


def test_invoker_rejects_non_positive_timeout(adder: Tool) -> None:
    with pytest.raises(ValueError, match="positive"):
        ToolInvoker([adder], timeout=0)


# ---------------------------------------------------------------------------------- invoke_all


async def test_invoke_all_returns_results_in_call_order_and_runs_concurrently() -> None:
    first_started = asyncio.Event()
    second_started = asyncio.Event()

    @tool
    async def first() -> str:
        first_started.set()
        await second_started.wait()  # only finishes if `second` runs at the same time
        return "first"

    @tool
    async def second() -> str:
        second_started.set()
        await first_started.wait()
        await asyncio.sleep(0)
        return "second"

    invoker = ToolInvoker([first, second])
    calls = [call("second", call_id="a"), call("first", call_id="b"), call("nope", call_id="c")]
    results = await asyncio.wait_for(invoker.invoke_all(calls), timeout=10)
    assert [r.call_id for r in results] == ["a", "b", "c"]
    assert [text(r) for r in results[:2]] == ["second", "first"]
    assert results[2].error_kind is ToolErrorKind.UNKNOWN_TOOL


async def test_one_failing_call_does_not_cancel_the_others(failing: Tool) -> None:
    gate = asyncio.Event()

    @tool
    async def slow() -> str:
        await gate.wait()
        return "done"

    @tool
    async def opener() -> str:
        gate.set()
        return "opened"

    invoker = ToolInvoker([failing, slow, opener])
    calls = [call("slow", call_id="1"), call("explode", '{"x": 1}', call_id="2"), call("opener", call_id="3")]
    results = await asyncio.wait_for(invoker.invoke_all(calls), timeout=10)
    assert [text(r) for r in results] == ["done", EXECUTION_ERROR_MESSAGE, "opened"]


async def test_invoke_all_with_no_calls_returns_empty(adder: Tool) -> None:
    assert await ToolInvoker([adder]).invoke_all([]) == []
