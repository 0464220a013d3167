"""The live trace timeline page (plain HTML and vanilla JavaScript, no build step).

One page serves three views, chosen from its URL: ``/runs`` lists the caller's runs, ``/runs/{id}``
follows a run's SSE stream live (resuming after a dropped connection with ``Last-Event-ID``) and the
page of ``kanawa trace view FILE`` draws a JSONL trace read from ``./trace.json``. The timeline is
built the way :mod:`kanawa.trace.timeline` builds it for the terminal: ``*_start``/``*_end`` records
paired by call id (tools) or by step (model calls), lanes per agent, durations and token counts —
and costs: each model call as the server priced it (``cost_usd`` on its ``llm_end`` record,
:mod:`kanawa.trace.costs`), the run's total from its ``done`` chunk (a trace file: the sum of its
calls). A call without a known price shows "–", and so does a total that would leave one out — a
failed call to such a model included, so a failed run never shows a made-up ``$0``.

The badge is the run's outcome: the ``done`` chunk's status, or for a trace file the outcome its runs'
``agent_end`` records give (:mod:`kanawa.trace.outcome`), so a tool call that failed in a run that went
on to complete does not mark the run failed. Bars are placed in whole pixels and packed into rows
within their lane: calls that run at the same time sit one above the other, and no bar reaches past
the right edge.

The API key is handled by one script every page loads, ``key.js`` (``GET /page/key.js``): taken
from the URL fragment (``/runs/{id}#key=...``, never sent to the server in a URL) or typed into the
page, kept in the tab's ``sessionStorage``, and never silently replaced by a key a link brings — the
page asks first, naming both tenants, and shows the tenant of the key in use.

Every page is sent with :func:`page_policy`'s ``Content-Security-Policy``: scripts only its own
(inline ones by hash) and ``/page/key.js``; images, fonts and connections to this origin only. So
what an agent's output might make a page do — a ``url(http://…)`` in a style, a ``fetch`` elsewhere —
reaches no other host.

``agui.html`` is the minimal AG-UI chat page (``GET /ag-ui/{agent}/page``, :mod:`..protocols.agui.routes`):
plain HTML and one JavaScript module that posts a ``RunAgentInput`` and draws the events — the
agent's messages, its tool calls and their results, handoff steps, shared state — runs the page's own
frontend tool and sends its result back, and resumes a dropped stream with ``Last-Event-ID``. The
thread id is kept in ``localStorage`` per agent, so a reloaded page goes on with its thread. Its
frontend tool ``set_theme`` takes a colour value and nothing else: the agent's arguments are not
trusted (a prompt can steer them).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import re
from importlib.resources import files
from typing import Final

from starlette.responses import HTMLResponse, Response

PAGE_HTML: str = (files(__package__) / "timeline.html").read_text(encoding="utf-8")
AGUI_PAGE_HTML: str = (files(__package__) / "agui.html").read_text(encoding="utf-8")
KEY_SCRIPT: str = (files(__package__) / "key.js").read_text(encoding="utf-8")
KEY_SCRIPT_PATH: Final = "/page/key.js"
"""Where every page loads :data:`KEY_SCRIPT` from."""

_INLINE_SCRIPT = re.compile(r"<script(?![^>]*\ssrc=)[^>]*>(.*?)</script>", re.DOTALL)


@functools.cache
def page_policy(html: str) -> str:
    """The ``Content-Security-Policy`` of a page: its own inline scripts (by their SHA-256) and this
    origin's scripts; styles of its own; images, fonts and connections to this origin only; no
    frames, plugins, base URL or form posts elsewhere. Computed once per page text."""
    hashes = " ".join(
        "'sha256-" + base64.b64encode(hashlib.sha256(body.encode("utf-8")).digest()).decode() + "'"
        for body in _INLINE_SCRIPT.findall(html)
    )
    return (
        f"default-src 'none'; script-src 'self' {hashes}; style-src 'self' 'unsafe-inline'; "
        "img-src 'self' data:; font-src 'self'; connect-src 'self'; manifest-src 'self'; "
        "base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'"
    )


def page_response(html: str) -> HTMLResponse:
    """``html`` as a page, with its :func:`page_policy`."""
    return HTMLResponse(html, headers={"Content-Security-Policy": page_policy(html)})


def key_script_response() -> Response:
    """:data:`KEY_SCRIPT` as the pages load it."""
    return Response(
        KEY_SCRIPT, media_type="text/javascript; charset=utf-8", headers={"Cache-Control": "no-cache"}
    )


__all__ = [
    "AGUI_PAGE_HTML",
    "KEY_SCRIPT",
    "KEY_SCRIPT_PATH",
    "PAGE_HTML",
    "key_script_response",
    "page_policy",
    "page_response",
]
