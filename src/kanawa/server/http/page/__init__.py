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

The API key is taken from the URL fragment (``/runs/{id}#key=...``, never sent to the server in a
URL) or typed into the page, and kept in the tab's ``sessionStorage``.

``agui.html`` is the minimal AG-UI chat page (``GET /ag-ui/{agent}/page``, :mod:`..protocols.agui`):
plain HTML and one JavaScript module that posts a ``RunAgentInput`` and draws the events — the
agent's messages, its tool calls and their results, handoff steps, shared state — runs the page's own
frontend tool and sends its result back, and resumes a dropped stream with ``Last-Event-ID``. The
thread id is kept in ``localStorage`` per agent, so a reloaded page goes on with its thread.
"""

from __future__ import annotations

from importlib.resources import files

PAGE_HTML: str = (files(__package__) / "timeline.html").read_text(encoding="utf-8")
AGUI_PAGE_HTML: str = (files(__package__) / "agui.html").read_text(encoding="utf-8")

__all__ = ["AGUI_PAGE_HTML", "PAGE_HTML"]
