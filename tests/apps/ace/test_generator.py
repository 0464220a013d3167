"""Seed 004 "GeneratorAgent", "Error Handling" and Correctness Property 4."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kanawa import FunctionLLM, RunContext, ScriptedLLM
from kanawa.apps.ace.generator import GeneratorAgent, GeneratorDeps, parse_answer
from kanawa.apps.ace.playbook import Playbook
from kanawa.apps.ace.prompt_builder import PromptBuilder
from kanawa.apps.ace.search.hybrid import HybridSearch
from kanawa.apps.ace.search.models import SearchQuery, SearchResult
from kanawa.apps.ace.store.json_store import JsonPlaybookStore
from kanawa.llm.errors import LLMRateLimitError
from kanawa.llm.testing.models import ModelRequest
from kanawa.types import AssistantMessage, ToolCall


def _json(final: str, ids: list[str], reasoning: list[str] | None = None) -> str:
    return json.dumps(
        {"reasoning": reasoning or ["look at the bullets"], "bullet_ids": ids, "final_answer": final}
    )


@pytest.fixture
async def store(tmp_path: Path, playbook: Playbook) -> JsonPlaybookStore:
    store = JsonPlaybookStore(root=tmp_path / "playbooks")
    await store.asave("appworld", playbook)
    return store


def _generator(store: JsonPlaybookStore, llm: object, **kwargs: object) -> GeneratorAgent:
    return GeneratorAgent(store, HybridSearch(embedder=None), llm, PromptBuilder(prompts_dir=None), **kwargs)  # type: ignore[arg-type]


async def test_run_follows_the_seed_flow_and_returns_a_success_trajectory(store: JsonPlaybookStore) -> None:
    llm = ScriptedLLM([_json("Page until empty.", ["shr-00001"], ["Paging advice applies"])])
    trajectory = await _generator(store, llm).arun("How do I list every page of results?", "appworld")
    assert trajectory.status == "success"
    assert trajectory.error_message is None
    assert trajectory.generated_answer == "Page until empty."
    assert trajectory.used_bullet_ids == ["shr-00001"]
    assert trajectory.reasoning_steps[0] == "Loaded the 'appworld' playbook (5 bullets)"
    assert trajectory.reasoning_steps[1].startswith("Retrieved ")
    assert "shr-00001" in trajectory.reasoning_steps[1]
    assert trajectory.reasoning_steps[-1] == "Paging advice applies"
    prompt = llm.requests[0].last_user_text
    assert "How do I list every page of results?" in prompt
    assert "[shr-00001] Always page through" in prompt
    assert llm.requests[0].response_schema is not None  # structured output asked for


async def test_used_bullet_ids_only_lists_ids_that_exist(store: JsonPlaybookStore) -> None:
    llm = ScriptedLLM([_json("x", ["shr-00001", "zzz-99999", "shr-00001", "not an id"])])
    trajectory = await _generator(store, llm).arun("paging", "appworld")
    assert trajectory.used_bullet_ids == ["shr-00001"]


async def test_llm_failure_gives_failure_trajectory_not_exception(store: JsonPlaybookStore) -> None:
    llm = ScriptedLLM([LLMRateLimitError("slow down", provider="test", model="test")])
    trajectory = await _generator(store, llm).arun("paging", "appworld")
    assert trajectory.status == "failure"
    assert trajectory.error_message is not None
    assert "slow down" in trajectory.error_message
    assert trajectory.generated_answer == ""
    assert trajectory.used_bullet_ids == []


async def test_search_failure_gives_failure_trajectory(store: JsonPlaybookStore) -> None:
    class BrokenSearch(HybridSearch):
        async def asearch(self, query: SearchQuery, playbook: Playbook) -> list[SearchResult]:
            raise RuntimeError("index unavailable")

    generator = GeneratorAgent(
        store, BrokenSearch(embedder=None), ScriptedLLM(["x"]), PromptBuilder(prompts_dir=None)
    )
    trajectory = await generator.arun("paging", "appworld")
    assert trajectory.status == "failure"
    assert trajectory.error_message == "RuntimeError: index unavailable"


async def test_empty_playbook_still_runs_with_empty_context(tmp_path: Path) -> None:
    llm = ScriptedLLM([_json("fine", [])])
    trajectory = await _generator(JsonPlaybookStore(root=tmp_path), llm).arun("anything", "new-dataset")
    assert trajectory.status == "success"
    assert "Retrieved no bullets" in trajectory.reasoning_steps[1]


async def test_prose_answer_is_read_tolerantly_with_id_extraction(store: JsonPlaybookStore) -> None:
    llm = FunctionLLM(lambda request: "Following shr-00002 and api-00003: log in first. Also xyz-12345.")
    trajectory = await _generator(store, llm).arun("log in", "appworld")
    assert trajectory.status == "success"
    assert trajectory.generated_answer.startswith("Following shr-00002")
    assert trajectory.used_bullet_ids == ["shr-00002", "api-00003"]
    assert any("did not answer in the requested JSON" in step for step in trajectory.reasoning_steps)


def test_parse_answer_finds_a_json_object_inside_prose() -> None:
    answer, reasoning, ids = parse_answer(
        'Sure! {"reasoning": ["a"], "bullet_ids": ["x-00001"], "final_answer": "42"} ok'
    )
    assert (answer, reasoning, ids) == ("42", ["a"], ["x-00001"])


async def test_generator_is_a_tool_using_agent_with_run_context_deps(store: JsonPlaybookStore) -> None:
    seen: list[str] = []

    def playbook_size(ctx: RunContext[GeneratorDeps]) -> int:
        """How many bullets the playbook has."""
        seen.append(ctx.deps.dataset)
        return len(ctx.deps.playbook)

    def respond(request: ModelRequest) -> AssistantMessage | str:
        if not request.tool_results:
            return AssistantMessage(
                tool_calls=[
                    ToolCall("c1", "playbook_size", "{}"),
                    ToolCall("c2", "search_playbook", json.dumps({"query": "レート制限"})),
                ]
            )
        return _json("done", [])

    trajectory = await _generator(store, FunctionLLM(respond), tools=[playbook_size], search_tool=True).arun(
        "rate limits", "appworld"
    )
    assert seen == ["appworld"]
    assert trajectory.status == "success"
    assert any(step.startswith("Called tool playbook_size") for step in trajectory.reasoning_steps)
    assert "aup-00004" in trajectory.used_bullet_ids  # found by the model's own search


_responses = st.text(max_size=200).filter(lambda s: '"final_answer"' not in s)


# Feature: generator-agent, Property 4: LLM応答からのTrajectory構造化
@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(response=_responses)
async def test_property_4_any_llm_response_becomes_a_success_trajectory(
    tmp_path: Path, response: str
) -> None:
    store = JsonPlaybookStore(root=tmp_path / "p4")
    trajectory = await _generator(store, FunctionLLM(lambda request: response)).arun("task", "appworld")
    assert trajectory.status == "success"
    assert trajectory.generated_answer == response  # the whole reply (`in` would pass "" for anything)


# Feature: generator-agent, Property 4: LLM応答からのTrajectory構造化 (structured form)
@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(final=st.text(max_size=200))
async def test_property_4_structured_response_answer_is_the_final_answer(tmp_path: Path, final: str) -> None:
    store = JsonPlaybookStore(root=tmp_path / "p4s")
    trajectory = await _generator(store, FunctionLLM(lambda request: _json(final, []))).arun(
        "task", "appworld"
    )
    assert trajectory.status == "success"
    assert trajectory.generated_answer == final
