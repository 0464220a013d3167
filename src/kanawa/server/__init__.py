"""``kanawa serve``: agents as an HTTP service that streams SSE chunks and never loses one.

Seed 002 §2 (App → AgentRouter → HTTP SSE out), §5 (the chunk protocol ``{time, agent, type, data,
seq}``, ``seq`` strictly increasing, resume by ``seq``), §7 (errors become ``type:"error"`` chunks) and
§8 (integration tests over HTTP, a load test of concurrent sessions).

The story of one request:

1. ``POST /v1/runs {"agent": "calc", "input": "2+3?"}`` arrives with ``Authorization: Bearer <key>``.
   The body size is checked (:mod:`.limits`), the key is hashed and mapped to a tenant, and the key's
   rate limit is taken (:mod:`.auth`).
2. The :class:`~kanawa.server.runs.manager.RunManager` creates a run record owned by that tenant in the run
   store and starts a task that iterates ``agent.stream(input)``. The task belongs to the manager, not
   to the request: a client that goes away leaves the run running.
3. Each event of the run becomes chunks (:mod:`.chunks`, mapping by the event's ``kind``); each chunk
   gets the next ``seq`` and is appended to the store — an in-memory ring (:mod:`.store`) or, with
   ``KANAWA_REDIS_URL``, a Redis Stream whose entry ids are the seqs (:mod:`.redis_store`). After each
   completed step the run's state is checkpointed (:mod:`.checkpoint`).
4. The response is an SSE stream with ``X-Run-Id``; it reads the store from seq 0 and writes
   ``id: <seq>`` / ``data: <chunk>`` until the run's ``done`` chunk, with keep-alive pings between.
5. A client that lost the connection calls ``GET /v1/runs/{id}/events`` with ``Last-Event-ID: <seq>``
   and gets exactly the chunks after it. Another tenant asking for the same id gets 404.

The live timeline page (:mod:`.page`) follows the same stream in a browser. Applications mount their
own pages, routes and agents with ``create_app(..., extensions=[Extension(...)])`` (:mod:`.extensions`);
anything meeting :class:`~kanawa.server.runs.servable.ServableAgent` can be registered, not only an ``Agent``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kanawa._lazy import lazy_exports

if TYPE_CHECKING:
    from kanawa.server.extensions import Extension
    from kanawa.server.http.app import create_app
    from kanawa.server.registry import demo_agents, load_agents
    from kanawa.server.runs.servable import ServableAgent
    from kanawa.server.settings import ServerSettings

__getattr__, __dir__ = lazy_exports(
    __name__,
    globals(),
    {
        "create_app": "kanawa.server.http.app",
        "Extension": "kanawa.server.extensions",
        "ServableAgent": "kanawa.server.runs.servable",
        "demo_agents": "kanawa.server.registry",
        "load_agents": "kanawa.server.registry",
        "ServerSettings": "kanawa.server.settings",
    },
)

__all__ = ["Extension", "ServableAgent", "ServerSettings", "create_app", "demo_agents", "load_agents"]
