"""``kanawa.Agent``: a named model with instructions, tools and an output type (seed 002 §3-1 ``BaseAgent``).

An agent is configuration; each call to :meth:`Agent.run` / :meth:`Agent.stream` starts one
:class:`~kanawa.loop.runner.AgentLoopRunner`, so one agent serves any number of concurrent runs.
``run`` drives the same runner ``stream`` returns and collects it (seed 002: "run は .stream() を内部で
起動して全チャンクを結合").

Extension points for subclasses (handoffs, guardrails and memory build on these without changing the
constructor or the run methods):

- :meth:`Agent._preprocess_messages` — rewrite the conversation once, before the first request
  (seed 002 stream stage 1), with the run's :class:`~kanawa.context.RunContext`;
- :meth:`Agent._postprocess_response` — inspect or rewrite the final response before it is yielded
  (stage 5);
- :meth:`Agent._build_messages` — how the input and history become the conversation.

Dependencies: ``deps_type=`` types them, ``run(..., deps=...)`` supplies them per run, and tools and
dynamic instructions read them from the :class:`~kanawa.context.RunContext` (seed 002's ``extra_cfg``,
a dict kept on the agent "to inject external dependencies such as a DB connection", is this).
"""

from __future__ import annotations

import functools
import os
import typing
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Generic, Self, cast

from kanawa._sync import run_in_new_loop
from kanawa.agents.handoffs import MAX_HANDOFF_DEPTH, Handoff, handoff_tools
from kanawa.agents.instructions import InstructionsFunc, render_instructions
from kanawa.agents.skills import AgentSkill, published_description, published_skills
from kanawa.context import DepsT, RunContext
from kanawa.llm.adapter import LLMAdapter
from kanawa.llm.lifecycle import close_adapter
from kanawa.llm.models import resolve_model
from kanawa.llm.settings import ModelSettings
from kanawa.loop.approval import ApprovalPolicy, Approvals
from kanawa.loop.config import AgentConfiguration
from kanawa.loop.events import FinalResponse, OutputT
from kanawa.loop.hooks import RunHooks
from kanawa.loop.options import RunOptions
from kanawa.loop.policies import TerminationPolicy, default_policy
from kanawa.loop.result import RunResult
from kanawa.loop.runner import AgentLoopRunner
from kanawa.loop.spec import RunSpec
from kanawa.prompts.library import PromptLibrary
from kanawa.tools.base import Tool
from kanawa.tools.decorator import tool as make_tool
from kanawa.trace.events import Tracer
from kanawa.types import Message, SystemMessage, UserMessage

if TYPE_CHECKING:
    from kanawa.agents.memory.hook import Memory
    from kanawa.loop.compaction.settings import Compaction

UserInput = str | Sequence[Message] | Approvals
"""A user turn as text, messages to append to the conversation as they are, or a person's decisions on
the calls a run stopped for (:class:`~kanawa.loop.approval.Approvals`, with ``history=`` that run's
messages)."""


def with_instructions(messages: list[Message], extra: str) -> list[Message]:
    """``messages`` with ``extra`` appended to the system message (one is added when there is none)."""
    if messages and isinstance(messages[0], SystemMessage):
        messages[0] = SystemMessage(f"{messages[0].content}\n\n{extra}")
        return messages
    return [SystemMessage(extra), *messages]


