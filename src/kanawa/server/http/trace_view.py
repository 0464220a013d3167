"""``kanawa trace view FILE``: the timeline page over a JSONL trace instead of a live stream.

The page is the one ``/runs/{id}`` serves; here it loads ``trace.json`` — the file's records, parsed
by :func:`kanawa.trace.records.read_trace` (bad lines are reported, not shown) — and draws them. The
summary a live run's ``done`` chunk gives comes with them: the runs' outcome
(:func:`kanawa.trace.outcome.trace_outcome`: an error record inside a run that ended ``completed`` is
not a failed run) and the total cost (:func:`kanawa.trace.costs.trace_cost`: unknown, never ``0``,
when any call went to a model without a price).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from kanawa.server.http.headers import PageSecurityHeaders
from kanawa.server.http.page import KEY_SCRIPT_PATH, PAGE_HTML, key_script_response, page_response
from kanawa.trace.costs import trace_cost, with_cost
from kanawa.trace.outcome import trace_outcome
from kanawa.trace.records import TraceRecord, read_trace
from kanawa.trace.serialize import iso_time
from kanawa.types import JsonValue


def record_json(record: TraceRecord) -> dict[str, JsonValue]:
    """A parsed record back as the JSON object the page reads (ISO time, ``None`` fields dropped;
    a model call priced, as the live page's are: :mod:`kanawa.trace.costs`)."""
    out: dict[str, JsonValue] = {}
    for item in dataclasses.fields(record):
        value = getattr(record, item.name)
        if value is not None and value != "" and value != {}:
            out[item.name] = value
    out["time"] = iso_time(record.time)
    return with_cost(out)


def create_trace_app(path: Path) -> FastAPI:
    """An app serving the page at ``/trace`` and the records of ``path`` at ``/trace.json``.
    Raises :class:`~kanawa.trace.records.TraceFileError` for a file that is not a trace."""
    read_trace(path)  # fail early, with the file's own error
    page = PAGE_HTML.replace("<body>", "<body data-trace>", 1)
    app = FastAPI(title="kanawa trace view", openapi_url=None, docs_url=None, redoc_url=None)
    app.add_middleware(PageSecurityHeaders)  # the page's headers, as the live server sends them

    @app.get("/")
    async def root() -> RedirectResponse:
        return RedirectResponse("/trace")

    @app.get("/trace", response_class=HTMLResponse)
    async def trace_page() -> HTMLResponse:
        return page_response(page)

    @app.get(KEY_SCRIPT_PATH)
    async def key_script() -> Response:
        return key_script_response()

    @app.get("/trace.json")
    async def trace_records() -> JSONResponse:
        log = read_trace(path)
        records = [record_json(r) for r in log.records]
        return JSONResponse(
            {
                "name": path.name,
                "status": trace_outcome(log.records),
                "cost_usd": trace_cost(log.records),
                "records": records,
                "skipped": log.skipped,
            }
        )

    return app


__all__ = ["create_trace_app", "record_json"]
