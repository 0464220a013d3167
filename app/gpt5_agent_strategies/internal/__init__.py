"""The engine behind both strategies: Dify's model and tools adapted to kanawa's agent loop (seed 000).

One ``invoke_agent_strategy``: :mod:`.policy` composes the system instruction; :mod:`.flow` adapts the
selected Dify model into a kanawa ``LLMAdapter`` (backwards ``llm`` invocations, ``opaque_body`` kept)
and decides what the user sees; :mod:`.tooling` turns the selected Dify tools into kanawa tools
(backwards ``tool`` invocations, files through the ``/files`` sandbox) run by kanawa's fail-closed
``ToolInvoker``; :mod:`.loop` runs ``kanawa.loop.AgentLoopRunner`` with
``AgentConfiguration(max_steps=maximum_iterations, on_max_steps="finalize")`` on its own event loop.
"""
