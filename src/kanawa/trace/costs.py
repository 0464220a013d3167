"""What one model call of a trace cost, from the fields its ``llm_end`` record already carries.

An ``llm_end`` record names the model that answered and its usage (``tok_prompt``, ``tok_completion``,
and in ``data`` the ``reasoning_tokens``, ``cached_tokens`` and ``cache_write_tokens`` among them) —
all a price needs (:mod:`kanawa.llm.pricing`). Pricing it where it is shown, not where it is traced,
keeps the trace format free of prices that change, and lets a trace written before costs were shown
be priced too.
A model without a known price has no cost (``None``, shown as "–"), never ``0``.

A failed call (``llm_error``) carries no usage: on a priced model it cost nothing, on a model without
a price its cost is unknown — so the total of a trace (:func:`trace_cost`) is unknown as soon as any
call, answered or failed, went to a model without a price (never a partial sum, never a made-up zero).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kanawa.llm.pricing import Quote, quote_of
from kanawa.trace.records import TraceRecord
from kanawa.types import JsonValue, Usage

_PRICED_EVENTS = frozenset({"llm_end", "llm_error"})


def _count(value: JsonValue | None) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def llm_call_cost(
    model: str | None, tok_prompt: int | None, tok_completion: int | None, data: Mapping[str, JsonValue]
) -> float | None:
    """USD for one model call's usage at the price of ``model`` (``None``: no known price)."""
    quote = llm_call_quote(model, tok_prompt, tok_completion, data)
    return None if quote is None else quote.cost_usd


def llm_call_quote(
    model: str | None, tok_prompt: int | None, tok_completion: int | None, data: Mapping[str, JsonValue]
) -> Quote | None:
    """One model call's cost with its price's source (``None``: no known price)."""
    if not model:
        return None
    usage = Usage(
        input_tokens=_count(tok_prompt),
        output_tokens=_count(tok_completion),
        reasoning_tokens=_count(data.get("reasoning_tokens")),
        cached_tokens=_count(data.get("cached_tokens")),
        cache_write_tokens=_count(data.get("cache_write_tokens")),
        requests=1,
    )
    return quote_of(model, usage)


def with_cost(record: dict[str, JsonValue]) -> dict[str, JsonValue]:
    """``record`` (a serialized trace record) with ``cost_usd`` added when it is a model call's end
    (``llm_end``, or ``llm_error``: ``0`` on a priced model, ``None`` on one without a price), and
    ``price_source``: where the price came from (``genai-prices 0.2.3``, ``override, as of
    2026-01-01``; ``None`` without a price)."""
    if record.get("event") in _PRICED_EVENTS:
        model = record.get("model")
        data = record.get("data")
        quote = llm_call_quote(
            model if isinstance(model, str) else None,
            _count(record.get("tok_prompt")),
            _count(record.get("tok_completion")),
            data if isinstance(data, dict) else {},
        )
        record["cost_usd"] = None if quote is None else quote.cost_usd
        record["price_source"] = None if quote is None else str(quote.source)
    return record


def trace_cost(records: Sequence[TraceRecord]) -> float | None:
    """USD for every model call of ``records``; ``None`` when there is none or when any call's model
    has no known price."""
    total = 0.0
    calls = 0
    for record in records:
        if record.event not in _PRICED_EVENTS:
            continue
        cost = llm_call_cost(record.model, record.tok_prompt, record.tok_completion, record.data)
        if cost is None:
            return None
        total += cost
        calls += 1
    return total if calls else None


__all__ = ["llm_call_cost", "llm_call_quote", "trace_cost", "with_cost"]
