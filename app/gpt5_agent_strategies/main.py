"""Entry point of the ``gpt5_agent_strategies`` Dify plugin: Dify's daemon runs ``python -m main``."""

from dify_plugin import DifyPluginEnv, Plugin

plugin = Plugin(DifyPluginEnv(MAX_REQUEST_TIMEOUT=1200))

if __name__ == "__main__":
    plugin.run()
