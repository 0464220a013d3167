"""Datasets from what already happened: recorded ``kanawa.trace`` JSONL files and a served agent's runs.

This is how a production failure becomes a case. Traces and served chunks never hold the user's
prompt (kanawa does not trace prompts), so the input comes from the caller — a mapping from run id
to input, or a function of the run — and a run with no input is reported, not guessed. What the run
did is kept on the case: its tool trajectory (optionally as a ``tool_calls`` scorer that pins it),
the recorded output (optionally as ``expected_output``, for regression "golden" cases), its error
and termination reason in ``metadata``.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path
from typing import Any, TypeAlias

from kanawa.evals.cases import Case, Dataset, ScorerSpec
from kanawa.trace.records import TraceLog, TraceRecord, read_trace

InputsSource: TypeAlias = Mapping[str, Any] | Callable[["RecordedRun"], Any] | None
"""Where a run's input comes from: ``{run_id: input}`` or ``fn(run) -> input`` (``None``: unknown)."""


class MissingInputsError(ValueError):
    """Some runs have no input to replay; ``run_ids`` says which."""

    def __init__(self, run_ids: Sequence[str]) -> None:
        self.run_ids = list(run_ids)
        shown = ", ".join(self.run_ids[:5]) + (" …" if len(self.run_ids) > 5 else "")
        super().__init__(
            f"no input for {len(self.run_ids)} run(s): {shown} — traces do not keep prompts; "
            "pass inputs={run_id: input} (or skip_missing=True)"
        )


@dataclass
class RecordedRun:
    """One run as recorded: its id, agent, how it ended, the tools it called (with arguments when
    the source has them) and its final output when the source has it."""

    run_id: str
    agent: str
    source: str
    _: KW_ONLY
    termination_reason: str | None = None
    error: str | None = None
    output: Any = None
    tools: list[dict[str, Any]] = field(default_factory=list)
    input: Any = None
    finished: bool = False

    @property
    def failed(self) -> bool:
        """Errored, ended other than ``completed``, or never ended (cut off mid-run)."""
        return not self.finished or self.error is not None or self.termination_reason != "completed"


def runs_from_trace(log: TraceLog) -> list[RecordedRun]:
    """The top-level runs of a trace (nested runs' tool calls stay with their own run ids)."""
    runs: dict[str, RecordedRun] = {}
    source = str(log.path) if log.path else "trace"
    for record in log.records:
        if not record.run_id:
            continue
        run = runs.get(record.run_id)
        if run is None:
            run = runs[record.run_id] = RecordedRun(record.run_id, record.agent, source)
        _apply(run, record)
    return list(runs.values())


def _apply(run: RecordedRun, record: TraceRecord) -> None:
    if record.event == "agent_start" and "input" in record.data:
        run.input = record.data["input"]
    elif record.event == "tool_start" and record.tool:
        tool: dict[str, Any] = {"name": record.tool}
        if "arguments" in record.data:
            tool["args"] = record.data["arguments"]
        run.tools.append(tool)
    elif record.event == "agent_end":
        run.finished = True
        reason = record.data.get("termination_reason")
        run.termination_reason = reason if isinstance(reason, str) else None
        run.error = record.error
        if record.result is not None:
            run.output = record.result


def dataset_from_runs(
    runs: Sequence[RecordedRun],
    *,
    name: str,
    inputs: InputsSource = None,
    failed_only: bool = False,
    keep_output: bool = False,
    pin_trajectory: bool = False,
    skip_missing: bool = False,
) -> Dataset[Any, Any]:
    """Turn recorded runs into cases (see the module docstring for what each option keeps)."""
    cases: list[Case[Any, Any]] = []
    missing: list[str] = []
    for run in runs:
        if failed_only and not run.failed:
            continue
        value = _input_for(run, inputs)
        if value is None:
            missing.append(run.run_id)
            continue
        scorers: list[Any] = []
        if pin_trajectory:
            scorers.append(
                ScorerSpec.model_validate(
                    {"type": "tool_calls", "expected": [t["name"] for t in run.tools], "mode": "exact"}
                )
            )
        metadata = {
            "source": run.source,
            "run_id": run.run_id,
            "agent": run.agent,
            "termination_reason": run.termination_reason,
            "error": run.error,
            "tools": [t["name"] for t in run.tools],
        }
        if run.output is not None:
            metadata["recorded_output"] = run.output
        cases.append(
            Case(
                name=f"{run.agent or 'run'}-{run.run_id[:12]}",
                inputs=value,
                expected_output=run.output if keep_output else None,
                metadata=metadata,
                scorers=scorers,
            )
        )
    if missing and not skip_missing:
        raise MissingInputsError(missing)
    return Dataset[Any, Any](name=name, cases=cases)


def _input_for(run: RecordedRun, inputs: InputsSource) -> Any:
    if callable(inputs):
        return inputs(run)
    if inputs is not None and run.run_id in inputs:
        return inputs[run.run_id]
    return run.input


