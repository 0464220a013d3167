"""The ``gpt5_agent`` strategy provider: no credentials of its own (the model and tools carry theirs)."""

from dify_plugin.interfaces.agent import AgentProvider


class GPT5AgentProvider(AgentProvider):
    """Always valid: Dify checks the selected model's and tools' credentials itself."""
