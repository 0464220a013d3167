"""``create_app(..., extensions=[...])``: an extension's router is served beside ``/v1``, its agents are
ordinary agents (same auth, same chunks), and its lifespan wraps the run manager's — up before the
first run, down only after the runs still going were cancelled."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
import pytest
from fastapi import APIRouter
from fastapi.responses import PlainTextResponse

from kanawa import Agent, tool
from kanawa.llm.testing import FunctionLLM
from kanawa.llm.testing.models import ModelRequest, Script
from kanawa.server.http.app import create_app
from kanawa.server.runs.demo_agents import demo_agents
from kanawa.server.runs.extensions import Extension
from kanawa.server.runs.loaders import LoadError, load_extensions
from kanawa.types import AssistantMessage, ToolCall
from tests.server.conftest import LiveServer, settings_for, wait_for
from tests.server.sse import AUTH_A, start_run


class Holder:
    """What the extension's lifespan and its agent's tool share: a log and the calls in progress."""

    def __init__(self) -> None:
        self.log: list[tuple[str, int]] = []
        self.active = 0

    @asynccontextmanager
    async def lifespan(self) -> AsyncIterator[None]:
        self.log.append(("open", self.active))
        try:
            yield
        finally:
            self.log.append(("close", self.active))


def extension(holder: Holder) -> Extension:
    @tool
    async def hold(seconds: float) -> str:
        """Hold the extension's resource for a while.

        Args:
            seconds: how long
        """
        holder.active += 1
        try:
            await asyncio.sleep(seconds)
        finally:
            holder.active -= 1
        return "held"

    def answer(request: ModelRequest) -> Script:
        if request.tool_results:
            return "done holding"
        seconds = request.last_user_text or "0"
        return AssistantMessage(tool_calls=(ToolCall("call_0", "hold", f'{{"seconds": {seconds}}}'),))

    router = APIRouter()

    @router.get("/ext/hello", response_class=PlainTextResponse)
    async def hello() -> str:
        return "hello from the extension"

    agent = Agent("holder", "Hold the resource.", tools=[hold], model=FunctionLLM(answer))
    return Extension("holder", router=router, agents={"holder": agent}, lifespan=holder.lifespan)


async def test_an_extension_serves_its_routes_and_agents_and_outlives_its_runs() -> None:
    holder = Holder()
    server = LiveServer(
        create_app(
            agents=demo_agents(), settings=settings_for("embedded", None), extensions=[extension(holder)]
        )
    )
    server.start()
    stopped = False
    try:
        assert holder.log == [("open", 0)]
        async with httpx.AsyncClient(base_url=server.url, timeout=20) as http:
            assert (await http.get("/ext/hello")).text == "hello from the extension"
            agents = {a["name"] for a in (await http.get("/v1/agents", headers=AUTH_A)).json()["agents"]}
            assert agents == {"calc", "echo", "holder"}
            _, events = await start_run(http, "holder", "0")
            assert events[-2].chunk["type"] == "usage"
            assert events[-1].chunk["data"]["status"] == "completed"
            async with http.stream(
                "POST", "/v1/runs", json={"agent": "holder", "input": "60"}, headers=AUTH_A
            ):
                pass  # the client goes; the run stays, holding the resource

            async def holding() -> bool:
                return holder.active == 1

            await wait_for(holding)
        server.stop()
        stopped = True
        assert holder.log == [("open", 0), ("close", 0)]  # closed only after the run was cancelled
    finally:
        if not stopped:
            server.stop()


def test_an_agent_name_is_taken_once() -> None:
    clash = Extension("clash", agents={"echo": demo_agents()["echo"]})
    with pytest.raises(ValueError, match="'echo'"):
        create_app(agents=demo_agents(), settings=settings_for("embedded", None), extensions=[clash])


NAMED = Extension("named", agents={"named-echo": demo_agents()["echo"]})
NOT_AN_EXTENSION = 7


def made() -> list[Extension]:
    """A factory, as ``KANAWA_SERVE_EXTENSIONS`` may name one (called once per process)."""
    return [Extension("made")]


def test_extensions_are_loaded_by_name_as_kanawa_serve_and_kanawa_worker_load_them() -> None:
    here = __name__
    loaded = load_extensions(f"{here}:NAMED, {here}:made")
    assert [extension.name for extension in loaded] == ["named", "made"]
    assert loaded[0] is NAMED
    assert load_extensions(None) == load_extensions("") == ()
    for spec, says in (
        (f"{here}:NOT_AN_EXTENSION", "not an Extension"),
        ("no_such_module_xyz:extensions", "cannot import"),
        (f"{here}:missing", "no attribute"),
        ("nocolon", "module:attr"),
        (f"{here}:NAMED,{here}:NAMED", "mounted twice"),
    ):
        with pytest.raises(LoadError, match=says):
            load_extensions(spec)
