"""Adapters between Dify's model-plugin types and kanawa's OpenAI Responses pieces (seed 001 §3).

One ``invoke_llm`` request: :mod:`.credentials` turns the provider form into
:class:`~kanawa.llm.openai.credentials.OpenAICredentials`; :mod:`.payloads` turns the model parameters
into :class:`~kanawa.llm.settings.ModelSettings` and Dify tools into kanawa ``ToolSpec``;
:mod:`.messages` turns Dify prompt messages into kanawa messages (restoring replayed reasoning from
``opaque_body``) and kanawa's answer back into Dify's result; :mod:`.errors` maps failures onto Dify's
invoke errors. The request body itself is always kanawa's builder — nothing here writes JSON for the API.
"""
