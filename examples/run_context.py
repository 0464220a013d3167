"""Run context and dependencies, runnable offline: ``python examples/run_context.py``.

Tools and instructions reach the run's dependencies (an order book standing in for a database pool,
and the signed-in customer) through a typed ``RunContext[Deps]`` instead of globals. One agent serves
two customers concurrently; neither run sees the other's customer. ``mypy --strict`` checks this file
(``make typecheck``). Swap ``model=`` for a real model string (``"openai:gpt-5"`` …) to use a provider.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field

from kanawa import Agent, FunctionLLM, RunContext, tool
from kanawa.llm.testing import ModelRequest
from kanawa.types import AssistantMessage, SystemMessage, ToolCall


@dataclass
class OrderBook:
    """Stands in for a database pool: shared by every run, queried per customer."""

    orders: dict[str, dict[str, str]] = field(default_factory=dict)

    async def status(self, customer: str, order_id: str) -> str | None:
        await asyncio.sleep(0)  # a real pool would await the database here
        return self.orders.get(customer, {}).get(order_id)


@dataclass(frozen=True)
class Deps:
    customer: str
    book: OrderBook


@tool
async def order_status(ctx: RunContext[Deps], order_id: str) -> str:
    """The status of one of the signed-in customer's orders.

    Args:
        order_id: the order number, e.g. "A-1"
    """
    status = await ctx.deps.book.status(ctx.deps.customer, order_id)
    return status if status is not None else f"no order {order_id} for this customer"


def stand_in_model(request: ModelRequest) -> AssistantMessage | str:
    """Plays the model offline: asks for the order named last in the question, then reports it."""
    if not request.tool_results:
        order_id = request.last_user_text.rstrip("?").split()[-1]
        arguments = json.dumps({"order_id": order_id})
        return AssistantMessage(tool_calls=(ToolCall("c1", "order_status", arguments),))
    return f"Your order: {request.tool_results[-1].text}."


agent = Agent(
    "support", tools=[order_status], model=FunctionLLM(stand_in_model), output_type=str, deps_type=Deps
)


@agent.add_instructions
def who_is_asking(ctx: RunContext[Deps]) -> str:
    return f"You help {ctx.deps.customer} with their orders only."


async def serve_two_customers(book: OrderBook) -> None:
    aiko, ken = await asyncio.gather(
        agent.arun("Where is A-1?", deps=Deps("aiko", book)),
        agent.arun("Where is A-1?", deps=Deps("ken", book)),
    )
    for result in (aiko, ken):
        system = result.messages[0]
        assert isinstance(system, SystemMessage)
        print(f"{system.content} -> {result.output}")


def main() -> None:
    book = OrderBook({"aiko": {"A-1": "shipped"}, "ken": {"K-7": "packing"}})
    asyncio.run(serve_two_customers(book))
    result = agent.run("And K-7?", deps=Deps("ken", book))
    print(f"run: {result.output} ({result.usage.requests} requests)")


if __name__ == "__main__":
    main()
