"""Entry point of the ``openai_gpt5_responses`` Dify plugin: Dify's daemon runs ``python -m main``.

The SDK reads ``manifest.yaml`` from the working directory, prints the manifest line and then serves
JSON-line requests on stdin. Audit records (``OPENAI_GPT5_AUDIT_LOG=true``, seed 001 §3.9) go to the
plugin's log stream, never to stdout as text, so they cannot corrupt the protocol.
"""

import logging

from dify_plugin import DifyPluginEnv, Plugin
from dify_plugin.config.logger_format import plugin_logger_handler

_audit = logging.getLogger("kanawa.audit")
_audit.addHandler(plugin_logger_handler)
_audit.setLevel(logging.INFO)
_audit.propagate = False

plugin = Plugin(DifyPluginEnv(MAX_REQUEST_TIMEOUT=900))

if __name__ == "__main__":
    plugin.run()
