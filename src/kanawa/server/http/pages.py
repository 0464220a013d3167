"""The live timeline pages (:mod:`.page`), the key script every page loads, and the root that leads
to them."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from kanawa.server.http.dependencies import RunIdArg
from kanawa.server.http.page import KEY_SCRIPT_PATH, PAGE_HTML, key_script_response, page_response

router = APIRouter(include_in_schema=False)


@router.get("/runs", response_class=HTMLResponse)
async def runs_page() -> HTMLResponse:
    return page_response(PAGE_HTML)


@router.get("/runs/{run_id}", response_class=HTMLResponse)
async def run_page(run_id: RunIdArg) -> HTMLResponse:
    return page_response(PAGE_HTML)


@router.get(KEY_SCRIPT_PATH)
async def key_script() -> Response:
    """The API key's handling, the same for every page (:mod:`.page`)."""
    return key_script_response()


root_router = APIRouter(include_in_schema=False)
"""Included after the extensions' routers: one of them may answer ``/`` instead."""


@root_router.get("/")
async def root() -> RedirectResponse:
    """The runs page: what a person opening the server's address wants. A browser keeps the
    ``#key=…`` fragment across it."""
    return RedirectResponse("/runs")


__all__ = ["root_router", "router"]
