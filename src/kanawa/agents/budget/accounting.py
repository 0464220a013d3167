"""Token accounting of one model response (seed 002 §3-1 "トークン計算"): what it adds to a budget.

The seed counts "system + messages + tool I/O". A request's input is exactly that — the system
message, the conversation, the tool calls the model made and the tool results it was sent — and the
provider's reported ``input_tokens`` count it; the model's answer (text, reasoning, the arguments of
the tool calls it asks for) is ``output_tokens``. So a response is charged its reported input +
output, and nothing is counted twice: a tool's result is paid for once, as input of the request that
carries it.

When a response reports no usage (a server that sends none, a stream cut before its usage chunk), the
missing side is estimated offline with :mod:`kanawa.llm.tokens` (the seed's ``count_tokens(system +
messages)``): the prompt that was sent (the conversation before this response) for input, the
response's message for output. Estimates are marked (``Charge.estimated``).

Cost: the response's model (``response.model``, else the run's ``model_name``) priced with the
guard's :class:`~kanawa.llm.pricing.PriceTable`; an unpriced model adds no cost and is counted as
unpriced, never as free.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kanawa.agents.budget.limits import Charge, usd_to_nano
from kanawa.context import RunContext
from kanawa.llm.pricing import PriceTable
from kanawa.llm.tokens import count_message_tokens, message_tokens, text_counter
from kanawa.types import LLMResponse, Message, Usage


def charge_for(response: LLMResponse, context: RunContext[Any], prices: PriceTable) -> Charge:
    """What ``response`` (just appended to ``context.messages`` by the loop) adds to the session."""
    usage = response.usage
    model = response.model or context.model_name
    input_tokens = usage.input_tokens
    output_tokens = usage.output_tokens
    estimated = False
    if input_tokens <= 0:
        input_tokens = count_message_tokens(_prompt_of(response, context.messages), model=model)
        estimated = True
    if output_tokens <= 0:
        output_tokens = message_tokens(response.message, text_counter(model))
        estimated = True
    counted = Usage(
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        reasoning_tokens=min(usage.reasoning_tokens, output_tokens),
        cached_tokens=min(usage.cached_tokens, input_tokens),
        cache_write_tokens=min(usage.cache_write_tokens, input_tokens),
        requests=1,
    )
    cost = prices.cost(model, counted)
    return Charge(
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cost_nano_usd=0 if cost is None else usd_to_nano(cost),
        unpriced=cost is None,
        estimated=estimated,
    )


def _prompt_of(response: LLMResponse, messages: Sequence[Message]) -> Sequence[Message]:
    """The conversation as it was sent: everything before the response's own message (the loop
    appends it before the budget sees the response)."""
    if messages and messages[-1] is response.message:
        return messages[:-1]
    return messages


__all__ = ["charge_for"]
