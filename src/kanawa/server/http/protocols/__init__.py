"""One module or folder per wire protocol, each a thin adapter from a run's chunks to its wire format:
kanawa's own SSE chunks (:mod:`.kanawa_sse`), the OpenAI-compatible API (:mod:`.openai`: Responses,
Chat Completions, the model list, errors in OpenAI's shape), AG-UI (:mod:`.agui`), the Vercel AI SDK's
chat (:mod:`.ai_sdk`), A2A (:mod:`.a2a`) and MCP (``mcp_*``). What they share: how a run is opened
(:mod:`.opening`), the one table of refusals (:mod:`.errors`), a response's part of a run and its stream
(:mod:`.run_parts`), and the conversation, tool and JSON inputs every chat protocol takes
(:mod:`.inputs`)."""

__all__: list[str] = []
