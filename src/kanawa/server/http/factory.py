"""The app as uvicorn's worker processes build it
(``uvicorn --factory kanawa.server.http.factory:app_from_env``).

``kanawa serve`` passes its choices through the environment so every worker process builds the same
app: ``KANAWA_SERVE_AGENTS`` (the ``module:attr`` registry, default the demo agents),
``KANAWA_SERVE_EXTENSIONS`` (the extensions to mount, which ``kanawa worker`` loads too) and, when no
API keys are configured, ``KANAWA_DEV_KEY`` (the development key it printed).
"""

from __future__ import annotations

import os

from fastapi import FastAPI

from kanawa.server.http.app import create_app
from kanawa.server.runs.loaders import load_agents, load_extensions
from kanawa.server.settings import ServerSettings


def app_from_env() -> FastAPI:
    settings = ServerSettings.from_env(dev_key=os.environ.get("KANAWA_DEV_KEY") or None)
    return create_app(
        agents=load_agents(settings.serve_agents),
        settings=settings,
        extensions=load_extensions(settings.serve_extensions),
    )


__all__ = ["app_from_env"]
