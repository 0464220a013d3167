"""The agent loop (seed 003 ``AgentLoopRunner``): ask the model, run the tools it asks for, repeat,
until a termination policy says stop — then decode the final answer.

A run is made of parts, each in its own module; this one holds the loop and the answer:

- :mod:`kanawa.loop.spec` — :class:`RunSpec`, how the run goes, frozen before it starts;
- :mod:`kanawa.loop.model_call` — the model requests, streaming and compaction (``ModelCaller``);
- :mod:`kanawa.loop.tool_turn` — the tool turn and approvals (``ToolTurns``);
- :mod:`kanawa.loop.policies` / :mod:`kanawa.loop.state` — what a response means, the phases.

Read :meth:`AgentLoopRunner._loop` top to bottom; it is the whole story:

1. the step budget is checked (``max_steps``; ``on_max_steps="finalize"`` withholds tools on the last
   request instead of failing);
2. the request is shaped by the phase (seed 003 ``sendRequest``): in ``tool_use`` with tools, the tools
   go and no response schema; without tools, and in ``final_output``, the response schema goes and no
   tools — never both;
3. the model answers (streamed deltas are yielded as they arrive) and the answer is appended to the
   conversation;
4. the termination policy decides (:meth:`AgentLoopRunner._on_decision`, always a stream of events):
   run tools, think again, decode the output (with the final-output phase and decode retries), or stop.

Tools and pre-processing see the run through one :class:`~kanawa.context.RunContext` (``deps``, step,
usage, messages), made with the runner; it reads the runner's state live, so nothing is updated per step.

Hot-path discipline: one runner per run holds one message list that only grows (the adapter gets it as
a sequence, never a copy), tool specs are built once per run, no trace event is built when the tracer
has no sinks, and a single tool call is awaited directly (no task group).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncGenerator, Awaitable, Sequence
from contextlib import aclosing
from typing import Any, Generic, assert_never

from kanawa.context import RunContext, end_run
from kanawa.loop.approval import Approvals
from kanawa.loop.decoding import DecodeError, OutputDecoder, decoder_for
from kanawa.loop.errors import (
    AgentError,
    GuardrailViolation,
    InvalidLoopState,
    MaxStepsExceeded,
    OutputDecodingFailed,
)
from kanawa.loop.events import (
    AgentStep,
    FinalResponse,
    GuardrailTripped,
    OutputT,
    RunEvent,
    StreamDelta,
    Thinking,
)
from kanawa.loop.hooks import Warnings, combine_hooks
from kanawa.loop.model_call import ModelCaller
from kanawa.loop.policies import (
    ContinueWithThinking,
    ContinueWithTools,
    TerminateImmediately,
    TerminateWithOutput,
    TerminationReason,
    default_policy,
)
from kanawa.loop.result import RunResult
from kanawa.loop.spec import RunSpec
from kanawa.loop.state import AgentLoopState, CompletedPhase, FinalOutputPhase, LoopCounters, ToolUsePhase
from kanawa.loop.tool_turn import ToolTurns
from kanawa.loop.tracing import RunTrace
from kanawa.prompts.library import DEFAULT_PROMPTS
from kanawa.types import (
    LLMResponse,
    Message,
    OutputSchema,
    ToolCall,
    ToolMessage,
    ToolSpec,
    Usage,
    UserMessage,
)

_NO_TOOLS: tuple[ToolSpec, ...] = ()


class AgentLoopRunner(Generic[OutputT]):
    """One run of the loop, consumed with ``async for event in runner``; :attr:`result` afterwards.

    ``spec`` says how the run goes (:class:`~kanawa.loop.spec.RunSpec`: model, tools, output type,
    configuration, guardrails, the caller's options…); the rest is this run's input: ``messages`` is
    the conversation to start from (system message first, if any; the runner copies it once and
    appends to that copy), ``deps`` goes on the run's :attr:`context`, ``approvals`` resumes a run
    that stopped for approval. Errors are :class:`~kanawa.loop.errors.AgentError` subclasses with
    ``partial_result`` set.

    A runner runs once. Breaking out of ``async for`` early leaves it unfinished; call :meth:`aclose`
    (or let it be collected) to close the model stream it may hold.
    """

    # a service holds one runner per run in flight: slots instead of a per-instance dict
    __slots__ = (
        "__weakref__",
        "_caller",
        "_client_names",
        "_decoder",
        "_final",
        "_finalize_round",
        "_gen",
        "_hold_deltas",
        "_hooks",
        "_messages",
        "_offered_tools",
        "_pending",
        "_pending_approvals",
        "_policy",
        "_prompts",
        "_reason",
        "_result",
        "_spec",
        "_specs",
        "_started",
        "_steps",
        "_trace",
        "_turns",
        "agent_name",
        "config",
        "context",
        "run_id",
        "state",
    )

    def __init__(
        self,
        spec: RunSpec[OutputT],
        messages: Sequence[Message],
        *,
        deps: Any = None,
        run_id: str | None = None,
        approvals: Approvals | None = None,
    ) -> None:
        self._spec = spec
        self.config = config = spec.config
        self.run_id = run_id or uuid.uuid4().hex
        self.agent_name = spec.agent_name
        model = spec.model
        tracer = spec.tracer
        self.context: RunContext[Any] = RunContext(
            deps,
            agent_name=spec.agent_name,
            run_id=self.run_id,
            model_name=model.model,
            progress=self,
            handoff_path=spec.handoff_path,
            streaming=spec.stream,
            tracer=tracer,
            options=spec.options,
        )
        self.state = AgentLoopState()
        self._messages: list[Message] = list(messages)
        own = frozenset(t.name for t in spec.tools)
        # the caller's tools are offered beside the agent's own (one of the agent's wins a shared name)
        caller = tuple(tool for tool in spec.client_tools() if tool.name not in own)
        self._specs: tuple[ToolSpec, ...] = (*(t.spec for t in spec.tools), *caller)
        self._client_names = frozenset(tool.name for tool in caller)
        self._decoder: OutputDecoder[OutputT] = decoder_for(spec.output_type)
        self._policy = spec.policy if spec.policy is not None else default_policy(config)
        self._prompts = spec.prompts if spec.prompts is not None else DEFAULT_PROMPTS
        hooks = self._hooks = combine_hooks(spec.guardrails_in_force())
        self._hold_deltas = spec.stream and bool(getattr(hooks, "blocks_output", False))
        self._trace = (
            RunTrace(tracer, agent=spec.agent_name, run_id=self.run_id, model=model.model)
            if tracer is not None and tracer.enabled
            else None
        )
        self._caller = ModelCaller(
            model,
            settings=spec.model_settings(),
            trace=self._trace,
            compaction=spec.compaction,
            tools=self._specs,
        )
        self._turns: ToolTurns[OutputT] | None = None
        self._steps: list[AgentStep[OutputT]] = []
        self._final: FinalResponse[OutputT] | None = None
        self._reason: TerminationReason | str | None = None
        self._pending: tuple[ToolCall, ...] = ()
        self._pending_approvals: tuple[ToolCall, ...] = ()
        self._offered_tools = False
        self._finalize_round = False
        self._result: RunResult[OutputT] | None = None
        self._started = 0.0
        self._gen = self._run(approvals)

    # ------------------------------------------------------------------------------ iteration API

    def __aiter__(self) -> AgentLoopRunner[OutputT]:
        return self

    def __anext__(self) -> Awaitable[RunEvent[OutputT]]:
        return self._gen.__anext__()

    async def aclose(self) -> None:
        """Stop the run early and close the model stream it may hold."""
        await self._gen.aclose()

    @property
    def result(self) -> RunResult[OutputT]:
        """The :class:`RunResult`; raises :class:`InvalidLoopState` until the run has finished."""
        if self._result is None:
            raise InvalidLoopState("the run has not finished: iterate the runner to the end first")
        return self._result

    @property
    def messages(self) -> Sequence[Message]:
        """The conversation so far (live view; do not mutate)."""
        return self._messages

    @property
    def usage(self) -> Usage:
        """Usage summed over the requests made so far."""
        return self._caller.usage

    @property
    def cost(self) -> float | None:
        """USD spent so far (``None`` when a model has no known price; see ``RunResult.cost``)."""
        return self._caller.cost

    @property
    def step(self) -> int:
        """The current step (``state.current_step``): 0 before the first request."""
        return self.state.current_step

    def counters(self) -> LoopCounters:
        """What this run's limits have counted so far (saved with a checkpoint)."""
        return self.state.counters()

    def restore_counters(self, counters: LoopCounters) -> None:
        """Continue the counts of an earlier part of this run (before iterating it): its limits then
        hold for the whole run."""
        self.state.restore(counters)

    def emit(self, event: object) -> None:
        """Queue ``event`` to be yielded from this run's stream (``RunContext.emit``): while a tool
        round runs, queued events are yielded as they come; otherwise after the round."""
        self._tool_turns().emit(event)  # type: ignore[arg-type]  # events of nested runs, typed by the emitter

    # ------------------------------------------------------------------------------------ the loop

    async def _run(self, approvals: Approvals | None) -> AsyncGenerator[RunEvent[OutputT], None]:
        self._started = time.perf_counter()
        spec = self._spec
        if self._trace is not None:
            self._trace.agent_start(
                provider=spec.model.provider, tools=len(self._specs), streamed=spec.stream
            )
        try:
            if spec.preprocess is not None:  # in place: the run's parts hold this list
                self._messages[:] = await spec.preprocess(self._messages, self.context)
            if self._hooks is not None:
                async for warning in self._checked(self._hooks.check_input(self._messages, self.context)):
                    yield warning
            if approvals is not None:
                async with aclosing(self._tool_turns().resume(approvals)) as resumed:
                    async for event in resumed:
                        yield event
            async with aclosing(self._loop()) as events:
                async for event in events:
                    yield event
        except BaseException as exc:
            if self._result is None:  # not an early exit of a consumer after the run had finished
                self._fail(exc)
            raise
        finally:
            end_run(self.context)  # the context keeps the run's last state, not this runner
            self._turns = None  # it calls back into this runner: no cycle outlives the run

    async def _loop(self) -> AsyncGenerator[RunEvent[OutputT], None]:
        """One model request per turn of the loop, then the policy's decision: the request
        (:class:`~kanawa.loop.model_call.ModelCaller`), then :meth:`_on_decision` — the tools
        (:class:`~kanawa.loop.tool_turn.ToolTurns`) or the answer (:meth:`_on_answer`). A phase that
        ends the run sets the termination reason."""
        while self._reason is None:
            step = self._next_step()
            tools, schema = self._shape_request(step)
            hooks = self._hooks
            if hooks is not None:
                async for warning in self._checked(hooks.before_request(step, self.context)):
                    yield warning
            held: list[StreamDelta] = []
            if self._spec.stream:
                response: LLMResponse | None = None
                asked = self._caller.ask_streamed(
                    step, self._messages, tools, schema, held if self._hold_deltas else None
                )
                async with aclosing(asked) as stream:
                    async for item in stream:
                        if isinstance(item, LLMResponse):
                            response = item
                        else:
                            yield item
                assert response is not None
            else:
                response = await self._caller.ask(step, self._messages, tools, schema)
            self._messages.append(response.message)
            if hooks is not None:
                async for warning in self._checked(hooks.after_response(step, response, self.context)):
                    yield warning
            async with aclosing(self._on_decision(step, response, bool(tools), held)) as decided:
                async for event in decided:
                    yield event

    def _next_step(self) -> int:
        """Seed 003's step budget: the request past ``max_steps`` fails the run."""
        if self.state.current_step >= self.config.max_steps:
            raise MaxStepsExceeded(self.config.max_steps)
        return self.state.increment_step()

    # ----------------------------------------------------------------------------- the decisions

    async def _on_decision(
        self, step: int, response: LLMResponse, offered_tools: bool, held: list[StreamDelta]
    ) -> AsyncGenerator[RunEvent[OutputT], None]:
        """Seed 003's termination policy decides what the response means: run its tools, think again,
        decode the answer, or stop; the events come as the work runs. Deltas held back for an output
        guardrail go out first unless the response is the answer."""
        decision = self._policy.decide(response, self.state)
        if isinstance(decision, TerminateWithOutput):
            if self._spec.postprocess is None and self._hooks is None:  # so nothing is held back
                yield self._answered(self._on_output(step, decision.text))
                return
            async with aclosing(self._on_answer(step, decision.text, held)) as answered:
                async for event in answered:
                    yield event
            return
        for delta in held:  # not an answer: nothing to hold back
            yield delta
        if isinstance(decision, ContinueWithTools):
            turns = self._tool_turns()
            plain = turns.plain(step, decision.calls, offered_tools)
            if plain is not None:
                for event in await plain:
                    yield event
                return
            async with aclosing(turns.take(step, decision.calls, offered_tools)) as turn:
                async for event in turn:
                    yield event
        elif isinstance(decision, ContinueWithThinking):
            yield self._record(Thinking(step, "policy", text=response.message.text))
        elif isinstance(decision, TerminateImmediately):
            self._answer_unrun_calls(response, decision.reason)
            self._finish(decision.reason)
        else:
            assert_never(decision)

    async def _on_answer(
        self, step: int, text: str, held: list[StreamDelta]
    ) -> AsyncGenerator[RunEvent[OutputT], None]:
        """The model answered: decode it (or ask again for the structured answer), pass the output
        guardrails, then show the held deltas and the :class:`FinalResponse` and finish the run."""
        outcome = self._on_output(step, text)
        if isinstance(outcome, Thinking):
            for delta in held:
                yield delta
            yield self._record(outcome)
            return
        if self._spec.postprocess is not None:
            outcome = await self._spec.postprocess(outcome)
        if self._hooks is not None:
            async for warning in self._checked(self._hooks.check_output(outcome, self.context)):
                yield warning
        for delta in held:  # the answer passed the output guardrails: now it may be shown
            yield delta
        self._final = outcome
        self._record(outcome)
        self._finish(
            TerminationReason.MAX_STEPS_FINALIZED if self._finalize_round else TerminationReason.COMPLETED
        )
        yield outcome

    def _answered(self, outcome: FinalResponse[OutputT] | Thinking) -> RunEvent[OutputT]:
        """An answer with nothing to await and no deltas held back (no postprocessing, no hooks): its
        step, recorded; a :class:`FinalResponse` also finishes the run (what :meth:`_on_answer` does
        for it, without an async generator)."""
        if isinstance(outcome, Thinking):
            return self._record(outcome)
        self._final = outcome
        self._record(outcome)
        self._finish(
            TerminationReason.MAX_STEPS_FINALIZED if self._finalize_round else TerminationReason.COMPLETED
        )
        return outcome

    def _tool_turns(self) -> ToolTurns[OutputT]:
        """The run's tool side, made at its first use (a run that never calls a tool never makes it)."""
        turns = self._turns
        if turns is None:
            turns = self._turns = ToolTurns(
                self._spec,
                client_names=self._client_names,
                run=(self.context, self.state, self._messages),
                trace=self._trace,
                hooks=self._hooks,
                callbacks=(self._record, self._stop, self._checked),
            )
        return turns

    # ---------------------------------------------------------------------------------- guardrails

    async def _checked(
        self, check: Awaitable[Warnings], unanswered: Sequence[ToolCall] = ()
    ) -> AsyncGenerator[GuardrailTripped, None]:
        """Yield a hook's warnings; on a block, yield its event, answer ``unanswered`` calls (so the
        history stays valid) and raise the :class:`GuardrailViolation`."""
        try:
            warnings = await check
        except GuardrailViolation as blocked:
            for call in unanswered:
                self._messages.append(
                    ToolMessage(
                        call.id, f"blocked by guardrail {blocked.guardrail!r}", is_error=True, name=call.name
                    )
                )
            for event in (*blocked.preceding, blocked.event):
                self._record(event)
                yield event
            raise
        for warning in warnings:
            self._record(warning)
            yield warning

    # ------------------------------------------------------------------------------------ requests

    def _shape_request(self, step: int) -> tuple[Sequence[ToolSpec], OutputSchema | None]:
        """Seed 003 ``sendRequest``: which tools and which response schema this request carries."""
        phase = self.state.phase
        if isinstance(phase, ToolUsePhase):
            if self._specs:
                if self.config.on_max_steps == "finalize" and step >= self.config.max_steps:
                    self._finalize_round = True
                    self._offered_tools = False
                    self._messages.append(
                        UserMessage(self._prompts.get("max_steps_finalize", lang=self.config.prompt_language))
                    )
                    return _NO_TOOLS, self._decoder.schema
                self._offered_tools = True
                return self._specs, None
            self._offered_tools = False
            return _NO_TOOLS, self._decoder.schema
        if isinstance(phase, FinalOutputPhase):
            self._offered_tools = False
            return _NO_TOOLS, self._decoder.schema
        if isinstance(phase, CompletedPhase):
            raise InvalidLoopState("a model request was attempted after the loop completed")
        assert_never(phase)

    # ------------------------------------------------------------------------------ final output

    def _on_output(self, step: int, text: str) -> FinalResponse[OutputT] | Thinking:
        """Seed 003 ``decodeFinalOutput``: answer, ask for the structured answer, retry, or fail."""
        decoder = self._decoder
        phase = self.state.phase
        if isinstance(phase, ToolUsePhase):
            if decoder.is_text:
                return self._complete(step, text)
            if self._offered_tools:
                self.state.phase = FinalOutputPhase(retry_count=0)
                self._messages.append(
                    UserMessage(
                        self._prompts.get(
                            "final_output_request",
                            lang=self.config.prompt_language,
                            schema=decoder.schema_json,
                        )
                    )
                )
                return Thinking(step, "final_output_request", text=text)
            try:
                return self._complete(step, text)
            except DecodeError as exc:
                raise OutputDecodingFailed(decoder.type_name, exc.errors, text=text, attempts=1) from None
        if isinstance(phase, FinalOutputPhase):
            try:
                return self._complete(step, text)
            except DecodeError as exc:
                budget_left = step < self.config.max_steps or self.config.on_max_steps == "error"
                if phase.retry_count < self.config.max_decode_retries and budget_left:
                    self.state.phase = FinalOutputPhase(retry_count=phase.retry_count + 1)
                    self._messages.append(
                        UserMessage(
                            self._prompts.get(
                                "final_output_retry",
                                lang=self.config.prompt_language,
                                error=exc.errors,
                                schema=decoder.schema_json,
                            )
                        )
                    )
                    return Thinking(step, "decode_retry", text=text)
                raise OutputDecodingFailed(
                    decoder.type_name, exc.errors, text=text, attempts=phase.retry_count + 1
                ) from None
        if isinstance(phase, CompletedPhase):
            raise InvalidLoopState("the loop had already completed when another output arrived")
        assert_never(phase)

    def _complete(self, step: int, text: str) -> FinalResponse[OutputT]:
        output = self._decoder.decode(text)
        self.state.mark_completed()
        return FinalResponse(step, output, text, self._caller.usage)

    # --------------------------------------------------------------------------------- bookkeeping

    def _record(self, step: AgentStep[OutputT]) -> AgentStep[OutputT]:
        self._steps.append(step)
        return step

    def _finish(self, reason: TerminationReason | str) -> None:
        """End the run: build the result *before* the last events are yielded, so a consumer that
        stops at the ``FinalResponse`` can already read :attr:`result`."""
        self._reason = reason
        self.state.mark_completed()
        self._result = result = self._build_result()
        if self._trace is not None:
            self._trace.agent_end(
                usage=result.usage,
                steps=self.state.current_step,
                duration_ms=(time.perf_counter() - self._started) * 1000.0,
                termination_reason=str(reason),
            )

    def _stop(
        self, reason: TerminationReason, pending: tuple[ToolCall, ...], approvals: tuple[ToolCall, ...]
    ) -> None:
        """The tool side ends the run: with calls left pending, or waiting for approval."""
        self._pending = pending
        self._pending_approvals = approvals
        self._finish(reason)

    def _fail(self, exc: BaseException) -> None:
        if isinstance(exc, AgentError):
            exc.partial_result = self._build_result()
        if self._trace is not None:
            self._trace.agent_end(
                usage=self._caller.usage,
                steps=self.state.current_step,
                duration_ms=(time.perf_counter() - self._started) * 1000.0,
                termination_reason=None if self._reason is None else str(self._reason),
                error=exc,
            )

    def _answer_unrun_calls(self, response: LLMResponse, reason: TerminationReason | str) -> None:
        """Give every tool call of the last turn an error answer, so ``messages`` stays a valid history
        (providers reject a tool call without a result) when the run stops before running them."""
        for call in response.message.tool_calls:
            self._messages.append(
                ToolMessage(
                    call.id,
                    f"tool call not executed: the run was stopped ({reason})",
                    is_error=True,
                    name=call.name,
                )
            )

    def _build_result(self) -> RunResult[OutputT]:
        final = self._final
        return RunResult(
            output=None if final is None else final.output,
            text="" if final is None else final.text,
            usage=self._caller.usage,
            steps=self._steps,
            messages=self._messages,
            termination_reason=self._reason if self._reason is not None else "error",
            run_id=self.run_id,
            pending_tool_calls=self._pending,
            pending_approvals=self._pending_approvals,
            cost=self._caller.cost,
        )


__all__ = ["AgentLoopRunner"]
