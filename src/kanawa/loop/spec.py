"""What a run is made of, frozen before it starts: :class:`RunSpec`.

An :class:`~kanawa.agents.agent.Agent` knows everything about *how* a run goes — its model and
tools, the answer's type, the configuration and policies, the caller's :class:`RunOptions` — before
the first request. That knowledge is one value here, so the runner takes one specification and the
run's input (messages, deps, run id, approvals) instead of two dozen parameters, and a newcomer reads
the whole of a run's setup in one class.

``options`` is kept whole: the runner reads the caller's guardrails, client tools and output cap from
it (:meth:`guardrails_in_force`, :meth:`client_tools`, :meth:`model_settings`), and the run's context
hands it to nested runs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import KW_ONLY, dataclass
from typing import TYPE_CHECKING, Any, Generic

from kanawa.context import RunContext
from kanawa.llm.adapter import LLMAdapter
from kanawa.llm.settings import ModelSettings
from kanawa.loop.approval import ApprovalPolicy
from kanawa.loop.config import AgentConfiguration
from kanawa.loop.events import FinalResponse, OutputT
from kanawa.loop.hooks import RunHooks
from kanawa.loop.options import RunOptions
from kanawa.loop.policies import TerminationPolicy
from kanawa.prompts.library import PromptLibrary
from kanawa.tools.base import Tool
from kanawa.trace.events import Tracer
from kanawa.types import Message, ToolSpec

if TYPE_CHECKING:  # imported when a run has compaction: most runs never load it
    from kanawa.loop.compaction.settings import Compaction

Preprocess = Callable[[list[Message], RunContext[Any]], Awaitable[list[Message]]]
"""Rewrites the conversation once, before the first request (dynamic instructions,
``Agent._preprocess_messages``); it gets the run's context."""

Postprocess = Callable[[FinalResponse[OutputT]], Awaitable[FinalResponse[OutputT]]]
"""Rewrites the final response before it is yielded and recorded (``BaseAgent._postprocess_response``)."""

_DEFAULT_CONFIG = AgentConfiguration()


@dataclass(frozen=True, slots=True)
class RunSpec(Generic[OutputT]):
    """How one run goes (module docstring). Only ``model`` is required.

    Attributes:
        model: the adapter every request of the run goes to.
        tools: the agent's own tools (offered to the model, run by the agent).
        output_type: ``str`` for a plain-text answer; any other type is decoded with pydantic.
        config: the loop's limits and switches (:class:`AgentConfiguration`).
        settings: the model settings of every request (the caller's options are merged in by
            :meth:`model_settings`).
        stream: ask with ``adapter.stream`` and yield its deltas.
        tracer: where the run's trace events go (``None``: untraced).
        policy: what a response means (``None``: the default termination policy of ``config``).
        prompts: the loop's own prompts (``None``: the default library).
        agent_name: the run's agent, in events, traces and the run's context.
        preprocess: rewrites the conversation once before the first request.
        postprocess: rewrites the final response.
        guardrails: the agent's guardrails (the caller's come with ``options``).
        approval_policy: which tool calls wait for a human's approval.
        handoff_path: the agents this run was handed over from.
        options: the caller's :class:`RunOptions`, kept whole.
        compaction: keeps the history under the model's window (``None``: never compacted).
    """

    model: LLMAdapter
    _: KW_ONLY
    tools: Sequence[Tool] = ()
    output_type: type[OutputT] = str  # type: ignore[assignment]  # default applies when OutputT=str
    config: AgentConfiguration = _DEFAULT_CONFIG
    settings: ModelSettings | None = None
    stream: bool = False
    tracer: Tracer | None = None
    policy: TerminationPolicy | None = None
    prompts: PromptLibrary | None = None
    agent_name: str = "agent"
    preprocess: Preprocess | None = None
    postprocess: Postprocess[OutputT] | None = None
    guardrails: Sequence[RunHooks] = ()
    approval_policy: ApprovalPolicy | None = None
    handoff_path: tuple[str, ...] = ()
    options: RunOptions | None = None
    compaction: Compaction | None = None

    def guardrails_in_force(self) -> Sequence[RunHooks]:
        """The agent's guardrails, then the caller's (``options.guardrails``)."""
        options = self.options
        if options is None or not options.guardrails:
            return self.guardrails
        return (*self.guardrails, *options.guardrails)

    def client_tools(self) -> Sequence[ToolSpec]:
        """The tools the caller executes (``options.client_tools``)."""
        return () if self.options is None else self.options.client_tools

    def model_settings(self) -> ModelSettings | None:
        """``settings`` with what the caller's options ask of every request: the output cap, and the
        caller's JSON schema when the run answers in text (its own output type wins otherwise)."""
        options = self.options
        if options is None:
            return self.settings
        return options.settings_for(self.settings, text_answer=self.output_type is str)


__all__ = ["Postprocess", "Preprocess", "RunSpec"]