def dataset_from_traces(
    traces: Sequence[str | os.PathLike[str] | TraceLog],
    *,
    name: str = "from-traces",
    inputs: InputsSource = None,
    failed_only: bool = False,
    keep_output: bool = False,
    pin_trajectory: bool = False,
    skip_missing: bool = False,
) -> Dataset[Any, Any]:
    """A dataset from JSONL trace files (or already read :class:`TraceLog` objects)."""
    runs: list[RecordedRun] = []
    for trace in traces:
        log = trace if isinstance(trace, TraceLog) else read_trace(Path(trace))
        runs.extend(runs_from_trace(log))
    return dataset_from_runs(
        runs,
        name=name,
        inputs=inputs,
        failed_only=failed_only,
        keep_output=keep_output,
        pin_trajectory=pin_trajectory,
        skip_missing=skip_missing,
    )


# --- served runs -------------------------------------------------------------------------------


def parse_sse_chunks(body: str) -> list[dict[str, Any]]:
    """The chunk objects in a kanawa SSE body (``data:`` lines; comments and pings ignored)."""
    chunks: list[dict[str, Any]] = []
    for block in body.replace("\r\n", "\n").split("\n\n"):
        data = "\n".join(line[5:].lstrip() for line in block.split("\n") if line.startswith("data:"))
        if not data:
            continue
        try:
            chunk = json.loads(data)
        except json.JSONDecodeError:
            continue
        if isinstance(chunk, dict):
            chunks.append(chunk)
    return chunks


def run_from_chunks(run_id: str, info: Mapping[str, Any], chunks: Sequence[Mapping[str, Any]]) -> RecordedRun:
    """A served run from its ``GET /v1/runs/{id}`` info and its chunks (top-level agent only)."""
    run = RecordedRun(
        run_id,
        str(info.get("agent", "")),
        "served",
        termination_reason=info.get("termination_reason"),
    )
    for chunk in chunks:
        data = chunk.get("data")
        if not isinstance(data, Mapping) or "depth" in data:
            continue
        kind = chunk.get("type")
        if kind == "tool_call":
            arguments: Any = data.get("arguments")
            if isinstance(arguments, str):
                with contextlib.suppress(json.JSONDecodeError):
                    arguments = json.loads(arguments)
            run.tools.append({"name": str(data.get("name")), "args": arguments})
        elif kind == "final":
            run.output = data.get("output")
        elif kind == "error":
            run.error = f"{data.get('code')}: {data.get('message')}"
        elif kind == "done":
            run.finished = True
            status = data.get("status")
            if run.termination_reason is None:
                run.termination_reason = status if isinstance(status, str) else None
    return run


async def afetch_served_run(client: Any, run_id: str) -> RecordedRun:
    """Fetch one served run's info and chunks with an ``httpx.AsyncClient`` pointed at the server."""
    info = await client.get(f"/v1/runs/{run_id}")
    if info.status_code in {404, 422}:
        raise LookupError(f"the server has no run {run_id!r} (or it belongs to another key)")
    if info.status_code != 200:
        raise LookupError(f"GET /v1/runs/{run_id} answered {info.status_code}")
    events = await client.get(f"/v1/runs/{run_id}/events", headers={"Accept": "text/event-stream"})
    if events.status_code not in {200, 204}:
        raise LookupError(f"GET /v1/runs/{run_id}/events answered {events.status_code}")
    chunks = parse_sse_chunks(events.text) if events.status_code != 204 else []
    return run_from_chunks(run_id, info.json(), chunks)


async def adataset_from_served_runs(
    base_url: str,
    run_ids: Sequence[str],
    *,
    name: str = "from-served-runs",
    headers: Mapping[str, str] | None = None,
    inputs: InputsSource = None,
    failed_only: bool = False,
    keep_output: bool = False,
    pin_trajectory: bool = False,
    skip_missing: bool = False,
) -> Dataset[Any, Any]:
    """A dataset from runs a ``kanawa serve`` server kept (its store's retention decides how long)."""
    import httpx

    async with httpx.AsyncClient(base_url=base_url, headers=dict(headers or {}), timeout=30.0) as client:
        runs = [await afetch_served_run(client, run_id) for run_id in run_ids]
    return dataset_from_runs(
        runs,
        name=name,
        inputs=inputs,
        failed_only=failed_only,
        keep_output=keep_output,
        pin_trajectory=pin_trajectory,
        skip_missing=skip_missing,
    )


__all__ = [
    "InputsSource",
    "MissingInputsError",
    "RecordedRun",
    "adataset_from_served_runs",
    "afetch_served_run",
    "dataset_from_runs",
    "dataset_from_traces",
    "parse_sse_chunks",
    "run_from_chunks",
    "runs_from_trace",
]
