"""``gpt5_react``: the same engine as ``gpt5_function_calling`` (seed 000 §3: no separate branch).

GPT-5 reasons natively and calls tools through the Responses API, so "ReAct" here is the function-calling
engine under its own name: no ``Thought/Action/Observation`` text protocol and, above all, no ``stop``
words (GPT-5 rejects them; the engine never sends any).
"""

import strategies.gpt5_function_calling as engine

# The module, not the class, is imported: the SDK wants exactly one strategy class per strategy file.


class GPT5ReactStrategy(engine.GPT5FunctionCallingStrategy):
    """ReAct strategy: inherits the whole run from the function-calling strategy."""

    strategy_name = "gpt5_react"
