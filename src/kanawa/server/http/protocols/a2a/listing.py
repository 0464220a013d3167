"""``ListTasks``: a page of a tenant's tasks of one agent, bounded in bytes as well as in count.

A list is where one request could make the server read and send every answer a tenant has kept (12
tasks of 8 MiB: a 96 MiB answer built in memory, other tenants' calls waiting meanwhile). So:

- with ``includeArtifacts``, each task's answer is **cut** to its first :data:`LIST_ANSWER_CHARS`
  characters, and the artifact's metadata says so (``"kanawa/truncated": true``); the stored chunks
  are read only as far as that (plus a failed run's error, an approval's calls). ``GetTask`` answers
  the whole task;
- a page ends before the task that would take the page past ``KANAWA_A2A_LIST_BYTES`` (the tasks'
  encoded size), and at ``pageSize`` tasks (:data:`MAX_PAGE` at most); ``nextPageToken`` (the last
  task's id) continues after it. A page holds at least one task, so a client paging on always
  reaches the end.
"""

from __future__ import annotations

from typing import Final

from a2a.types.a2a_pb2 import ListTasksRequest, ListTasksResponse, Task
from a2a.utils.errors import InvalidParamsError

from kanawa.server.http.protocols.a2a.tasks import STATE, TaskText, build_task, read_text
from kanawa.server.store.base import RunRecord, RunStore

MAX_PAGE: Final = 100
"""The most tasks one ``ListTasks`` answers."""
LIST_ANSWER_CHARS: Final = 16_384
"""The most characters of a task's answer a list holds (the rest: ``GetTask``)."""
SCANNED: Final = 1000
"""The most recent runs of a tenant a list looks through."""


def _matching(records: list[RunRecord], agent: str, params: ListTasksRequest) -> list[RunRecord]:
    chosen = [r for r in records if r.agent == agent]
    if params.context_id:
        chosen = [r for r in chosen if (r.session_id or r.run_id) == params.context_id]
    if params.status:
        chosen = [r for r in chosen if STATE[r.status] == params.status]
    if params.HasField("status_timestamp_after"):
        after = params.status_timestamp_after.ToNanoseconds() / 1e9
        chosen = [r for r in chosen if r.updated > after]
    return chosen


def _start(records: list[RunRecord], token: str) -> int:
    """Where the page after ``token`` (the previous page's last task id) starts."""
    if not token:
        return 0
    for index, record in enumerate(records):
        if record.run_id == token:
            return index + 1
    raise InvalidParamsError(message="pageToken names no task of this list (ask for the first page again)")


async def _listed(store: RunStore, record: RunRecord, include_artifacts: bool) -> Task:
    if not include_artifacts:
        return build_task(record, TaskText())
    text = TaskText(limit=LIST_ANSWER_CHARS, needs_rest=record.status in {"failed", "awaiting_approval"})
    return build_task(record, await read_text(store, record.run_id, until=record.last_seq, text=text))


async def list_page(
    store: RunStore, tenant: str, agent: str, params: ListTasksRequest, *, max_bytes: int
) -> ListTasksResponse:
    """The page of ``tenant``'s tasks of ``agent`` that ``params`` asks for (module docstring)."""
    size = params.page_size if 0 < params.page_size < MAX_PAGE else MAX_PAGE
    records = _matching(await store.list(tenant, limit=SCANNED), agent, params)
    start = _start(records, params.page_token)
    page = ListTasksResponse(page_size=size, total_size=len(records))
    used = 0
    for record in records[start : start + size]:
        task = await _listed(store, record, params.include_artifacts)
        cost = task.ByteSize()
        if page.tasks and used + cost > max_bytes:
            break
        used += cost
        page.tasks.append(task)
    end = start + len(page.tasks)
    if end < len(records):
        page.next_page_token = records[end - 1].run_id
    return page


__all__ = ["LIST_ANSWER_CHARS", "MAX_PAGE", "list_page"]
