"""The agent loop (seed 003 ``AgentLoopRunner``): ask the model, run the tools it asks for, repeat,
until a termination policy says stop — then decode the final answer.

Read :meth:`AgentLoopRunner._run` top to bottom; it is the whole story:

1. the step budget is checked (``max_steps``; ``on_max_steps="finalize"`` withholds tools on the last
   request instead of failing);
2. the request is shaped by the phase (seed 003 ``sendRequest``): in ``tool_use`` with tools, the tools
   go and no response schema; without tools, and in ``final_output``, the response schema goes and no
   tools — never both;
3. the model answers (``adapter.stream`` when streaming, whose deltas are yielded as they arrive;
   ``adapter.chat`` otherwise) and the answer is appended to the conversation — with ``compaction=``,
   the history is first compacted when it has grown past the trigger, and a context-length refusal
   compacts once more and is retried once (:mod:`kanawa.loop.compaction`);
4. the termination policy decides: run tools (all of one turn concurrently, then
   ``ToolCallStep``/``ToolResultStep`` pairs in call order), think again, decode the output (with the
   final-output phase and decode retries), or stop. Only tools the request offered ever run: a call
   the model makes in a request that offered no tools (final output, the ``finalize`` round) is
   answered as an unknown tool. Identical calls inside one response run once and share the result.

Tools and pre-processing see the run through one :class:`~kanawa.context.RunContext` (``deps``, step,
usage, messages), made with the runner; it reads the runner's state live, so nothing is updated per step.

Hot-path discipline: one runner per run holds one message list that only grows (the adapter gets it as
a sequence, never a copy), tool specs are built once per run, no trace event is built when the tracer
has no sinks, and a single tool call is awaited directly (no task group).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from contextlib import aclosing, suppress
from typing import TYPE_CHECKING, Any, Generic, assert_never

from kanawa.context import RunContext, end_run
from kanawa.llm.adapter import LLMAdapter
from kanawa.llm.errors import is_context_length_error
from kanawa.llm.settings import ModelSettings
from kanawa.loop.approval import ApprovalPolicy, Approvals, plan_resume, rejected_result
from kanawa.loop.config import AgentConfiguration
from kanawa.loop.decoding import DecodeError, OutputDecoder, decoder_for
from kanawa.loop.errors import (
    AgentError,
    GuardrailViolation,
    InvalidLoopState,
    LLMCallFailed,
    MaxStepsExceeded,
    OutputDecodingFailed,
    raise_for_tool_result,
)
from kanawa.loop.events import (
    AgentStep,
    ApprovalRequired,
    FinalResponse,
    GuardrailTripped,
    HandoffEnded,
    HandoffStarted,
    OutputT,
    RunEvent,
    StreamDelta,
    Thinking,
    ToolCallStep,
    ToolResultStep,
)
from kanawa.loop.hooks import RunHooks, Warnings, combine_hooks
from kanawa.loop.model_call import ModelCaller
from kanawa.loop.options import RunOptions
from kanawa.loop.policies import (
    ContinueWithThinking,
    ContinueWithTools,
    TerminateImmediately,
    TerminateWithOutput,
    TerminationPolicy,
    TerminationReason,
    default_policy,
)
from kanawa.loop.result import RunResult
from kanawa.loop.state import AgentLoopState, CompletedPhase, FinalOutputPhase, LoopCounters, ToolUsePhase
from kanawa.loop.tool_executor import ToolExecutor
from kanawa.loop.tracing import RunTrace
from kanawa.prompts.library import DEFAULT_PROMPTS, PromptLibrary
from kanawa.tools.base import Tool, ToolResult
from kanawa.trace.events import Tracer
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

if TYPE_CHECKING:  # imported when a run has compaction: most runs never load it
    from kanawa.loop.compaction.compactor import Compactor
    from kanawa.loop.compaction.settings import Compaction

Preprocess = Callable[[list[Message], RunContext[Any]], Awaitable[list[Message]]]
"""Rewrites the conversation once, before the first request (dynamic instructions,
``Agent._preprocess_messages``); it gets the run's context."""

