"""``gpt5_function_calling``: GPT-5 tool calling on kanawa's agent loop (seed 000 §3, seed 001 §4.3–§4.8).

One run: :class:`GPT5FunctionCallingParams` binds the inputs; the system message is composed from the
instruction, the prompt policies and the context; Dify's history and the query follow. kanawa's
``AgentLoopRunner`` then runs rounds — a model request through :class:`~internal.flow.DifyModelAdapter`,
the tool calls through kanawa's fail-closed ``ToolInvoker``, each result added as a tool message — until
the model answers without tools or ``maximum_iterations`` requests were made (the last one offers no
tools, so the run still ends with an answer). The strategy streams what the user should see, a log per
round and per tool call, files the tools produced, and finally the ``execution_metadata`` JSON message.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Generator, Mapping
from typing import Any

from dify_plugin.core.entities.invocation import InvokeType
from dify_plugin.entities.agent import AgentInvokeMessage
from dify_plugin.entities.provider_config import LogMetadata
from dify_plugin.entities.tool import ToolInvokeMessage
from dify_plugin.interfaces.agent import AgentModelConfig, AgentStrategy, ToolEntity
from internal.flow import (
    DifyModelAdapter,
    round_thought,
    should_emit_response_text,
    to_kanawa_messages,
    visible_text,
)
from internal.loop import HubBridge, iteration_config, run_on_native_thread
from internal.policy import compose_system_prompt, retriever_resources
from internal.tooling import ToolOutput, dify_tool, summarize_tool_messages
from pydantic import BaseModel, ConfigDict, Field

from kanawa.llm.openai.credentials import coerce_bool
from kanawa.loop import AgentLoopRunner, FinalResponse, RunSpec, ToolCallStep, ToolResultStep
from kanawa.loop.config import AgentConfiguration
from kanawa.loop.errors import MaxStepsExceeded
from kanawa.tools import Tool
from kanawa.types import Message, SystemMessage, TextDelta, Usage, UserMessage

logger = logging.getLogger(__name__)

OPAQUE_BODY_MINIMUM_HOST = "Dify 1.10.0 (dify-plugin 0.8.0 or later)"
_warned_old_host = False


class GPT5FunctionCallingParams(BaseModel):
    """The strategy parameters of seed 001 §4.3."""

    model_config = ConfigDict(protected_namespaces=(), arbitrary_types_allowed=True)

    model: AgentModelConfig
    tools: list[ToolEntity] | None = Field(default_factory=list)
    instruction: str = ""
    prompt_policy_overrides: str | None = None
    context: Any = None
    query: str = ""
    maximum_iterations: int | float = 6
    emit_intermediate_thoughts: Any = True


class GPT5FunctionCallingStrategy(AgentStrategy):
    """Function-calling strategy (module docstring)."""

    strategy_name = "gpt5_function_calling"

    def _invoke(self, parameters: dict[str, Any]) -> Generator[AgentInvokeMessage, None, None]:
        params = GPT5FunctionCallingParams(**parameters)
        config = iteration_config(params.maximum_iterations)
        emit_thoughts = coerce_bool(params.emit_intermediate_thoughts, field="emit_intermediate_thoughts")
        system = compose_system_prompt(params.instruction, params.prompt_policy_overrides, params.context)
        history = to_kanawa_messages(params.model.history_prompt_messages)
        messages: list[Message] = [SystemMessage(system), *history, UserMessage(params.query)]
        entities = list(params.tools or [])
        bridge = HubBridge()
        missing: list[bool] = []

        def on_missing() -> None:
            missing.append(True)

        model_config = params.model.model_dump(mode="json", exclude={"entity", "history_prompt_messages"})
        adapter = DifyModelAdapter(
            params.model.provider,
            params.model.model,
            model_config,
            lambda request: bridge.iterate(
                lambda: self.session.model.llm._backwards_invoke(InvokeType.LLM, dict, dict(request))
            ),
            on_missing_opaque_body=on_missing if params.model.provider.endswith("openai_gpt5") else None,
        )
        outputs: dict[str, ToolOutput] = {}
        tools: list[Tool] = []
        for entity in entities:
            try:
                prompt = self._convert_tool_to_prompt_message_tool(entity)
            except Exception:  # a stale or deleted tool: leave it out, as the SDK's helper does
                logger.warning("tool %r left out: its schema could not be read", entity.identity.name)
                continue
            tools.append(dify_tool(entity, prompt, self._tool_caller(bridge, entity, outputs)))
        cited = retriever_resources(params.context)
        if cited:
            yield self.create_retriever_resource_message(
                retriever_resources=[
                    ToolInvokeMessage.RetrieverResourceMessage.RetrieverResource(**resource)
                    for resource in cited
                ],
                context="\n\n".join(str(resource["content"]) for resource in cited),
            )
        yield from self._drive(adapter, messages, tools, emit_thoughts, outputs, missing, config)

    # ------------------------------------------------------------------ tools
    def _tool_caller(
        self, bridge: HubBridge, entity: ToolEntity, outputs: dict[str, ToolOutput]
    ) -> Callable[[Mapping[str, Any]], ToolOutput]:
        def invoke(arguments: Mapping[str, Any]) -> ToolOutput:
            def run() -> list[ToolInvokeMessage]:
                return list(
                    self.session.tool.invoke(
                        provider_type=entity.provider_type,
                        provider=entity.identity.provider,
                        tool_name=entity.identity.name,
                        parameters=dict(arguments),
                        credential_id=entity.credential_id,
                    )
                )

            output = summarize_tool_messages(bridge.call(run))
            outputs.setdefault(entity.identity.name, ToolOutput()).user_messages.extend(output.user_messages)
            return output

        return invoke

    # ------------------------------------------------------------------- run
    def _drive(
        self,
        adapter: DifyModelAdapter,
        messages: list[Message],
        tools: list[Tool],
        emit_thoughts: bool,
        outputs: dict[str, ToolOutput],
        missing: list[bool],
        config: AgentConfiguration,
    ) -> Generator[AgentInvokeMessage, None, None]:
        spec: RunSpec[str] = RunSpec(
            adapter, tools=tools, config=config, stream=True, agent_name=self.strategy_name
        )
        runner: AgentLoopRunner[str] = AgentLoopRunner(spec, messages)

        exhausted: list[MaxStepsExceeded] = []

        async def body(emit: Callable[[object], None]) -> None:
            try:
                async for event in runner:
                    emit(event)
            except MaxStepsExceeded as exc:  # the last allowed round still called tools
                exhausted.append(exc)

        rounds: dict[int, AgentInvokeMessage] = {}
        closed: set[int] = set()
        round_text: dict[int, list[str]] = {}
        tool_names: dict[int, list[str]] = {}
        current = 0
        started = time.time()

        def open_round(step: int) -> Generator[AgentInvokeMessage, None, None]:
            nonlocal current
            if step in rounds or step in closed:
                return
            yield from close_round()
            current = step
            rounds[step] = self.create_log_message(
                label=f"ROUND {step}",
                data={},
                metadata={LogMetadata.STARTED_AT: time.perf_counter()},
                status=ToolInvokeMessage.LogMessage.LogStatus.START,
            )
            round_text[step] = []
            tool_names[step] = []
            yield rounds[step]

        def close_round() -> Generator[AgentInvokeMessage, None, None]:
            if current not in rounds:
                return
            closed.add(current)
            text = "".join(round_text[current])
            names = tool_names[current]
            if names and emit_thoughts:
                fallback = round_thought(text, names)
                if fallback:
                    yield self.create_text_message(fallback)
            yield self.create_log_message(
                label=f"{adapter.model} Thought",
                data={"output": text, "tool_calls": names},
                parent=rounds[current],
            )
            yield self.finish_log_message(
                log=rounds[current],
                data={"output": text, "tool_calls": names},
                metadata={LogMetadata.FINISHED_AT: time.perf_counter()},
            )
            rounds.pop(current)

        for event in run_on_native_thread(body):
            if isinstance(event, TextDelta):
                yield from open_round(runner.step)  # deltas belong to the request in flight
                round_text[current].append(event.text)
                if emit_thoughts:
                    yield self.create_text_message(event.text)
            elif isinstance(event, ToolCallStep):
                yield from open_round(event.step)
                tool_names[event.step].append(event.call.name)
            elif isinstance(event, ToolResultStep):
                result = event.result
                yield self.create_log_message(
                    label=f"CALL {result.name}",
                    data={
                        "tool_name": result.name,
                        "tool_call_id": result.call_id,
                        "tool_response": "".join(getattr(p, "text", "") for p in result.content),
                        "error": result.error_kind.value if result.error_kind else None,
                    },
                    parent=rounds.get(event.step),
                    status=(
                        ToolInvokeMessage.LogMessage.LogStatus.ERROR
                        if result.is_error
                        else ToolInvokeMessage.LogMessage.LogStatus.SUCCESS
                    ),
                )
                produced = outputs.pop(result.name, None)
                if produced is not None:
                    yield from produced.user_messages
            elif isinstance(event, FinalResponse):
                yield from open_round(event.step)
                # the final answer has no tool calls, so it is always shown (seed 000 §5); with
                # emit_intermediate_thoughts=true it has already streamed as it arrived
                if not emit_thoughts and should_emit_response_text(
                    has_tool_calls=False, emit_intermediate_thoughts=False, is_final_iteration=True
                ):
                    shown = visible_text(event.text, emit_intermediate_thoughts=False).strip()
                    if shown:
                        yield self.create_text_message(shown)
        if exhausted:
            # the final iteration's text is the answer there is: shown even though it called tools
            # (seed 000 §5: with emit_intermediate_thoughts=false, only the final iteration is shown)
            last = "".join(round_text.get(current, []))
            if not emit_thoughts and should_emit_response_text(
                has_tool_calls=True, emit_intermediate_thoughts=False, is_final_iteration=True
            ):
                shown = visible_text(last, emit_intermediate_thoughts=False).strip()
                if shown:
                    yield self.create_text_message(shown)
        yield from close_round()
        partial = exhausted[0].partial_result if exhausted else runner.result
        usage = partial.usage if partial is not None else Usage()
        termination = (
            "max_steps_exceeded" if exhausted or partial is None else str(partial.termination_reason)
        )
        if missing:
            yield from self._old_host_notice()
        yield self.create_json_message(
            {
                "execution_metadata": {
                    "strategy": self.strategy_name,
                    "iterations": runner.step,
                    "maximum_iterations": config.max_steps,
                    "termination_reason": termination,
                    "tool_calls": sum(len(v) for v in tool_names.values()),
                    "prompt_tokens": usage.input_tokens,
                    "completion_tokens": usage.output_tokens,
                    "total_tokens": usage.input_tokens + usage.output_tokens,
                    "llm_requests": adapter.requests,
                    "opaque_body_relayed": not missing,
                    "elapsed_seconds": round(time.time() - started, 3),
                }
            }
        )

    def _old_host_notice(self) -> Generator[AgentInvokeMessage, None, None]:
        global _warned_old_host
        text = (
            "the host did not relay opaque_body: GPT-5 reasoning is not replayed between rounds "
            f"(needs {OPAQUE_BODY_MINIMUM_HOST})"
        )
        if not _warned_old_host:
            _warned_old_host = True
            logger.warning(text)
        yield self.create_log_message(label="opaque_body not relayed", data={"message": text})
