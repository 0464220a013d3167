"""Extra pages, routes and agents mounted into the service: ``create_app(..., extensions=[...])``.

An application built on kanawa (SmartAO's coaching page is one) often needs more than agents: a page
of its own, a few routes, and resources that live as long as the process (a corpus, a Node sidecar).
An :class:`Extension` bundles them so the application is served by the *same* app as ``/v1/...`` — one
origin, one set of API keys, its runs ordinary runs:

- ``router``: a FastAPI ``APIRouter`` included as it is (its paths are its own; routes that must be
  private use the ``/v1`` API from the page with the caller's key, so no second auth scheme exists);
- ``agents``: registered beside the app's agents (a name may not be taken twice);
- ``event_chunks``: the chunks of the application's own run events (event class → its translation,
  :data:`~kanawa.server.runs.chunks.EventChunks`): a run of its agents may yield them beside
  kanawa's own events (a class may not be translated twice);
- ``lifespan``: entered when the server starts, *before* the run manager exists, and left after the
  manager has cancelled and drained the runs still going — so a run never sees its resources closed
  under it.

The run layer holds this class (a Celery worker loads extensions for their agents, events and
lifespans, and never imports FastAPI); the HTTP layer mounts the router.

The router's own ``lifespan`` (FastAPI's) is not used for this: FastAPI nests it inside the app's,
which would close the resources while runs are still being cancelled.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import KW_ONLY, dataclass, field
from typing import TYPE_CHECKING, Any

from kanawa.server.runs.chunks import ChunkTranslation, EventChunks
from kanawa.server.runs.servable import ServableAgent

if TYPE_CHECKING:  # only the HTTP layer mounts the router: a worker process never imports FastAPI
    from fastapi import APIRouter

ExtensionLifespan = Callable[[], AbstractAsyncContextManager[object]]


@dataclass(frozen=True, slots=True)
class Extension:
    """One mounted application: its ``router``, its ``agents`` and the ``lifespan`` of its resources."""

    name: str
    _: KW_ONLY
    router: APIRouter | None = None
    agents: Mapping[str, ServableAgent] = field(default_factory=dict)
    event_chunks: Mapping[type[Any], EventChunks] = field(default_factory=dict)
    lifespan: ExtensionLifespan | None = None


def merged_agents(
    agents: Mapping[str, ServableAgent], extensions: tuple[Extension, ...]
) -> dict[str, ServableAgent]:
    """The app's agents with every extension's; ``ValueError`` when a name is taken twice."""
    registry = dict(agents)
    for extension in extensions:
        for name, agent in extension.agents.items():
            if name in registry:
                raise ValueError(f"extension {extension.name!r} registers agent {name!r}, which exists")
            registry[name] = agent
    return registry


def merged_translation(extensions: tuple[Extension, ...]) -> ChunkTranslation:
    """kanawa's chunk translation with every extension's events; ``ValueError`` when an event class
    is translated twice."""
    translation = ChunkTranslation()
    for extension in extensions:
        if extension.event_chunks:
            translation = translation.with_extra(extension.event_chunks)
    return translation


__all__ = ["Extension", "ExtensionLifespan", "merged_agents", "merged_translation"]