Postprocess = Callable[[FinalResponse[OutputT]], Awaitable[FinalResponse[OutputT]]]
"""Rewrites the final response before it is yielded and recorded (``BaseAgent._postprocess_response``)."""

_NO_TOOLS: tuple[ToolSpec, ...] = ()
_NONE_OFFERED: frozenset[str] = frozenset()


class AgentLoopRunner(Generic[OutputT]):
    """One run of the loop, consumed with ``async for event in runner``; :attr:`result` afterwards.

    ``messages`` is the conversation to start from (system message first, if any); the runner copies it
    once and appends to that copy. ``output_type=str`` means a plain-text answer; any other type is
    decoded with pydantic (:mod:`kanawa.loop.decoding`). Errors are :class:`~kanawa.loop.errors.AgentError`
    subclasses with ``partial_result`` set. ``deps`` goes on the run's :attr:`context`. ``guardrails``
    are checked in order at every boundary of the run (:class:`~kanawa.loop.hooks.RunHooks`; the
    agent's ``guardrails=``).

    A runner runs once. Breaking out of ``async for`` early leaves it unfinished; call :meth:`aclose`
    (or let it be collected) to close the model stream it may hold.
    """

    # a service holds one runner per run in flight: slots instead of a per-instance dict of ~40 keys
    __slots__ = (
        "__weakref__",
        "_approval_names",
        "_approval_policy",
        "_approvals",
        "_asks_approval",
        "_caller",
        "_client_names",
        "_compactor",
        "_decoder",
        "_executor",
        "_final",
        "_finalize_round",
        "_gen",
        "_hold_deltas",
        "_hooks",
        "_messages",
        "_model",
        "_offered_names",
        "_offered_tools",
        "_pending",
        "_pending_approvals",
        "_policy",
        "_postprocess",
        "_preprocess",
        "_prompts",
        "_reason",
        "_result",
        "_side",
        "_side_ready",
        "_specs",
        "_started",
        "_steps",
        "_streaming",
        "_tools",
        "_tools_emit",
        "_trace",
        "agent_name",
        "config",
        "context",
        "run_id",
        "state",
    )

    def __init__(
        self,
        model: LLMAdapter,
        messages: Sequence[Message],
        *,
        tools: Sequence[Tool] = (),
        output_type: type[OutputT] = str,  # type: ignore[assignment]  # default applies when OutputT=str
        config: AgentConfiguration | None = None,
        settings: ModelSettings | None = None,
        stream: bool = False,
        tracer: Tracer | None = None,
        policy: TerminationPolicy | None = None,
        prompts: PromptLibrary | None = None,
        agent_name: str = "agent",
        run_id: str | None = None,
        preprocess: Preprocess | None = None,
        postprocess: Postprocess[OutputT] | None = None,
        deps: Any = None,
        guardrails: Sequence[RunHooks] = (),
        approval_policy: ApprovalPolicy | None = None,
        approvals: Approvals | None = None,
        handoff_path: tuple[str, ...] = (),
        options: RunOptions | None = None,
        client_tools: Sequence[ToolSpec] = (),
        compaction: Compaction | None = None,
    ) -> None:
        self.config = config if config is not None else AgentConfiguration()
        self.run_id = run_id or uuid.uuid4().hex
        self.agent_name = agent_name
        self.context: RunContext[Any] = RunContext(
            deps,
            agent_name=agent_name,
            run_id=self.run_id,
            model_name=model.model,
            progress=self,
            handoff_path=handoff_path,
            streaming=stream,
            tracer=tracer,
            options=options,
        )
        self.state = AgentLoopState()
        self._model = model
        self._messages: list[Message] = list(messages)
        self._tools = tuple(tools)
        self._executor: ToolExecutor | None = None
        own = frozenset(t.name for t in tools)
        # the caller's tools are offered beside the agent's own (one of the agent's wins a shared name)
        caller = tuple(spec for spec in client_tools if spec.name not in own)
        self._specs: tuple[ToolSpec, ...] = (*(t.spec for t in tools), *caller)
        self._offered_names = own
        self._client_names = frozenset(spec.name for spec in caller)
        self._decoder: OutputDecoder[OutputT] = decoder_for(output_type)
        self._streaming = stream
        self._policy = policy if policy is not None else default_policy(self.config)
        self._prompts = prompts if prompts is not None else DEFAULT_PROMPTS
        self._preprocess = preprocess
        self._postprocess = postprocess
        hooks = self._hooks = combine_hooks(guardrails)
        self._approval_policy = approval_policy
        self._approval_names = frozenset(t.name for t in tools if t.requires_approval)
        self._asks_approval = approval_policy is not None or bool(self._approval_names)
        self._approvals = approvals
        self._pending_approvals: tuple[ToolCall, ...] = ()
        self._side: list[RunEvent[OutputT]] = []  # rarely used: an empty list, not a deque block
        self._side_ready: asyncio.Event | None = None
        self._tools_emit = any(t.takes_context for t in tools)
        self._hold_deltas = stream and bool(getattr(hooks, "blocks_output", False))
        self._trace = (
            RunTrace(tracer, agent=agent_name, run_id=self.run_id, model=model.model)
            if tracer is not None and tracer.enabled
            else None
        )
        self._steps: list[AgentStep[OutputT]] = []
        compactor: Compactor | None = None
        if compaction is not None:
            from kanawa.loop.compaction.compactor import Compactor

            compactor = Compactor(compaction, model, tools=self._specs, settings=settings)
            settings = compactor.settings
        self._compactor = compactor
        self._caller = ModelCaller(model, settings=settings, trace=self._trace)
        self._final: FinalResponse[OutputT] | None = None
        self._reason: TerminationReason | str | None = None
        self._pending: tuple[ToolCall, ...] = ()
        self._offered_tools = False
        self._finalize_round = False
        self._result: RunResult[OutputT] | None = None
        self._started = 0.0
        self._gen = self._run()

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
        return self._total_usage()

    @property
    def cost(self) -> float | None:
        """USD spent so far (``None`` when a model has no known price; see ``RunResult.cost``)."""
        return self._total_cost()

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
        self._side.append(event)  # type: ignore[arg-type]  # events of nested runs, typed by the emitter
        if self._side_ready is not None:
            self._side_ready.set()

    # ------------------------------------------------------------------------------------ the loop

    async def _run(self) -> AsyncGenerator[RunEvent[OutputT], None]:
        self._started = time.perf_counter()
        if self._trace is not None:
            self._trace.agent_start(
                provider=self._model.provider, tools=len(self._specs), streamed=self._streaming
            )
        try:
            if self._preprocess is not None:
                self._messages = await self._preprocess(self._messages, self.context)
            if self._hooks is not None:
                async for warning in self._checked(self._hooks.check_input(self._messages, self.context)):
                    yield warning
            if self._approvals is not None:
                async with aclosing(self._resume_approved(self._approvals)) as resumed:
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

    async def _loop(self) -> AsyncGenerator[RunEvent[OutputT], None]:
        """One model request per turn of the loop, then the policy's decision, each phase in its own
        method: the request (:meth:`_ask` / :meth:`_ask_streamed`), the tools (:meth:`_on_tool_calls`)
        and the answer (:meth:`_on_answer`). A phase that ends the run sets the termination reason."""
        messages = self._messages
        while self._reason is None:
            step = self._next_step()
            tools, schema = self._shape_request(step)
            hooks = self._hooks
            if hooks is not None:
                async for warning in self._checked(hooks.before_request(step, self.context)):
                    yield warning
            held: list[StreamDelta] = []
            if self._streaming:
                response: LLMResponse | None = None
                async with aclosing(self._ask_streamed(step, tools, schema, held)) as stream:
                    async for item in stream:
                        if isinstance(item, LLMResponse):
                            response = item
                        else:
                            yield item
                assert response is not None
            else:
                response = await self._ask(step, tools, schema)
            messages.append(response.message)
            if hooks is not None:
                async for warning in self._checked(hooks.after_response(step, response, self.context)):
                    yield warning
            decided = await self._on_decision(step, response, tools, held)
            if isinstance(decided, list):
                for event in decided:
                    yield event
            else:  # the answer, or a tool turn watched by guardrails: events come as it runs
                async with aclosing(decided) as events:
                    async for event in events:
                        yield event

    def _next_step(self) -> int:
        """Seed 003's step budget: the request past ``max_steps`` fails the run."""
        if self.state.current_step >= self.config.max_steps:
            raise MaxStepsExceeded(self.config.max_steps)
        return self.state.increment_step()

    # ------------------------------------------------------------------------------ model requests

    async def _ask(self, step: int, tools: Sequence[ToolSpec], schema: OutputSchema | None) -> LLMResponse:
        """One whole answer; with compaction, the history is compacted first when it has grown past
        the trigger, and a context-length refusal compacts once more and retries once."""
        if self._compactor is None:
            return await self._caller.chat(step, self._messages, tools, schema)
        await self._compact(step)
        try:
            return await self._caller.chat(step, self._messages, tools, schema)
        except LLMCallFailed as failed:
            if not await self._compact_after(step, failed):
                raise
        return await self._caller.chat(step, self._messages, tools, schema)

    async def _ask_streamed(
        self, step: int, tools: Sequence[ToolSpec], schema: OutputSchema | None, held: list[StreamDelta]
    ) -> AsyncGenerator[StreamDelta | LLMResponse, None]:
        """:meth:`_ask` for a streamed answer: deltas as they arrive (into ``held`` when an output
        guardrail must see the answer first), then the assembled response. A refusal is retried after
        compaction only when no delta had arrived."""
        if self._compactor is not None:
            await self._compact(step)
        retried = False
        while True:
            arrived = False
            try:
                async with aclosing(self._caller.stream(step, self._messages, tools, schema)) as stream:
                    async for item in stream:
                        if isinstance(item, LLMResponse):
                            yield item
                            return
                        arrived = True
                        if self._hold_deltas:
                            held.append(item)
                        else:
                            yield item
            except LLMCallFailed as failed:
                if retried or arrived or not await self._compact_after(step, failed):
                    raise
                retried = True

    async def _compact(self, step: int) -> None:
        """Compact the history before a request that would pass the compaction trigger."""
        assert self._compactor is not None
        report = await self._compactor.before_request(self._messages)
        if report is not None and self._trace is not None:
            self._trace.compaction(step, report)

    async def _compact_after(self, step: int, failed: LLMCallFailed) -> bool:
        """After a provider refused the request as too long: compact and say whether to retry."""
        if self._compactor is None or not is_context_length_error(failed.error):
            return False
        report = await self._compactor.after_context_error(self._messages)
        if report is None:
            return False
        if self._trace is not None:
            self._trace.compaction(step, report)
        return True

    # ----------------------------------------------------------------------------- the decisions

    async def _on_decision(
        self, step: int, response: LLMResponse, tools: Sequence[ToolSpec], held: list[StreamDelta]
    ) -> list[RunEvent[OutputT]] | AsyncGenerator[RunEvent[OutputT], None]:
        """Seed 003's termination policy decides what the response means: run its tools, think again,
        decode the answer, or stop. Returns the events to yield, or a generator of them when they come
        while work runs (the answer passing output guardrails, a tool turn with guardrails). Deltas
        held back for an output guardrail go out first unless the response is the answer."""
        decision = self._policy.decide(response, self.state)
        if isinstance(decision, TerminateWithOutput):
            return self._on_answer(step, decision.text, held)
        if isinstance(decision, ContinueWithTools):
            turn = await self._on_tool_calls(step, decision.calls, tools)
            if not held:
                return turn
            return [*held, *turn] if isinstance(turn, list) else self._after(held, turn)
        events: list[RunEvent[OutputT]] = list(held)  # not an answer: nothing to hold back
        if isinstance(decision, ContinueWithThinking):
            events.append(self._record(Thinking(step, "policy", text=response.message.text)))
        elif isinstance(decision, TerminateImmediately):
            self._answer_unrun_calls(response, decision.reason)
            self._finish(decision.reason)
        else:
            assert_never(decision)
        return events

    @staticmethod
    async def _after(
        first: Sequence[RunEvent[OutputT]], then: AsyncGenerator[RunEvent[OutputT], None]
    ) -> AsyncGenerator[RunEvent[OutputT], None]:
        for event in first:
            yield event
        async with aclosing(then) as events:
            async for event in events:
                yield event

    async def _on_tool_calls(
        self, step: int, calls: Sequence[ToolCall], tools: Sequence[ToolSpec]
    ) -> list[RunEvent[OutputT]] | AsyncGenerator[RunEvent[OutputT], None]:
        """The model asked for tools: record the calls, then stop for approval, stop with the calls
        pending (``auto_execute_tools=False``), or run them. Returns the steps to yield — or, when
        guardrails watch the tools or a tool emits events, the turn to iterate (:meth:`_tool_turn`).
        The plain path is one awaited round, no generator: it is the hot path of a tool loop."""
        state = self.state
        groups = state.group_identical(calls)
        for call in groups[0]:
            state.record_tool_call(call)
        if self._asks_approval and tools:
            waiting = tuple(call for call in calls if self._needs_approval(call))
            if waiting:
                self._pending_approvals = waiting
                self._finish(TerminationReason.APPROVAL_REQUIRED)
                return [self._record(ApprovalRequired(step, waiting))]
        if self._client_names:
            for_caller = tuple(call for call in calls if call.name in self._client_names)
            if for_caller:  # the caller runs these: the agent's own calls of the turn run first
                return self._hand_over(step, calls, for_caller)
        if not self.config.auto_execute_tools:
            pending: list[RunEvent[OutputT]] = [self._record(ToolCallStep(step, call)) for call in calls]
            self._pending = tuple(calls)
            self._finish(TerminationReason.TOOLS_PENDING)
            return pending
        offered = self._offered_names if tools else _NONE_OFFERED
        if self._hooks is not None or self._tools_emit:
            return self._tool_turn(step, calls, offered, groups)
        if self._executor is None:
            self._executor = ToolExecutor(self._tools, config=self.config, context=self.context)
        results = await self._executor.run(step, calls, self._trace, offered=offered, groups=groups)
        return self._join_results(step, calls, results)

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
        if self._postprocess is not None:
            outcome = await self._postprocess(outcome)
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

    # --------------------------------------------------------------------------------------- tools

    async def _tool_turn(
        self,
        step: int,
        calls: Sequence[ToolCall],
        offered: frozenset[str],
        groups: tuple[Sequence[ToolCall], Sequence[int]] | None,
    ) -> AsyncGenerator[RunEvent[OutputT], None]:
        """Run one turn's calls: guardrails before, the tools (yielding what they emit meanwhile, e.g. a
        handed-off agent's events), guardrails after, then the results join the conversation and the
        ``ToolCallStep``/``ToolResultStep`` pairs are yielded in call order."""
        hooks = self._hooks
        if hooks is not None:
            async for warning in self._checked(hooks.before_tools(step, calls, self.context), calls):
                yield warning
        if self._executor is None:
            self._executor = ToolExecutor(self._tools, config=self.config, context=self.context)
        running = self._executor.run(step, calls, self._trace, offered=offered, groups=groups)
        if self._tools_emit:
            task = asyncio.ensure_future(running)
            async with aclosing(self._while_running(task)) as emitted:
                async for event in emitted:
                    yield event
            results = task.result()
        else:
            results = await running
        while self._side:
            yield self._side_event(self._side.pop(0))
        if hooks is not None:
            async for warning in self._checked(hooks.after_tools(step, results, self.context), calls):
                yield warning
        for event in self._join_results(step, calls, results):
            yield event

    def _join_results(
        self, step: int, calls: Sequence[ToolCall], results: Sequence[ToolResult]
    ) -> list[RunEvent[OutputT]]:
        """Add a turn's results to the conversation and return its ``ToolCallStep``/``ToolResultStep``
        pairs in call order (raising first under ``strict_tools``)."""
        messages = self._messages
        for result in results:
            messages.append(result.to_message())
        if self.config.strict_tools:
            for result in results:
                raise_for_tool_result(result)
        steps: list[RunEvent[OutputT]] = []
        for call, result in zip(calls, results, strict=True):
            steps.append(self._record(ToolCallStep(step, call)))
            steps.append(self._record(ToolResultStep(step, result)))
        return steps

    async def _while_running(self, task: asyncio.Future[Any]) -> AsyncGenerator[RunEvent[OutputT], None]:
        """Yield events tools emit while ``task`` runs; cancel the task if the consumer stops early."""
        ready = self._side_ready = asyncio.Event()
        queue = self._side
        try:
            while not task.done():
                if queue:
                    yield self._side_event(queue.pop(0))
                    continue
                ready.clear()
                waiter = asyncio.ensure_future(ready.wait())
                try:
                    await asyncio.wait((task, waiter), return_when=asyncio.FIRST_COMPLETED)
                finally:
                    waiter.cancel()
        finally:
            self._side_ready = None
            if not task.done():
                task.cancel()
                with suppress(asyncio.CancelledError):
                    await task

    def _side_event(self, event: RunEvent[OutputT]) -> RunEvent[OutputT]:
        """Handoff and guardrail events emitted by tools are steps of this run; others pass through."""
        if isinstance(event, HandoffStarted | HandoffEnded | GuardrailTripped):
            self._record(event)
        return event

    async def _hand_over(
        self, step: int, calls: Sequence[ToolCall], for_caller: tuple[ToolCall, ...]
    ) -> AsyncGenerator[RunEvent[OutputT], None]:
        """The model called tools the caller executes (:mod:`kanawa.loop.options`): the agent's own
        calls of the turn run now, then the run ends ``tools_pending`` with the caller's calls."""
        own = [call for call in calls if call.name not in self._client_names]
        if own:
            offered = self._offered_names
            async with aclosing(self._tool_turn(step, own, offered, None)) as turn:
                async for event in turn:
                    yield event
        pending = [self._record(ToolCallStep(step, call)) for call in for_caller]
        self._pending = for_caller
        self._finish(TerminationReason.TOOLS_PENDING)
        for step_event in pending:
            yield step_event

    def _needs_approval(self, call: ToolCall) -> bool:
        if call.name in self._approval_names:
            return True
        policy = self._approval_policy
        return policy is not None and call.name in self._offered_names and policy(call, self.context)

    async def _resume_approved(self, approvals: Approvals) -> AsyncGenerator[RunEvent[OutputT], None]:
        """Continue a run that stopped for approval (:mod:`kanawa.loop.approval`): run what may run,
        answer what was rejected, in call order, before the next model request."""
        to_run, rejected = plan_resume(self._messages, approvals, self._needs_approval)
        if to_run:
            async with aclosing(self._tool_turn(0, to_run, self._offered_names, None)) as turn:
                async for event in turn:
                    yield event
        for call in rejected:
            result = rejected_result(call, approvals.rejected[call.id])
            self._messages.append(result.to_message())
            yield self._record(ToolCallStep(0, call))
            yield self._record(ToolResultStep(0, result))

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
        return FinalResponse(step, output, text, self._total_usage())

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

    def _fail(self, exc: BaseException) -> None:
        if isinstance(exc, AgentError):
            exc.partial_result = self._build_result()
        if self._trace is not None:
            self._trace.agent_end(
                usage=self._total_usage(),
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

    def _total_usage(self) -> Usage:
        """The run's requests, plus those compaction made (a summary, a provider's compaction)."""
        if self._compactor is None:
            return self._caller.usage
        return self._caller.usage + self._compactor.usage

    def _total_cost(self) -> float | None:
        cost = self._caller.cost
        if self._compactor is None or cost is None or self._compactor.cost is None:
            return None if self._compactor is not None and self._compactor.cost is None else cost
        return cost + self._compactor.cost

    def _build_result(self) -> RunResult[OutputT]:
        final = self._final
        return RunResult(
            output=None if final is None else final.output,
            text="" if final is None else final.text,
            usage=self._total_usage(),
            steps=self._steps,
            messages=self._messages,
            termination_reason=self._reason if self._reason is not None else "error",
            run_id=self.run_id,
            pending_tool_calls=self._pending,
            pending_approvals=self._pending_approvals,
            cost=self._total_cost(),
        )


__all__ = ["AgentLoopRunner", "Postprocess", "Preprocess"]
