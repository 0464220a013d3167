"""One-line explanations of why a model cannot be used here, and what to configure.

``kanawa run`` / ``kanawa demo`` print this line (and exit with code 2) instead of a traceback when a
provider is unavailable: an unknown model-string prefix, a missing SDK extra, a missing or rejected
API key, or any other :class:`~kanawa.llm.errors.LLMError` / :class:`~kanawa.loop.errors.AgentError`.
The line never contains a key: it names the environment variable only, and the whole line goes
through :func:`kanawa.secrets.mask` before it is printed.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from kanawa.llm.errors import LLMAuthError, LLMError
from kanawa.llm.models import PROVIDERS, parse_model_string
from kanawa.loop.errors import AgentError, LLMCallFailed
from kanawa.secrets import mask


def _env_key(spec: str) -> str | None:
    try:
        parsed = parse_model_string(spec)
    except LLMError:
        return None
    entry = PROVIDERS.get(parsed.provider)
    return entry.env_key if entry is not None else None


def setup_hint(spec: str, error: LLMError | AgentError, *, environ: Mapping[str, str] | None = None) -> str:
    """``kanawa: cannot use model 'openai:gpt-5': … — set OPENAI_API_KEY`` as one line.

    The hint is added only when the error's own message does not already say what to do.
    """
    env = os.environ if environ is None else environ
    cause: LLMError | AgentError = error.error if isinstance(error, LLMCallFailed) else error
    message = " ".join(str(error).split())
    hint = ""
    env_key = _env_key(spec)
    if isinstance(cause, LLMAuthError) and env_key:
        hint = f"check {env_key}" if env.get(env_key) else f"set {env_key}"
    if hint and env_key and env_key in message:
        hint = ""
    what = "model run failed" if isinstance(error, AgentError) else f"cannot use model {spec!r}"
    return mask(f"kanawa: {what}: {message}" + (f" — {hint}" if hint else ""))


__all__ = ["setup_hint"]
