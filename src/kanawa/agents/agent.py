"""``kanawa.Agent``: a named model with instructions, tools and an output type (seed 002 §3-1 ``BaseAgent``).

An agent is configuration; each call to :meth:`Agent.run` / :meth:`Agent.stream` starts one
:class:`~kanawa.loop.runner.AgentLoopRunner`, so one agent serves any number of concurrent runs.
``run`` drives the same runner ``stream`` returns and collects it (seed 002: "run は .stream() を内部で
起動して全チャンクを結合").

Extension points for subclasses (handoffs, guardrails and memory build on these without changing the
constructor or the run methods):

- :meth:`Agent._preprocess_messages` — rewrite the conversation once, before the first request
  (seed 002 stream stage 1);
- :meth:`Agent._postprocess_response` — inspect or rewrite the final response before it is yielded
  (stage 5);
- :meth:`Agent._build_messages` — how the input and history become the conversation.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Generic

from kanawa.llm.base import LLMAdapter
from kanawa.llm.models import resolve_model
from kanawa.llm.settings import ModelSettings
from kanawa.loop.config import AgentConfiguration
from kanawa.loop.policies import TerminationPolicy, default_policy
from kanawa.loop.result import RunResult
from kanawa.loop.runner import AgentLoopRunner
from kanawa.loop.steps import FinalResponse, OutputT
from kanawa.prompts.library import PromptLibrary
from kanawa.tools.base import Tool
from kanawa.tools.decorator import tool as make_tool
from kanawa.trace.events import Tracer
from kanawa.types import Message, SystemMessage, UserMessage

if TYPE_CHECKING:
    from kanawa.agents.memory.hook import Memory

UserInput = str | Sequence[Message]
"""A user turn as text, or messages to append to the conversation as they are."""


class Agent(Generic[OutputT]):
    """An LLM agent: ``Agent("calc", "Answer with arithmetic.", tools=[add], model="openai:gpt-5")``.

    Args:
        name: the agent's name (trace events carry it).
        instructions: the system message. Used as written; ``prompt_policies=True`` adds the GPT-5
            prompt policies (:func:`kanawa.prompts.build_system_instruction`).
        tools: :class:`~kanawa.tools.base.Tool` objects or plain typed functions (wrapped with ``@tool``).
            Names must be unique.
        model: a model string (``"openai:gpt-5"``, ``"anthropic:…"``, ``"test"`` …, resolved on first
            use) or an :class:`~kanawa.llm.base.LLMAdapter`.
        output_type: ``str`` for a text answer, or a type pydantic can validate (a ``BaseModel``, a
            dataclass, ``list[int]`` …) for a structured answer.
        config: loop limits (:class:`~kanawa.loop.config.AgentConfiguration`).
        settings: model settings for every request (per-run ``settings=`` are merged over them).
        tracer: where trace events go; ``None`` (or a tracer without sinks) traces nothing.
        policy: a custom :class:`~kanawa.loop.policies.TerminationPolicy` replacing the default chain.
        prompts: the library for the messages the loop adds (default: ``DEFAULT_PROMPTS``).
        prompt_policies / prompt_policy_overrides: add the GPT-5 policies to the instructions.
        extra_cfg: anything to keep with the agent (seed 002: external dependencies such as a DB handle),
            stored as a dict and never read by the loop.
        memory: a :class:`~kanawa.agents.memory.Memory` applied in :meth:`_preprocess_messages`
            (long-term recall, context budget).

    Raises ``ValueError`` for an empty name or duplicate tool names and ``TypeError`` for a tool that is
    neither a ``Tool`` nor callable. The model string is checked when first used.
    """

    def __init__(
        self,
        name: str,
        instructions: str = "",
        tools: Iterable[Tool | Callable[..., Any]] = (),
        model: str | LLMAdapter = "test",
        output_type: type[OutputT] = str,  # type: ignore[assignment]  # default applies when OutputT=str
        config: AgentConfiguration | None = None,
        *,
        settings: ModelSettings | None = None,
        tracer: Tracer | None = None,
        policy: TerminationPolicy | None = None,
        prompts: PromptLibrary | None = None,
        prompt_policies: bool = False,
        prompt_policy_overrides: str | None = None,
        extra_cfg: Mapping[str, Any] | None = None,
        memory: Memory | None = None,
    ) -> None:
        if not isinstance(name, str) or not name.strip():
            raise ValueError("an agent needs a non-empty name")
        self._name = name
        self._instructions = instructions
        self._tools = _normalise_tools(tools)
        self._model_spec: str | LLMAdapter = model
        self._adapter: LLMAdapter | None = None if isinstance(model, str) else model
        self.output_type = output_type
        self.config = config if config is not None else AgentConfiguration()
        self.settings = settings
        self.tracer = tracer
        self.prompts = prompts
        self.extra_cfg: dict[str, Any] = dict(extra_cfg or {})
        self.memory = memory
        self._policy = policy if policy is not None else default_policy(self.config)
        if prompt_policies:
            from kanawa.prompts.policies import build_system_instruction

            self._system = build_system_instruction(instructions, prompt_policy_overrides)
        else:
            self._system = instructions

    # ---------------------------------------------------------------------------------- attributes

    @property
    def name(self) -> str:
        return self._name

    @property
    def instructions(self) -> str:
        return self._instructions

    @property
    def system_instruction(self) -> str:
        """The system message content actually sent (instructions, plus policies when enabled)."""
        return self._system

    @property
    def tools(self) -> tuple[Tool, ...]:
        return self._tools

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
    ) -> AgentLoopRunner[OutputT]:
        """Start a streaming run: iterate it for steps *and* the model's deltas (``TextDelta``,
        ``ReasoningDelta``, ``ToolCallStarted``, ``ToolCallArgsDelta``); ``.result`` once it is done."""
        return self._start(user_input, history=history, stream=True, settings=settings, run_id=run_id)

    async def run(
        self,
        user_input: UserInput,
        *,
        history: Sequence[Message] = (),
        stream: bool = False,
        settings: ModelSettings | None = None,
        run_id: str | None = None,
    ) -> RunResult[OutputT]:
        """Run to the end and return the :class:`RunResult`. ``stream=True`` talks to the model over its
        streaming API (same result); ``history`` is an earlier conversation (e.g. ``result.messages``)."""
        runner = self._start(user_input, history=history, stream=stream, settings=settings, run_id=run_id)
        async for _ in runner:
            pass
        return runner.result

    def run_sync(
        self,
        user_input: UserInput,
        *,
        history: Sequence[Message] = (),
        stream: bool = False,
        settings: ModelSettings | None = None,
        run_id: str | None = None,
    ) -> RunResult[OutputT]:
        """:meth:`run` for scripts: runs its own event loop. Raises ``RuntimeError`` inside a running loop."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(
                self.run(user_input, history=history, stream=stream, settings=settings, run_id=run_id)
            )
        raise RuntimeError(
            "Agent.run_sync() cannot be called while an event loop is running; use `await agent.run(...)`"
        )

    def _start(
        self,
        user_input: UserInput,
        *,
        history: Sequence[Message],
        stream: bool,
        settings: ModelSettings | None,
        run_id: str | None,
    ) -> AgentLoopRunner[OutputT]:
        merged = self.settings.merged(settings) if self.settings is not None else settings
        cls = type(self)
        return AgentLoopRunner(
            self.model,
            self._build_messages(user_input, history),
            tools=self._tools,
            output_type=self.output_type,
            config=self.config,
            settings=merged,
            stream=stream,
            tracer=self.tracer,
            policy=self._policy,
            prompts=self.prompts,
            agent_name=self._name,
            run_id=run_id,
            preprocess=self._preprocess_messages
            if cls._preprocess_messages is not Agent._preprocess_messages or self.memory is not None
            else None,
            postprocess=(
                self._postprocess_response
                if cls._postprocess_response is not Agent._postprocess_response
                else None
            ),
        )

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
        else:
            supplied.extend(user_input)
        if not supplied:
            raise ValueError("nothing to send: give a user input or messages")
        if not self._system:
            return supplied
        if isinstance(supplied[0], SystemMessage):
            supplied[0] = SystemMessage(self._system)
            return supplied
        return [SystemMessage(self._system), *supplied]

    async def _preprocess_messages(self, messages: list[Message]) -> list[Message]:
        """Override to rewrite the conversation before the first request (guardrails, memory).

        The default applies ``memory`` (when given)."""
        if self.memory is not None:
            return await self.memory.prepare(messages)
        return messages

    async def _postprocess_response(self, response: FinalResponse[OutputT]) -> FinalResponse[OutputT]:
        """Override to check or rewrite the final response (output guardrails); raise to reject it."""
        return response


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


__all__ = ["Agent", "RunResult", "UserInput"]
