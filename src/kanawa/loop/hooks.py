"""``RunHooks``: where guardrails and budgets look into a run (seed 002 §3-4).

The loop calls a hook at each point where something is about to cross a boundary — the user's input
before the first request, each model request before it is sent and its response after, a turn's tool
calls before any of them runs and their results before the model sees them, and the final output
before it is yielded. A hook returns the warnings it has (``GuardrailTripped`` events with
``action="warn"``, yielded and recorded as steps) or raises
:class:`~kanawa.loop.errors.GuardrailViolation` to block: the loop yields the violation's event, then
raises, so nothing after the check runs.

The loop knows only this protocol; :class:`kanawa.agents.guardrails.Guardrail` and
:class:`kanawa.agents.budget.TokenGuard` implement it (DESIGN principle 2: layers import downward).
A run without hooks pays one ``is None`` check per point.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol

from kanawa.context import RunContext
from kanawa.loop.errors import GuardrailViolation
from kanawa.loop.events import FinalResponse, GuardrailTripped
from kanawa.tools.base import ToolResult
from kanawa.types import LLMResponse, Message, ToolCall

Warnings = Sequence[GuardrailTripped]


class RunHooks(Protocol):
    """The checks one run makes; each returns warnings or raises ``GuardrailViolation``.

    A hook may also have ``blocks_output = True`` (it can block the final output): a streaming run
    then holds each response's deltas until it knows the response is not a blocked answer — the
    answer's text is shown only once it passed the check, so a blocked answer never reaches the
    client token by token. Deltas of responses that call tools are released as soon as they end.
    """

    async def check_input(self, messages: Sequence[Message], context: RunContext[Any]) -> Warnings:
        """Before the first request: the conversation as it will be sent."""
        ...

    async def before_request(self, step: int, context: RunContext[Any]) -> Warnings:
        """Before each model request (budgets block here, before the call is sent)."""
        ...

    async def after_response(self, step: int, response: LLMResponse, context: RunContext[Any]) -> Warnings:
        """After each model response, before anything in it is acted on (budgets count it here)."""
        ...

    async def before_tools(self, step: int, calls: Sequence[ToolCall], context: RunContext[Any]) -> Warnings:
        """Before any call of a turn runs."""
        ...

    async def after_tools(
        self, step: int, results: Sequence[ToolResult], context: RunContext[Any]
    ) -> Warnings:
        """After a turn's tools ran, before their results reach the model."""
        ...

    async def check_output(self, final: FinalResponse[Any], context: RunContext[Any]) -> Warnings:
        """Before the final response is yielded and recorded."""
        ...


class HookChain:
    """Several :class:`RunHooks` as one, called in order; warnings are concatenated and the first
    block ends the check (later hooks do not run)."""

    __slots__ = ("_hooks", "blocks_output")

    def __init__(self, hooks: Sequence[RunHooks]) -> None:
        self._hooks = tuple(hooks)
        self.blocks_output = any(getattr(hook, "blocks_output", False) for hook in self._hooks)

    @property
    def hooks(self) -> tuple[RunHooks, ...]:
        return self._hooks

    async def _collect(self, check: Callable[[RunHooks], Awaitable[Warnings]]) -> Warnings:
        """Run ``check`` on every hook in order; a block keeps the warnings of the hooks before it."""
        warnings: list[GuardrailTripped] = []
        for hook in self._hooks:
            try:
                warnings.extend(await check(hook))
            except GuardrailViolation as blocked:
                blocked.preceding = (*warnings, *blocked.preceding)
                raise
        return warnings

    async def check_input(self, messages: Sequence[Message], context: RunContext[Any]) -> Warnings:
        return await self._collect(lambda hook: hook.check_input(messages, context))

    async def before_request(self, step: int, context: RunContext[Any]) -> Warnings:
        return await self._collect(lambda hook: hook.before_request(step, context))

    async def after_response(self, step: int, response: LLMResponse, context: RunContext[Any]) -> Warnings:
        return await self._collect(lambda hook: hook.after_response(step, response, context))

    async def before_tools(self, step: int, calls: Sequence[ToolCall], context: RunContext[Any]) -> Warnings:
        return await self._collect(lambda hook: hook.before_tools(step, calls, context))

    async def after_tools(
        self, step: int, results: Sequence[ToolResult], context: RunContext[Any]
    ) -> Warnings:
        return await self._collect(lambda hook: hook.after_tools(step, results, context))

    async def check_output(self, final: FinalResponse[Any], context: RunContext[Any]) -> Warnings:
        return await self._collect(lambda hook: hook.check_output(final, context))


def combine_hooks(hooks: Sequence[RunHooks]) -> RunHooks | None:
    """``None`` for no hooks (the loop then skips every check), the hook itself for one, else a chain."""
    if not hooks:
        return None
    if len(hooks) == 1:
        return hooks[0]
    return HookChain(hooks)


__all__ = ["HookChain", "RunHooks", "Warnings", "combine_hooks"]