class Agent(Generic[OutputT, DepsT]):
    """An LLM agent: ``Agent("calc", "Answer with arithmetic.", tools=[add], model="openai:gpt-5")``.

    Type parameters: ``Agent[OutputT, DepsT]`` — the output type, then the dependencies' type, which
    defaults to ``None`` (so ``Agent[str]`` is an agent without dependencies).

    Args:
        name: the agent's name (trace events carry it).
        instructions: the system message. Used as written; ``prompt_policies=True`` adds the GPT-5
            prompt policies (:func:`kanawa.prompts.build_system_instruction`). A function of the
            :class:`~kanawa.context.RunContext` returning text is evaluated once per run, before the
            first request (:mod:`kanawa.agents.instructions`; more with :meth:`add_instructions`).
        tools: :class:`~kanawa.tools.base.Tool` objects or plain typed functions (wrapped with ``@tool``).
            Names must be unique.
        model: required (or ``KANAWA_MODEL``): a model string (``"openai:gpt-5"``, ``"test"`` …,
            resolved on first use) or an :class:`~kanawa.llm.adapter.LLMAdapter`.
        output_type: ``str`` for a text answer, or a type pydantic can validate (a ``BaseModel``, a
            dataclass, ``list[int]`` …) for a structured answer.
        config: loop limits (:class:`~kanawa.loop.config.AgentConfiguration`).
        settings: model settings for every request (per-run ``settings=`` are merged over them).
        tracer: where trace events go; ``None`` (or a tracer without sinks) traces nothing.
        policy: a custom :class:`~kanawa.loop.policies.TerminationPolicy` replacing the default chain.
        prompts: the library for the messages the loop adds (default: ``DEFAULT_PROMPTS``).
        prompt_policies: add the GPT-5 policies to the instructions.
        prompt_policy_overrides: overrides of those policies, as read by
            :func:`~kanawa.prompts.parse_prompt_policy_overrides`.
        deps_type: the type of the ``deps`` each run gets (``run(..., deps=...)``), for type checkers
            (``Agent[OutputT, DepsT]``, ``RunContext[DepsT]``) and checked at the start of each run:
            ``deps`` must be an instance of it (a class, a union such as ``Deps | None``, or a
            parameterised generic, checked against its origin); a type ``isinstance`` cannot check
            (a ``TypedDict``, a non-runtime ``Protocol``) is not checked. Without ``deps_type``
            nothing is checked and ``deps`` defaults to ``None``.
        memory: a :class:`~kanawa.agents.memory.Memory` applied in :meth:`_preprocess_messages`
            (long-term recall, context budget).
        handoffs: agents (or :class:`~kanawa.agents.handoffs.Handoff` options) this agent may hand the
            conversation to; each is offered to the model as a ``transfer_to_<agent>`` tool
            (:mod:`kanawa.agents.handoffs`, seed 002 §3-1).
        max_handoff_depth: how deep handoffs may nest from a run this agent starts (seed 002: 3); the
            next one raises :class:`~kanawa.loop.errors.HandoffDepthExceeded`.
        guardrails: :class:`~kanawa.agents.guardrails.Guardrail` and
            :class:`~kanawa.agents.budget.TokenGuard` objects (anything implementing
            :class:`~kanawa.loop.hooks.RunHooks`), checked in order at every boundary of the run.
        approval_policy: ``(call, context) -> bool``: calls for which it returns ``True`` wait for a
            person's decision, like tools marked ``@tool(requires_approval=True)``
            (:mod:`kanawa.loop.approval`).
        compaction: keep long conversations under the model's context window
            (:class:`~kanawa.loop.compaction.Compaction`: drop the oldest turns, summarise them, or
            the provider's own compaction); a handoff target without its own uses this one.
        description: what the agent does, in words written for its callers (at most 500
            characters): an A2A agent card shows it (:mod:`kanawa.agents.skills`). Never derived
            from ``instructions``, which may hold what callers must not see.
        skills: the :class:`~kanawa.agents.skills.AgentSkill` objects its callers see (an A2A
            card's skills; distinct ids). Never derived from the tools' docstrings.

    Without ``model=`` the ``KANAWA_MODEL`` environment variable names the model; with neither, the
    constructor raises ``ValueError`` naming both ways. An agent never falls back to a test model: the
    offline test model is used only when asked for (``model="test"``).

    Raises ``ValueError`` for an empty name or duplicate tool names and ``TypeError`` for a tool that is
    neither a ``Tool`` nor callable. The model string is checked when first used.
    """

    def __init__(
        self,
        name: str,
        instructions: str | InstructionsFunc[DepsT] = "",
        *,
        tools: Iterable[Tool | Callable[..., Any]] = (),
        model: str | LLMAdapter | None = None,
        output_type: type[OutputT] = str,  # type: ignore[assignment]  # default applies when OutputT=str
        config: AgentConfiguration | None = None,
        settings: ModelSettings | None = None,
        tracer: Tracer | None = None,
        policy: TerminationPolicy | None = None,
        prompts: PromptLibrary | None = None,
        prompt_policies: bool = False,
        prompt_policy_overrides: str | None = None,
        deps_type: type[DepsT] | None = None,
        memory: Memory | None = None,
        handoffs: Iterable[Agent[Any, Any] | Handoff] = (),
        max_handoff_depth: int = MAX_HANDOFF_DEPTH,
        guardrails: Sequence[RunHooks] = (),
        approval_policy: ApprovalPolicy | None = None,
        compaction: Compaction | None = None,
        description: str = "",
        skills: Iterable[AgentSkill] = (),
    ) -> None:
        if not isinstance(name, str) or not name.strip():
            raise ValueError("an agent needs a non-empty name")
        self._name = name
        self.description = published_description(description)
        self.skills = published_skills(skills)
        self._instructions = instructions if isinstance(instructions, str) else ""
        self._dynamic: list[InstructionsFunc[DepsT]] = []
        if not isinstance(instructions, str):
            self.add_instructions(instructions)
        self._policy_overrides = prompt_policy_overrides
        self._prompt_policies = prompt_policies
        self.deps_type = deps_type
        self._deps_check = _isinstance_target(deps_type)
        if (
            isinstance(max_handoff_depth, bool)
            or not isinstance(max_handoff_depth, int)
            or max_handoff_depth < 0
        ):
            raise ValueError(f"max_handoff_depth must be an int >= 0, not {max_handoff_depth!r}")
        self.max_handoff_depth = max_handoff_depth
        self._handoffs = tuple(handoffs)
        self._tools = _normalise_tools([*tools, *handoff_tools(self, self._handoffs)])
        self.guardrails = guardrails
        self.approval_policy = approval_policy
        if compaction is not None:
            from kanawa.loop.compaction.settings import Compaction

            if not isinstance(compaction, Compaction):
                raise TypeError(f"compaction must be a Compaction, not {type(compaction).__name__}")
        self.compaction = compaction
        model = _require_model(name, model)
        self._model_spec: str | LLMAdapter = model
        self._adapter: LLMAdapter | None = None if isinstance(model, str) else model
        self.output_type = output_type
        self.config = config if config is not None else AgentConfiguration()
        self.settings = settings
        self.tracer = tracer
        self.prompts = prompts
        self.memory = memory
        self._policy = policy if policy is not None else default_policy(self.config)
        if prompt_policies:
            from kanawa.prompts.policies import build_system_instruction

            self._system = build_system_instruction(self._instructions, prompt_policy_overrides)
        else:
            self._system = self._instructions

    # ---------------------------------------------------------------------------------- attributes

    @property
    def name(self) -> str:
        return self._name

    @property
    def instructions(self) -> str:
        """The static instructions (``""`` when the agent was given a function)."""
        return self._instructions

    @property
    def system_instruction(self) -> str:
        """The system message content sent (instructions, plus policies when enabled); with dynamic
        instructions, the part known before a run."""
        return self._system

    def add_instructions(self, function: InstructionsFunc[DepsT]) -> InstructionsFunc[DepsT]:
        """Register dynamic instructions (usable as a decorator): ``function(ctx)`` returns text that
        is appended to the system message of every run started afterwards, evaluated once per run
        before the first request (:mod:`kanawa.agents.instructions`)."""
        if not callable(function):
            raise TypeError(
                f"instructions must be a function of the run context, not {type(function).__name__}"
            )
        self._dynamic.append(function)
        return function

    @property
    def tools(self) -> tuple[Tool, ...]:
        """The tools offered to the model, the ``transfer_to_…`` handoff tools last."""
        return self._tools

    @property
    def handoffs(self) -> tuple[Agent[Any, Any] | Handoff, ...]:
        return self._handoffs

    @property
    def guardrails(self) -> tuple[RunHooks, ...]:
        """The guardrails and budgets checked in every run started after they were set."""
        return self._guardrails

    @guardrails.setter
    def guardrails(self, value: Sequence[RunHooks]) -> None:
        self._guardrails = tuple(value)

    @property
    def model(self) -> LLMAdapter:
        """The adapter; a model string is resolved on first access (and kept)."""
        if self._adapter is None:
            self._adapter = resolve_model(self._model_spec)
        return self._adapter

    @model.setter
    def model(self, value: str | LLMAdapter) -> None:
        self._model_spec = value
        self._adapter = None if isinstance(value, str) else value

    async def aclose(self) -> None:
        """Close the adapter this agent resolved from a model string (it owns that one and its HTTP
        connections); an adapter passed in as an object belongs to the caller and is left open."""
        if isinstance(self._model_spec, str) and self._adapter is not None:
            adapter, self._adapter = self._adapter, None
            await close_adapter(adapter)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        spec = (
            self._model_spec
            if isinstance(self._model_spec, str)
            else f"{self._model_spec.provider}:{self._model_spec.model}"
        )
        return f"Agent(name={self._name!r}, model={spec!r}, tools={[t.name for t in self._tools]!r})"

    # -------------------------------------------------------------------------------------- running

    def stream(
        self,
        user_input: UserInput,
        *,
        history: Sequence[Message] = (),
        settings: ModelSettings | None = None,
        run_id: str | None = None,
        deps: DepsT | None = None,
        options: RunOptions | None = None,
    ) -> AgentLoopRunner[OutputT]:
        """Start a streaming run: iterate it for steps *and* the model's deltas (``TextDelta``,
        ``ReasoningDelta``, ``ToolCallStarted``, ``ToolCallArgsDelta``); ``.result`` once it is done.
        ``deps`` go on the run's context (``.context``); ``options`` add to this run only
        (:class:`~kanawa.loop.options.RunOptions`), never to the agent."""
        return self._start(
            user_input,
            history=history,
            stream=True,
            settings=settings,
            run_id=run_id,
            deps=deps,
            options=options,
        )

    async def arun(
        self,
        user_input: UserInput,
        *,
        history: Sequence[Message] = (),
        stream: bool = False,
        settings: ModelSettings | None = None,
        run_id: str | None = None,
        deps: DepsT | None = None,
        options: RunOptions | None = None,
    ) -> RunResult[OutputT]:
        """Run to the end and return the :class:`RunResult`. ``stream=True`` talks to the model over its
        streaming API (same result); ``history`` is an earlier conversation (e.g. ``result.messages``);
        ``deps`` are the run's dependencies, handed to tools and instructions on its
        :class:`~kanawa.context.RunContext`. Raises ``TypeError`` when they do not fit ``deps_type``.
        ``options`` add to this run only (:class:`~kanawa.loop.options.RunOptions`)."""
        runner = self._start(
            user_input,
            history=history,
            stream=stream,
            settings=settings,
            run_id=run_id,
            deps=deps,
            options=options,
        )
        async for _ in runner:
            pass
        return runner.result

    def run(
        self,
        user_input: UserInput,
        *,
        history: Sequence[Message] = (),
        stream: bool = False,
        settings: ModelSettings | None = None,
        run_id: str | None = None,
        deps: DepsT | None = None,
        options: RunOptions | None = None,
    ) -> RunResult[OutputT]:
        """:meth:`arun` for scripts: runs its own event loop. Raises ``RuntimeError`` inside a running
        loop (await :meth:`arun` there)."""
        return run_in_new_loop(
            lambda: self.arun(
                user_input,
                history=history,
                stream=stream,
                settings=settings,
                run_id=run_id,
                deps=deps,
                options=options,
            ),
            twin="Agent.arun",
        )

    def _start(
        self,
        user_input: UserInput,
        *,
        history: Sequence[Message],
        stream: bool,
        settings: ModelSettings | None,
        run_id: str | None,
        deps: DepsT | None = None,
        handoff_path: tuple[str, ...] = (),
        tracer: Tracer | None = None,
        options: RunOptions | None = None,
        compaction: Compaction | None = None,
    ) -> AgentLoopRunner[OutputT]:
        """Start a run. ``tracer``: the tracer of the run this one is nested in (it already carries
        ``options``' trace sinks), used when this agent has none."""
        self._check_deps(deps)
        approvals = user_input if isinstance(user_input, Approvals) else None
        merged = self.settings.merged(settings) if self.settings is not None else settings
        cls = type(self)
        prepares = (
            bool(self._dynamic)
            or self.memory is not None
            or cls._preprocess_messages is not Agent._preprocess_messages
        )
        messages = self._build_messages(user_input, history)
        preprocess: Any = self._prepare if prepares else None
        extra = options.instructions if options is not None else None
        if extra:
            messages = with_instructions(messages, extra)
            if self._dynamic:  # the rendered instructions replace the system message: add them again
                preprocess = functools.partial(self._prepare, extra=extra)
        spec: RunSpec[OutputT] = RunSpec(
            self.model,
            tools=self._tools,
            output_type=self.output_type,
            config=self.config,
            settings=merged,
            stream=stream,
            tracer=_run_tracer(self.tracer, tracer, options),
            policy=self._policy,
            prompts=self.prompts,
            agent_name=self._name,
            preprocess=preprocess,
            postprocess=(
                self._postprocess_response
                if cls._postprocess_response is not Agent._postprocess_response
                else None
            ),
            guardrails=self._guardrails,
            approval_policy=self.approval_policy,
            handoff_path=handoff_path,
            options=options,
            compaction=self.compaction if self.compaction is not None else compaction,
        )
        return AgentLoopRunner(spec, messages, deps=deps, run_id=run_id, approvals=approvals)

    def _start_handoff(
        self,
        messages: Sequence[Message],
        *,
        context: RunContext[Any],
        source: str,
        compaction: Compaction | None = None,
    ) -> AgentLoopRunner[OutputT]:
        """Start this agent as the target of ``source``'s handoff (:mod:`kanawa.agents.handoffs`): on
        the handed-over ``messages``, with the source run's deps, streaming mode, (when this agent
        has none) tracer and compaction, and the run options a nested run inherits, one level deeper."""
        return self._start_nested(
            messages,
            deps=context.deps,
            stream=context.streaming,
            tracer=context.tracer,
            handoff_path=(*context.handoff_path, source),
            options=context.options.for_nested() if context.options is not None else None,
            compaction=compaction,
        )

    def _start_nested(
        self,
        messages: Sequence[Message],
        *,
        deps: Any,
        stream: bool,
        tracer: Tracer | None,
        handoff_path: tuple[str, ...],
        options: RunOptions | None = None,
        compaction: Compaction | None = None,
    ) -> AgentLoopRunner[OutputT]:
        """Start a run inside another agent's work (a handoff, a coordinator's route): ``handoff_path``
        names the agents above it, so its own handoffs count their depth from there."""
        return self._start(
            messages,
            history=(),
            stream=stream,
            settings=None,
            run_id=None,
            deps=deps,
            handoff_path=handoff_path,
            tracer=tracer,
            options=options,
            compaction=compaction,
        )

    async def on_handoff_return(
        self, target: Agent[Any, Any], result: RunResult[Any], context: RunContext[DepsT]
    ) -> str:
        """Seed 002 §3-1 ``on_handoff_return()``: what this agent's model is told when ``target``
        hands back. Override to merge the result differently; the default is the target's answer
        (its text, or its structured output as JSON)."""
        if result.output is None or isinstance(result.output, str):
            return result.text
        from pydantic import TypeAdapter

        return TypeAdapter(type(result.output)).dump_json(result.output).decode()

    def _check_deps(self, deps: object) -> None:
        if self._deps_check is not None and not isinstance(deps, self._deps_check):
            expected = getattr(self.deps_type, "__name__", repr(self.deps_type))
            got = "nothing" if deps is None else f"a {type(deps).__name__}"
            raise TypeError(
                f"agent {self._name!r} declares deps_type={expected}; "
                f"pass run(..., deps=...) an instance of it, not {got}"
            )

    async def _prepare(
        self, messages: list[Message], context: RunContext[Any], *, extra: str | None = None
    ) -> list[Message]:
        """Before the first request: put the dynamic instructions (and a run's ``extra`` ones) into
        the system message, then run the :meth:`_preprocess_messages` hook."""
        if self._dynamic:
            text = await render_instructions(self._instructions, self._dynamic, context)
            if self._prompt_policies:
                from kanawa.prompts.policies import build_system_instruction

                text = build_system_instruction(text, self._policy_overrides)
            if extra:
                text = f"{text}\n\n{extra}" if text else extra
            if text:
                if messages and isinstance(messages[0], SystemMessage):
                    messages[0] = SystemMessage(text)
                else:
                    messages.insert(0, SystemMessage(text))
        if self.memory is not None or type(self)._preprocess_messages is not Agent._preprocess_messages:
            messages = await self._preprocess_messages(messages, cast("RunContext[DepsT]", context))
        return messages

    # ------------------------------------------------------------------------------------------ hooks

    def _build_messages(self, user_input: UserInput, history: Sequence[Message]) -> list[Message]:
        """System message, then ``history``, then the input.

        The agent's system instruction owns the system slot: a leading ``SystemMessage`` in ``history``
        (as in a previous ``result.messages``) is replaced by it, so continuing a conversation never
        doubles it. An agent with empty instructions keeps the supplied one.
        """
        supplied: list[Message] = list(history)
        if isinstance(user_input, str):
            supplied.append(UserMessage(user_input))
        elif not isinstance(user_input, Approvals):
            supplied.extend(user_input)
        if not supplied:
            raise ValueError("nothing to send: give a user input or messages")
        if not self._system:
            return supplied
        if isinstance(supplied[0], SystemMessage):
            supplied[0] = SystemMessage(self._system)
            return supplied
        return [SystemMessage(self._system), *supplied]

    async def _preprocess_messages(
        self, messages: list[Message], context: RunContext[DepsT]
    ) -> list[Message]:
        """Override to rewrite the conversation before the first request (guardrails, memory); the
        run's ``context`` carries its ``deps``. The default applies ``memory`` (when given)."""
        if self.memory is not None:
            return await self.memory.prepare(messages)
        return messages

    async def _postprocess_response(self, response: FinalResponse[OutputT]) -> FinalResponse[OutputT]:
        """Override to check or rewrite the final response (output guardrails); raise to reject it."""
        return response


