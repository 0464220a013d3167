"""One module per wire protocol, each a thin adapter from a run's chunks to its wire format:
kanawa's own SSE chunks (:mod:`.kanawa_sse`), OpenAI Responses (:mod:`.openai_responses`), OpenAI
Chat Completions (:mod:`.openai_chat`) and the model list (:mod:`.openai_models`); errors in OpenAI's
shape (:mod:`.openai_errors`)."""

__all__: list[str] = []
