"""SmartAO as an ordinary service run: uvicorn on loopback, httpx reading the SSE stream.

One server per module (Sudachi rules, the offline demo model); the textlint sidecar's ownership by the
server process is shown on a server of its own.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from kanawa.apps.smartao.patch import PatchJSON
from kanawa.apps.smartao.reflexion import EvalStore
from kanawa.apps.smartao.service import DEMO_MODEL_NAME, SmartAOAgent
from kanawa.apps.smartao.session import sample_text
from kanawa.apps.smartao.textlint import textlint_available
from kanawa.apps.smartao.web import smartao_extension
from kanawa.server.http.app import create_app
from kanawa.server.runs.demo_agents import demo_agents
from tests.server.conftest import LiveServer, settings_for
from tests.server.sse import AUTH_A, AUTH_B, Event, read_stream, resume, start_run

ESSAY = sample_text("shibou_riyusho.txt")
POLICY = sample_text("admission_policy.txt")
REQUEST = json.dumps({"essay": ESSAY, "policy": POLICY, "university": "サンプル大学"}, ensure_ascii=False)


def data_dir(root: Path, reference_db: Path) -> Path:
    """A SmartAO data directory holding the session's already embedded references (the service
    would embed them on its first start)."""
    root.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(reference_db, root / "references.sqlite3")
    return root


@pytest.fixture(scope="module")
def smartao_server(tmp_path_factory: pytest.TempPathFactory, reference_db: Path) -> Iterator[LiveServer]:
    directory = data_dir(tmp_path_factory.mktemp("smartao-service"), reference_db)
    extension = smartao_extension(directory, textlint=False)
    server = LiveServer(
        create_app(agents=demo_agents(), settings=settings_for("embedded", None), extensions=[extension])
    )
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
async def client(smartao_server: LiveServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=smartao_server.url, timeout=httpx.Timeout(20.0)) as http:
        yield http


def of_type(events: list[Event], kind: str) -> list[dict[str, object]]:
    return [e.chunk for e in events if e.chunk["type"] == kind]


async def test_a_smartao_run_streams_findings_patch_rubric_and_done(client: httpx.AsyncClient) -> None:
    _, events = await start_run(client, "smartao", REQUEST)
    assert [e.id for e in events] == list(range(1, len(events) + 1))
    findings = {c["data"]["agent"]: c["data"]["data"] for c in of_type(events, "findings")}  # type: ignore[index]
    assert list(findings) == ["GuardAgent", "StyleAgent", "DraftAgent", "RefAgent"]
    issues = findings["StyleAgent"]["issues"]
    assert issues
    assert {issue["source"] for issue in issues} == {"sudachi"}
    assert findings["GuardAgent"]["plagiarism"]["verdict"] in ("pass", "warn")
    assert findings["RefAgent"]["references"]
    [patch_chunk] = of_type(events, "patch")
    patch = PatchJSON.model_validate(patch_chunk["data"]["patch"])  # type: ignore[index]
    assert patch.change_map
    assert patch.apply(ESSAY) == patch.new_text
    [rubric] = of_type(events, "rubric")
    assert len(rubric["data"]["rubric"]["scores"]) == 7  # type: ignore[index]
    top_final = [c for c in of_type(events, "final") if "depth" not in c["data"]]  # type: ignore[operator]
    assert [c["agent"] for c in top_final] == ["smartao"]
    assert top_final[0]["data"]["output"]["demo"] is True  # type: ignore[index]
    assert top_final[0]["data"]["text"] == patch.new_text  # type: ignore[index]
    kinds = [e.chunk["type"] for e in events]
    assert kinds[0] == "route"
    assert kinds.index("patch") < kinds.index("rubric") < len(kinds) - 3
    assert kinds[-3:] == ["final", "usage", "done"]
    done = events[-1].chunk
    assert done["type"] == "done"
    assert done["data"]["status"] == "completed"
    assert any(c["agent"] == "StyleAgent" and c["type"] == "tool_call" for c in (e.chunk for e in events))


async def test_resuming_mid_run_gives_the_same_chunks(client: httpx.AsyncClient) -> None:
    async with client.stream(
        "POST", "/v1/runs", json={"agent": "smartao", "input": REQUEST}, headers=AUTH_A
    ) as r:
        run_id = r.headers["x-run-id"]
        first, _ = await read_stream(r, cut_after_bytes=6000)
    assert first
    assert first[-1].chunk["type"] != "done"
    assert first[-1].id is not None
    rest = await resume(client, run_id, first[-1].id)
    whole = await resume(client, run_id, 0)
    assert [e.id for e in first + rest] == [e.id for e in whole]
    assert [e.chunk for e in first + rest] == [e.chunk for e in whole]
    assert {"findings", "patch", "rubric", "done"} <= {e.chunk["type"] for e in rest + first}


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("これは JSON ではありません", "not JSON"),
        ('["essay"]', "JSON object"),
        ('{"policy": "方針"}', "essay: Field required"),
        ('{"essay": "本文", "kind": "作文"}', "kind"),
        ('{"essay": "   "}', "the essay is empty"),
    ],
)
async def test_a_bad_input_ends_the_run_with_an_error_chunk(
    client: httpx.AsyncClient, text: str, says: str
) -> None:
    _, events = await start_run(client, "smartao", text)
    [error] = of_type(events, "error")
    assert error["data"]["code"] == "EssayInputError"  # type: ignore[index]
    assert says in error["data"]["message"]  # type: ignore[index,operator]
    assert "Traceback" not in json.dumps(error)
    assert events[-1].chunk["data"]["status"] == "failed"


async def test_another_tenant_cannot_see_a_smartao_run(client: httpx.AsyncClient) -> None:
    run_id, _ = await start_run(client, "smartao", REQUEST)
    assert (await client.get(f"/v1/runs/{run_id}", headers=AUTH_A)).status_code == 200
    assert (await client.get(f"/v1/runs/{run_id}", headers=AUTH_B)).status_code == 404
    assert (await client.get(f"/v1/runs/{run_id}/events", headers=AUTH_B)).status_code == 404
    listed = (await client.get("/v1/runs", headers=AUTH_B)).json()["runs"]
    assert run_id not in {run["id"] for run in listed}
    assert (await client.post("/v1/runs", json={"agent": "smartao", "input": REQUEST})).status_code == 401


async def test_the_agent_list_and_the_page_routes(client: httpx.AsyncClient) -> None:
    agents = {a["name"]: a for a in (await client.get("/v1/agents", headers=AUTH_A)).json()["agents"]}
    assert set(agents) == {"calc", "echo", "smartao"}
    assert agents["smartao"]["model"] == DEMO_MODEL_NAME
    assert {"grammar_check", "plagiarism_check", "vector_search"} <= set(agents["smartao"]["tools"])
    page = await client.get("/smartao/")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert '<html lang="ja">' in page.text
    assert (await client.get("/smartao", follow_redirects=False)).headers["location"] == "/smartao/"
    script = await client.get("/smartao/smartao.js")
    assert script.headers["content-type"].startswith("text/javascript")
    assert "Array.from" in script.text
    samples = (await client.get("/smartao/samples.json")).json()
    assert samples["schools"][0]["policy"] == POLICY
    assert (await client.get("/smartao/secret.py")).status_code == 404
    assert "/smartao/" not in (await client.get("/openapi.json")).json()["paths"]


async def test_a_tenant_budget_reaches_the_inner_agents(tmp_path: Path, reference_db: Path) -> None:
    extension = smartao_extension(data_dir(tmp_path, reference_db), textlint=False)
    agent = extension.agents["smartao"]
    assert isinstance(agent, SmartAOAgent)
    settings = settings_for("embedded", None, tenant_max_requests=2)
    server = LiveServer(create_app(agents={}, settings=settings, extensions=[extension])).start()
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=20) as http:
            _, events = await start_run(http, "smartao", REQUEST)
    finally:
        server.stop()
    # the budget reached the inner agents through the run's options: the service agent is untouched
    assert agent.guardrails == ()
    assert agent.tracer is None
    [error] = of_type(events, "error")
    assert error["data"]["code"] == "BudgetExceeded"  # type: ignore[index]
    assert events[-1].chunk["data"]["status"] == "failed"
    findings = [c["data"]["agent"] for c in of_type(events, "findings")]  # type: ignore[index]
    assert findings == ["GuardAgent"]  # two model requests: Guard's tool call and its answer


async def test_the_server_owns_the_textlint_sidecar_and_ends_it(tmp_path: Path, reference_db: Path) -> None:
    """Style's issues come from the engine present (textlint once `make smartao-textlint` ran); the
    Node process starts with the server and is gone when it stops."""
    extension = smartao_extension(data_dir(tmp_path, reference_db), textlint=None)
    agent = extension.agents["smartao"]
    assert isinstance(agent, SmartAOAgent)
    server = LiveServer(
        create_app(agents={}, settings=settings_for("embedded", None), extensions=[extension])
    ).start()
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=20) as http:
            _, events = await start_run(http, "smartao", REQUEST)
        sidecar = agent.host.sidecar  # the run waited for the resources the server started making
        assert (sidecar is not None) == textlint_available()
        assert sidecar is None or sidecar.running
    finally:
        server.stop()
    [style] = [c["data"]["data"] for c in of_type(events, "findings") if c["data"]["agent"] == "StyleAgent"]  # type: ignore[index]
    engine = "textlint" if textlint_available() else "sudachi"
    assert style["issues"]
    assert engine in {issue["source"] for issue in style["issues"]}
    assert agent.host.sidecar is None
    if sidecar is not None:
        assert not sidecar.running
        with pytest.raises(ProcessLookupError):
            os.kill(sidecar.pid, 0)


async def test_every_inner_agent_is_traced_under_the_service_run(client: httpx.AsyncClient) -> None:
    """The timeline page (``/runs/{id}``) of a SmartAO run shows its agents: each inner run names
    the service's run (or the handoff that started it) as its parent, so its trace events become that
    run's ``trace`` chunks."""
    # an essay not scored before: EvalAgent runs (no cached rubric), through the handoff
    essay = ESSAY + "\n以上の理由から、貴学を志望します。"
    request = json.dumps({"essay": essay, "policy": POLICY}, ensure_ascii=False)
    _, events = await start_run(client, "smartao", request)
    traces = of_type(events, "trace")
    model_calls = {str(t["agent"]) for t in traces if t["data"]["event"] == "llm_end"}  # type: ignore[index]
    assert {"GuardAgent", "StyleAgent", "DraftAgent", "RefAgent", "EvalAgent"} <= model_calls
    tools = {t["data"].get("tool") for t in traces if t["data"]["event"] == "tool_end"}  # type: ignore[union-attr, index]
    assert "transfer_to_evalagent" in tools
    assert essay[:40] not in json.dumps(traces, ensure_ascii=False)  # payloads are dropped
    runs = {t["data"]["run_id"] for t in traces}  # type: ignore[index]
    assert len(runs) >= 6  # each agent's run keeps its own id (a trace tree needs one per run)


