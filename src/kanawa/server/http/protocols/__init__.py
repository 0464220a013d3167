"""Wire protocols over kanawa's runs, each a thin adapter from a run's chunks to its format:
OpenAI Responses (:mod:`.openai_responses`), OpenAI Chat Completions (:mod:`.openai_chat`) and the
model list (:mod:`.openai_models`); errors in OpenAI's shape (:mod:`.openai_errors`)."""
