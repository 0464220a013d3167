"""The SmartAO coaching page, served by the kanawa service under ``/smartao/`` (issue 12 part 8).

:func:`smartao_extension` is what ``kanawa smartao serve`` mounts with
``create_app(..., extensions=[...])``: the ``smartao`` agent (:mod:`kanawa.apps.smartao.service`), the
page's routes and the lifespan of the process's SmartAO resources. The page itself is static package
data — ``index.html``, ``smartao.css`` and ``smartao.js`` (vanilla JavaScript, no build step) — plus
``samples.json``, the shipped sample essays and admission policy the form is prefilled from (and the
rubric's axes with their English names). None of these routes needs a key: the page holds nothing
private. Its runs go through ``/v1/runs`` with the caller's Bearer key, exactly like any other client.
The key is handled by the script every kanawa page loads (``/page/key.js``,
:mod:`kanawa.server.http.page`): from the URL fragment (``#key=…``) or typed in, kept in the tab's
``sessionStorage`` (one key serves every page), and never silently replaced by a key a link brings.
The page is sent with the same ``Content-Security-Policy`` as kanawa's own pages (scripts, images,
fonts and connections of this origin only).

The page does no coaching of its own: it shows the chunks of the run (Style's issues and patch, Draft's
suggestions, Guard's passages, Ref's references, Eval's rubric, usage and cost) and applies the changes
the user accepts — a subset of the run's merged ``change_map`` in its canonical order, so
``PatchJSON.apply(original)`` gives the ``new_text`` it downloads. Offsets are Unicode code points, as in
Python (``Array.from(text)`` in the script, never UTF-16 indices).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from importlib.resources import files
from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from kanawa.apps.smartao.rubric import load_rubric
from kanawa.apps.smartao.service import SMARTAO_EVENT_CHUNKS, SmartAOAgent, SmartAOHost
from kanawa.apps.smartao.session import sample_text
from kanawa.llm.adapter import LLMAdapter
from kanawa.server.http.page import page_response
from kanawa.server.runs.extensions import Extension

PAGE_PATH = "/smartao/"
_ASSETS = {"smartao.js": "text/javascript; charset=utf-8", "smartao.css": "text/css; charset=utf-8"}
SAMPLE_ESSAYS = (
    ("shibou_riyusho.txt", "志望理由書", "志望理由書のサンプル", "Sample statement of purpose"),
    ("shoronbun.txt", "小論文", "小論文のサンプル", "Sample short essay"),
)
SAMPLE_SCHOOLS = (
    (
        "サンプル大学",
        "地域創生学部",
        "Sample University, Faculty of Regional Revitalization",
        "admission_policy.txt",
    ),
)


def _asset(name: str) -> str:
    return (files(__package__) / name).read_text(encoding="utf-8")


@cache
def samples() -> dict[str, object]:
    """The shipped samples the page's form offers — essays, and universities with their policy — and
    the rubric's axes with their English names (the page shows scores in either language)."""
    return {
        "essays": [
            {"id": name, "kind": kind, "title_ja": ja, "title_en": en, "text": sample_text(name)}
            for name, kind, ja, en in SAMPLE_ESSAYS
        ],
        "schools": [
            {"university": university, "faculty": faculty, "label_en": en, "policy": sample_text(policy)}
            for university, faculty, en, policy in SAMPLE_SCHOOLS
        ],
        "axes": [{"name": axis["name"], "name_en": axis["name_en"]} for axis in load_rubric()["axes"]],
    }


def smartao_router() -> APIRouter:
    """The page's routes: ``/smartao/`` (the page), its script and style sheet, ``samples.json``."""
    router = APIRouter(include_in_schema=False)
    page = _asset("index.html")
    assets = {name: _asset(name) for name in _ASSETS}
    sample_json = json.dumps(samples(), ensure_ascii=False)

    @router.get("/smartao")
    async def page_redirect() -> RedirectResponse:
        return RedirectResponse(PAGE_PATH)

    @router.get(PAGE_PATH, response_class=HTMLResponse)
    async def smartao_page() -> HTMLResponse:
        return page_response(page)

    @router.get(PAGE_PATH + "samples.json")
    async def smartao_samples() -> Response:
        return Response(sample_json, media_type="application/json")

    @router.get(PAGE_PATH + "{name}")
    async def smartao_asset(name: str) -> Response:
        if name not in assets:
            return JSONResponse({"detail": "Not Found"}, status_code=404)
        return Response(assets[name], media_type=_ASSETS[name], headers={"Cache-Control": "no-cache"})

    return router


def smartao_extension(
    directory: str | Path,
    *,
    model: str | LLMAdapter | None = None,
    models: Mapping[str, str | LLMAdapter] | None = None,
    textlint: bool | None = None,
    name: str = "smartao",
) -> Extension:
    """SmartAO for ``create_app(..., extensions=[smartao_extension(dir)])``: the ``smartao`` agent, the
    page under ``/smartao/`` and the resources (stores under ``directory``; ``textlint`` as for
    :class:`SmartAOHost`), started with the server and closed at its end."""
    host = SmartAOHost(directory, textlint=textlint)
    agent = SmartAOAgent(host, model_spec=model, models=dict(models or {}), name=name)
    return Extension(
        "smartao",
        router=smartao_router(),
        agents={name: agent},
        event_chunks=SMARTAO_EVENT_CHUNKS,
        lifespan=host.lifespan,
    )


__all__ = ["PAGE_PATH", "samples", "smartao_extension", "smartao_router"]
