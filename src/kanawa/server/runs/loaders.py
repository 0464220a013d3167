"""Which agents and extensions a server process serves: ``module:attr`` names, loaded.

``module:attr`` names a dict of name → :class:`~kanawa.Agent`, a list of agents (each under its own
name), one agent, or a function returning any of those (called once at start); ``None`` or ``"demo"``
means the demo agents (:mod:`kanawa.server.runs.demo_agents`). Besides agents, any servable agent
(:class:`~kanawa.server.runs.servable.ServableAgent`: a composite that drives several agents as one
run, like SmartAO's coordinator) may be named — which is how a Celery worker (``KANAWA_SERVE_AGENTS``)
runs composites too.

:func:`load_extensions` reads ``KANAWA_SERVE_EXTENSIONS`` the same way: ``module:attr`` names (comma-
separated) of :class:`~kanawa.server.runs.extensions.Extension` objects. The app (``kanawa serve``) and
every Celery worker (``kanawa worker``) load them from the same setting, so an application's agents,
its events' chunks and its per-process resources are the same wherever its runs execute. Both live in
the run layer, so a worker process loads them without the HTTP layer.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping

from kanawa.agents.agent import Agent
from kanawa.server.runs.demo_agents import demo_agents
from kanawa.server.runs.extensions import Extension
from kanawa.server.runs.servable import ServableAgent


class LoadError(ValueError):
    """``module:attr`` cannot be loaded or does not hold agents (or extensions)."""


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
                raise LoadError(f"{where}[{name!r}] is a {type(agent).__name__}, not an Agent")
            out[str(name)] = agent
        return out
    if isinstance(value, list | tuple):
        out = {}
        for agent in value:
            if not _servable(agent):
                raise LoadError(f"{where} holds a {type(agent).__name__}, not an Agent")
            out[agent.name] = agent
        return out
    raise LoadError(f"{where} is a {type(value).__name__}; expected agents (a dict, a list or an Agent)")


def _attribute(spec: str) -> object:
    """The object ``module:attr`` names; :class:`LoadError` saying what is wrong otherwise."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise LoadError(f"expected module:attr (e.g. myapp:agents), not {spec!r}")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise LoadError(f"cannot import {module_name!r}: {exc}") from None
    try:
        return getattr(module, attr)
    except AttributeError:
        raise LoadError(f"module {module_name!r} has no attribute {attr!r}") from None


def load_agents(spec: str | None) -> dict[str, ServableAgent]:
    """The registry named by ``module:attr`` (``None`` or ``"demo"``: the demo agents)."""
    if spec is None or spec == "demo":
        return dict(demo_agents())
    value = _attribute(spec)
    if callable(value) and not _servable(value):
        value = value()
    agents = _as_registry(value, spec)
    if not agents:
        raise LoadError(f"{spec} holds no agents")
    return agents


def load_extensions(spec: str | None) -> tuple[Extension, ...]:
    """The extensions ``spec`` names: ``module:attr`` names separated by commas, each an
    :class:`~kanawa.server.runs.extensions.Extension`, a list of them, or a function returning either
    (called once per process, so each process makes its own resources). ``None``: none."""
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
                raise LoadError(f"{one} holds a {type(item).__name__}, not an Extension")
            found.append(item)
    names = [extension.name for extension in found]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise LoadError(f"extension {twice[0]!r} is mounted twice")
    return tuple(found)


__all__ = ["LoadError", "load_agents", "load_extensions"]
