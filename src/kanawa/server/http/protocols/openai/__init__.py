"""The OpenAI-compatible API over kanawa's runs: Responses (:mod:`.responses`, its events
:mod:`.response_events`), Chat Completions (:mod:`.chat`), the model list (:mod:`.models`), and
errors in OpenAI's shape (:mod:`.errors`)."""

__all__: list[str] = []
