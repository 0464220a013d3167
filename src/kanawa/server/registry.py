"""Which agents a server offers: ``kanawa serve myapp:agents`` or the built-in demo agents.

``module:attr`` names a dict of name → :class:`~kanawa.Agent`, a list of agents (each under its own
name), one agent, or a function returning any of those (called once at start). Besides agents, any
servable agent (:class:`~kanawa.server.servable.ServableAgent`: a composite that drives several
agents as one run, like SmartAO's coordinator) may be registered — which is how a Celery worker
(``KANAWA_SERVE_AGENTS``) runs composites too. The demo agents run
offline with no API key, so a newcomer sees the service work:

- ``calc`` — asks the ``calculator`` tool for the arithmetic in the question, then answers with it;
- ``echo`` — streams the question back (handy for load tests).

:func:`load_extensions` reads ``KANAWA_SERVE_EXTENSIONS`` the same way: ``module:attr`` names (comma-
separated) of :class:`~kanawa.server.extensions.Extension` objects. The app (``kanawa serve``) and every
Celery worker (``kanawa worker``) load them from the same setting, so an application's agents, its
events' chunks and its per-process resources are the same wherever its runs execute.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kanawa.agents.agent import Agent
from kanawa.llm.testing.models import FunctionLLM, ModelRequest, Script
from kanawa.server.runs.servable import ServableAgent
from kanawa.tools.builtin import calculator
from kanawa.types import AssistantMessage, ToolCall, ToolMessage, UserMessage

if TYPE_CHECKING:
    from kanawa.server.extensions import Extension

AgentRegistry = Mapping[str, Agent[Any, Any]]
_ARITHMETIC = re.compile(r"[0-9(][0-9+\-*/().% ]*[0-9)]")


class RegistryError(ValueError):
    """``module:attr`` cannot be loaded or does not hold agents."""


class _DemoLLM(FunctionLLM):
    """A FunctionLLM that keeps no request history (a server's demo model runs forever)."""

    async def _produce(self, request: ModelRequest) -> Script:
        self.requests.clear()
        return await super()._produce(request)


def _calc_answer(request: ModelRequest) -> Script:
    """The calculator's result for the latest question. Only the tool results after the last user
    message answer it: in a continued conversation (Responses ``previous_response_id``, a thread's
    next run) the earlier results belong to earlier questions. Each question's call has its own id
    (``call_<n>`` for the n-th question), as a real model's calls would."""
    messages = request.messages
    questions = [i for i, message in enumerate(messages) if isinstance(message, UserMessage)]
    since = questions[-1] + 1 if questions else 0
    results = [message for message in messages[since:] if isinstance(message, ToolMessage)]
    if results:
        return f"The answer is {results[-1].text}."
    match = _ARITHMETIC.search(request.last_user_text)
    if match is None:
        return "Ask me some arithmetic, for example: what is 2 + 3?"
    arguments = '{"expression": "' + match.group(0).strip() + '"}'
    return AssistantMessage(tool_calls=(ToolCall(f"call_{len(questions)}", "calculator", arguments),))


def _echo_answer(request: ModelRequest) -> Script:
    return request.last_user_text or "(nothing to echo)"


def demo_agents() -> dict[str, Agent[Any, Any]]:
    """The built-in agents (no key, no services)."""
    return {
        "calc": Agent(
            "calc",
            "Answer arithmetic with the calculator tool.",
            tools=[calculator],
            model=_DemoLLM(_calc_answer),
        ),
        "echo": Agent("echo", "Repeat the user's words.", tools=(), model=_DemoLLM(_echo_answer)),
    }


def _servable(value: object) -> bool:
    """An :class:`Agent`, or anything with the servable surface (a name and ``stream``)."""
    return isinstance(value, Agent) or (
        isinstance(getattr(value, "name", None), str) and callable(getattr(value, "stream", None))
    )


def _as_registry(value: object, where: str) -> dict[str, ServableAgent]:
    if _servable(value) and not isinstance(value, Mapping):
        one: ServableAgent = value  # type: ignore[assignment]  # checked by _servable
        return {one.name: one}
    if isinstance(value, Mapping):
        out: dict[str, ServableAgent] = {}
        for name, agent in value.items():
            if not _servable(agent):
                raise RegistryError(f"{where}[{name!r}] is a {type(agent).__name__}, not an Agent")
            out[str(name)] = agent
        return out
    if isinstance(value, list | tuple):
        out = {}
        for agent in value:
            if not _servable(agent):
                raise RegistryError(f"{where} holds a {type(agent).__name__}, not an Agent")
            out[agent.name] = agent
        return out
    raise RegistryError(f"{where} is a {type(value).__name__}; expected agents (a dict, a list or an Agent)")


def _attribute(spec: str) -> object:
    """The object ``module:attr`` names; :class:`RegistryError` saying what is wrong otherwise."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise RegistryError(f"expected module:attr (e.g. myapp:agents), not {spec!r}")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise RegistryError(f"cannot import {module_name!r}: {exc}") from None
    try:
        return getattr(module, attr)
    except AttributeError:
        raise RegistryError(f"module {module_name!r} has no attribute {attr!r}") from None


def load_agents(spec: str | None) -> dict[str, ServableAgent]:
    """The registry named by ``module:attr`` (``None`` or ``"demo"``: the demo agents)."""
    if spec is None or spec == "demo":
        return dict(demo_agents())
    value = _attribute(spec)
    if callable(value) and not _servable(value):
        value = value()
    agents = _as_registry(value, spec)
    if not agents:
        raise RegistryError(f"{spec} holds no agents")
    return agents


def load_extensions(spec: str | None) -> tuple[Extension, ...]:
    """The extensions ``spec`` names: ``module:attr`` names separated by commas, each an
    :class:`~kanawa.server.extensions.Extension`, a list of them, or a function returning either
    (called once per process, so each process makes its own resources). ``None``: none."""
    from kanawa.server.extensions import Extension

    found: list[Extension] = []
    for one in (part.strip() for part in (spec or "").split(",")):
        if not one:
            continue
        value = _attribute(one)
        if callable(value) and not isinstance(value, Extension):
            value = value()
        items = list(value) if isinstance(value, list | tuple) else [value]
        for item in items:
            if not isinstance(item, Extension):
                raise RegistryError(f"{one} holds a {type(item).__name__}, not an Extension")
            found.append(item)
    names = [extension.name for extension in found]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise RegistryError(f"extension {twice[0]!r} is mounted twice")
    return tuple(found)


__all__ = ["AgentRegistry", "RegistryError", "demo_agents", "load_agents", "load_extensions"]