async def test_the_rubric_cache_and_the_lessons_are_each_tenants_own(
    tmp_path: Path, reference_db: Path
) -> None:
    """Two tenants (KANAWA_API_KEYS=kA:acme,kB:globex) on the served app: one tenant's exact essay
    is scored afresh for the other (never ``cached``: it would be the first tenant's rubric), and a
    lesson learned from one tenant's evaluations reaches only that tenant's rubrics."""
    directory = data_dir(tmp_path / "data", reference_db)
    EvalStore(directory / "evaluations.sqlite3").save_lessons(
        "2026-11-20", {"具体性": "acme の教訓: 具体例を一つ"}, tenant="acme"
    )
    settings = settings_for("embedded", None, api_keys="kA:acme,kB:globex")
    extension = smartao_extension(directory, textlint=False)
    server = LiveServer(create_app(agents=demo_agents(), settings=settings, extensions=[extension])).start()
    acme, globex = {"Authorization": "Bearer kA"}, {"Authorization": "Bearer kB"}
    request = json.dumps({"essay": ESSAY + "\n（テナント別）", "policy": POLICY}, ensure_ascii=False)

    async def rubric_of(headers: dict[str, str]) -> dict[str, Any]:
        _, events = await start_run(http, "smartao", request, headers=headers)
        [chunk] = of_type(events, "rubric")
        return chunk["data"]  # type: ignore[return-value]

    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=httpx.Timeout(20.0)) as http:
            first = await rubric_of(acme)
            assert first["cached"] is False
            assert "acme の教訓" in first["rubric"]["summary"]
            assert (await rubric_of(acme))["cached"] is True  # the tenant's own cache answers
            other = await rubric_of(globex)
            assert other["cached"] is False, "another tenant's essay answered from acme's cache"
            assert "acme の教訓" not in other["rubric"]["summary"]
            assert (await rubric_of(globex))["cached"] is True
    finally:
        server.stop()
