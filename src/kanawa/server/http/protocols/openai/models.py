"""``GET /v1/models`` and ``GET /v1/models/{model}``: the agents this server runs, as OpenAI models.

What an OpenAI client lists to pick a model (Open WebUI, Dify, LibreChat do so when a base URL is
set): every registered agent, by name, ``owned_by`` ``kanawa``. Every tenant may run every agent,
so every tenant sees them all; a name that is no agent is a 404 ``model_not_found``.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Request
from pydantic import BaseModel

from kanawa.server.http.dependencies import API_ERRORS, CallerArg
from kanawa.server.http.protocols.openai.errors import OpenAIError
from kanawa.server.http.protocols.run_parts import manager_of


class Model(BaseModel):
    id: str
    object: str = "model"
    created: int = 0
    owned_by: str = "kanawa"


class ModelList(BaseModel):
    object: str = "list"
    data: list[Model]


router = APIRouter(tags=["openai"])


@router.get("/v1/models", response_model=ModelList, responses=API_ERRORS, summary="List the agents as models")
async def list_models(request: Request, who: CallerArg) -> ModelList:
    """Every agent this server runs, as an OpenAI model object."""
    return ModelList(data=[Model(id=name) for name in manager_of(request).agents])


@router.get(
    "/v1/models/{model}",
    response_model=Model,
    responses={404: {"description": "No agent of that name"}, **API_ERRORS},
    summary="One agent as a model",
)
async def retrieve_model(
    model: Annotated[str, Path(max_length=200)], request: Request, who: CallerArg
) -> Any:
    if model not in manager_of(request).agents:
        return OpenAIError(404, f"the model {model!r} does not exist", code="model_not_found").response()
    return Model(id=model)


__all__ = ["Model", "ModelList", "router"]
