"""``kanawa serve``: agents as an HTTP service that streams SSE chunks and never loses one.

Seed 002 §2 (App → AgentRouter → HTTP SSE out), §5 (the chunk protocol ``{time, agent, type, data,
seq}``, ``seq`` strictly increasing, resume by ``seq``), §7 (errors become ``type:"error"`` chunks) and
§8 (integration tests over HTTP, a load test of concurrent sessions).

Three layers, importing one way — :mod:`.http` → :mod:`.runs` → :mod:`.store`:

- :mod:`.store` keeps run records, numbered chunks and checkpoints (in memory, or Redis Streams with
  ``KANAWA_REDIS_URL``) and feeds the readers at the head of a run through a subscriber protocol;
- :mod:`.runs` runs the agents: the run manager, the translation of run events into chunks,
  checkpoints, tenant budgets, Celery workers, and the :class:`~kanawa.server.runs.servable.ServableAgent`
  surface it needs of an agent (anything meeting it can be registered, not only an ``Agent``);
- :mod:`.http` is the FastAPI app: routers, authentication, limits, pages, and one module per wire
  protocol under :mod:`kanawa.server.http.protocols`.

The story of one request:

1. ``POST /v1/runs {"agent": "calc", "input": "2+3?"}`` arrives with ``Authorization: Bearer <key>``.
   The body size is checked (:mod:`kanawa.server.http.limits`), the key is hashed and mapped to a
   tenant, and the key's rate limit is taken (:mod:`kanawa.server.http.auth`).
2. The :class:`~kanawa.server.runs.manager.RunManager` creates a run record owned by that tenant in the
   run store and starts a task that iterates ``agent.stream(input, options=...)`` — the options carry
   the run's trace sink and the tenant's budget guard; the agent itself is never changed. The task
   belongs to the manager, not to the request: a client that goes away leaves the run running.
3. Each event of the run becomes chunks (:mod:`kanawa.server.runs.chunks`); each chunk gets the next
   ``seq`` and is appended to the store. After each completed step the run's state is checkpointed
   (:mod:`kanawa.server.runs.checkpoint`).
4. The response is an SSE stream with ``X-Run-Id`` (:mod:`kanawa.server.http.protocols.kanawa_sse`);
   it reads the store from seq 0 and writes ``id: <seq>`` / ``data: <chunk>`` until the run's ``done``
   chunk, with keep-alive pings between — straight from the run's writer while the client keeps up.
5. A client that lost the connection calls ``GET /v1/runs/{id}/events`` with ``Last-Event-ID: <seq>``
   and gets exactly the chunks after it. Another tenant asking for the same id gets 404.

Applications mount their own pages, routes, agents and event translations with
``create_app(..., extensions=[Extension(...)])`` (:mod:`.extensions`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kanawa._lazy import lazy_exports

if TYPE_CHECKING:
    from kanawa.server.http.app import create_app
    from kanawa.server.runs.demo_agents import demo_agents
    from kanawa.server.runs.extensions import Extension
    from kanawa.server.runs.loaders import load_agents
    from kanawa.server.runs.servable import ServableAgent
    from kanawa.server.settings import ServerSettings

__getattr__, __dir__ = lazy_exports(
    __name__,
    globals(),
    {
        "create_app": "kanawa.server.http.app",
        "Extension": "kanawa.server.runs.extensions",
        "ServableAgent": "kanawa.server.runs.servable",
        "demo_agents": "kanawa.server.runs.demo_agents",
        "load_agents": "kanawa.server.runs.loaders",
        "ServerSettings": "kanawa.server.settings",
    },
)

__all__ = ["Extension", "ServableAgent", "ServerSettings", "create_app", "demo_agents", "load_agents"]