BaseAgent = Agent
"""Seed 002 §3-1's name for :class:`Agent` (subclass either; they are the same class)."""

MODEL_ENVIRONMENT_VARIABLE = "KANAWA_MODEL"
"""Names the model of an agent constructed without ``model=``."""


def _require_model(agent: str, model: str | LLMAdapter | None) -> str | LLMAdapter:
    """``model``, else ``$KANAWA_MODEL``; never a silent default (DESIGN "Decisions")."""
    if model is None:
        model = os.environ.get(MODEL_ENVIRONMENT_VARIABLE, "").strip() or None
    if model is None or (isinstance(model, str) and not model.strip()):
        raise ValueError(
            f"agent {agent!r} has no model: pass model='openai:gpt-5' (any model string, or 'test' for "
            f"the offline test model) or an LLMAdapter, or set {MODEL_ENVIRONMENT_VARIABLE}"
        )
    return model


def _isinstance_target(deps_type: object) -> Any:
    """What ``isinstance`` can check ``deps`` against for ``deps_type``, or ``None`` (no check)."""
    if deps_type is None:
        return None
    try:
        isinstance(None, deps_type)  # type: ignore[arg-type]  # probing whether isinstance accepts it
    except TypeError:
        origin = typing.get_origin(deps_type)
        return origin if isinstance(origin, type) else None
    return deps_type


def _normalise_tools(tools: Iterable[Tool | Callable[..., Any]]) -> tuple[Tool, ...]:
    out: list[Tool] = []
    seen: set[str] = set()
    for item in tools:
        if isinstance(item, Tool):
            made = item
        elif callable(item):
            made = make_tool(item)
        else:
            raise TypeError(f"tools must be Tool objects or functions, not {type(item).__name__}")
        if made.name in seen:
            raise ValueError(f"two tools are named {made.name!r}; tool names must be unique")
        seen.add(made.name)
        out.append(made)
    return tuple(out)


def _run_tracer(own: Tracer | None, inherited: Tracer | None, options: RunOptions | None) -> Tracer | None:
    """A run's tracer: the agent's own with the options' sinks besides; without one, the tracer of
    the run it is nested in (which carries them already), else the options' sinks alone."""
    if options is None or not options.trace_sinks:
        return own if own is not None else inherited
    if own is None and inherited is not None:
        return inherited
    return options.tracer_for(own)


__all__ = ["Agent", "BaseAgent", "UserInput"]
