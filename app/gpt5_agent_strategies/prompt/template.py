"""The default GPT-5 prompt policies (seed 001 §4.4): kanawa's, named as the strategy's templates.

The texts live in :mod:`kanawa.prompts.policies`, so the strategy and any kanawa agent compose the same
system instruction; this module only gives them the names the seed uses.
"""

from kanawa.prompts.policies import (
    CONTEXT_GATHERING_POLICY,
    PERSISTENCE_POLICY,
    TOOL_PREAMBLE_POLICY,
    UNCERTAINTY_POLICY,
)

__all__ = ["CONTEXT_GATHERING_POLICY", "PERSISTENCE_POLICY", "TOOL_PREAMBLE_POLICY", "UNCERTAINTY_POLICY"]
